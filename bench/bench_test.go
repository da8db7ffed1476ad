package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dgraph-io/ristretto/v2"
	"github.com/maypok86/otter/v2"
	"go.uber.org/zap"

	"github.com/tiercache/tiercache/bench/internal/load"
	"github.com/tiercache/tiercache/flusher"
	"github.com/tiercache/tiercache/numa"
	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu"
	"github.com/tiercache/tiercache/policy"
	"github.com/tiercache/tiercache/tier"
)

func scale() float64 {
	if s, err := strconv.ParseFloat(os.Getenv("TIERCACHE_BENCH_SCALE"), 64); err == nil && s > 0 {
		return s
	}
	return 1
}

const valueBytes = 256

func keyOf(i int) []byte { return []byte(fmt.Sprintf("key:%08d", i)) }

// countingNS counts device submissions (Do calls) of a namespace.
type countingNS struct {
	nvmekv.Namespace
	n atomic.Int64
}

func (c *countingNS) Do(ctx context.Context, ops ...*nvmekv.Op) error {
	c.n.Add(1)
	return c.Namespace.Do(ctx, ops...)
}

// openTier opens a tiercache with hot+warm = dram bytes (1/4 hot) and, if
// withCold, an emulated cold store in a temporary directory.
func openTier(b *testing.B, dram int64, withCold, promote bool) (*tier.Cache, *countingNS) {
	b.Helper()
	seg := int((dram * 3 / 4 / 16) &^ 4095)
	seg = max(min(seg, 1<<20), 64<<10)
	o := tier.Options{
		HotBytes:    dram / 4,
		HotMaxValue: 64 << 10,
		WarmConfig: tier.WarmConfig{WarmBytes: dram * 3 / 4, WarmSegmentBytes: seg,
			WarmArena: numa.ArenaOptions{Node: numa.Unbound}},
		Flusher:       flusher.Options{QueueItems: 1 << 16, QueueBytes: 256 << 20},
		Promotion:     policy.PromotionOptions{Disabled: !promote},
		DemoteAll:     !promote, // populate-based benchmarks: keys written once still fill warm
		DemoteQueue:   1 << 20,  // and none is dropped while populating
		MGetColdBatch: 1000,
		Logger:        benchLogger(),
	}
	var cns *countingNS
	if withCold {
		dir := b.TempDir()
		o.OpenCold = func() (tier.Cold, error) {
			ns, err := emu.Open(emu.Options{Path: dir + "/cold.kv", Capacity: 2 << 30, ReadSlots: 1024, RingEntries: 2048})
			if err != nil {
				return nil, err
			}
			cns = &countingNS{Namespace: ns}
			kv, err := nvmekv.NewKV(cns, nvmekv.KVOptions{KeepExpired: true})
			if err != nil {
				return nil, err
			}
			return tier.NewColdKV(kv, "emulated:"+dir, false, 8<<20), nil
		}
	}
	c, err := tier.Open(o)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c, cns
}

type cacheUnderTest struct {
	get func(k []byte) bool
	set func(k, v []byte)
}

func BenchmarkHitRatio(b *testing.B) {
	s := scale()
	nkeys := int(1_000_000 * s)
	nreq := int(10_000_000 * s)
	keys := make([][]byte, nkeys)
	for i := range keys {
		keys[i] = keyOf(i)
	}
	// DRAM budget: 10% of the key space's bytes.
	dram := int64(float64(nkeys*(valueBytes+len(keys[0]))) * 0.10)
	val := make([]byte, valueBytes)
	for _, theta := range []float64{0.9, 0.99} {
		trace := make([]int32, nreq)
		z := load.NewZipf(rand.New(rand.NewPCG(42, uint64(theta*100))), nkeys, theta)
		for i := range trace {
			trace[i] = int32(z.Next())
		}
		for _, name := range []string{"ristretto", "otter", "tiercache-dram", "tiercache"} {
			b.Run(fmt.Sprintf("zipf=%.2f/%s", theta, name), func(b *testing.B) {
				for b.Loop() {
					var tc *tier.Cache
					var cut cacheUnderTest
					switch name {
					case "ristretto":
						rc, err := ristretto.NewCache(&ristretto.Config[string, []byte]{
							NumCounters: dram / valueBytes * 10, MaxCost: dram, BufferItems: 64, IgnoreInternalCost: true})
						if err != nil {
							b.Fatal(err)
						}
						cut = cacheUnderTest{
							get: func(k []byte) bool { _, ok := rc.Get(string(k)); return ok },
							set: func(k, v []byte) { rc.Set(string(k), v, int64(len(k)+len(v))) },
						}
						defer rc.Close()
					case "otter":
						oc := otter.Must(&otter.Options[string, []byte]{MaximumWeight: uint64(dram),
							Weigher: func(k string, v []byte) uint32 { return uint32(len(k) + len(v)) }})
						cut = cacheUnderTest{
							get: func(k []byte) bool { _, ok := oc.GetIfPresent(string(k)); return ok },
							set: func(k, v []byte) { oc.Set(string(k), v) },
						}
					default:
						tc, _ = openTier(b, dram, name == "tiercache", true)
						var dst []byte
						cut = cacheUnderTest{
							get: func(k []byte) bool {
								v, ok, _ := tc.Get(dst[:0], k)
								dst = v
								return ok
							},
							set: func(k, v []byte) { tc.Set(k, v, tier.SetOptions{}) },
						}
					}
					hits := 0
					start := time.Now()
					for _, i := range trace {
						if cut.get(keys[i]) {
							hits++
						} else {
							cut.set(keys[i], val)
						}
					}
					el := time.Since(start)
					b.ReportMetric(100*float64(hits)/float64(len(trace)), "hit%")
					b.ReportMetric(float64(len(trace))/el.Seconds(), "req/s")
					if tc != nil {
						st := tc.Stats()
						for _, t := range st.Tiers {
							b.ReportMetric(100*float64(t.Hits)/float64(len(trace)), t.Name+"-hit%")
						}
						b.Logf("%s: %+v", name, st)
					}
				}
			})
		}
	}
}

// populate fills c with n keys of size bytes and returns the keys found in
// each tier afterwards.
func populate(b *testing.B, c *tier.Cache, n, size int) map[string][][]byte {
	b.Helper()
	v := make([]byte, size)
	for i := 0; i < n; i++ {
		if _, err := c.Set(keyOf(i), v, tier.SetOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < 2000; i++ {
		st := c.Stats()
		if st.InTransit == 0 && st.Flusher.Queue == 0 && st.Flusher.InFlight == 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if st := c.Stats(); st.Lost+st.DemoteDrops+st.Flusher.Drops > 0 {
		b.Logf("populate dropped copies: %+v", st)
	}
	by := map[string][][]byte{}
	for i := 0; i < n; i++ {
		w := c.Where(keyOf(i))
		by[w] = append(by[w], keyOf(i))
	}
	return by
}

func BenchmarkGetHit(b *testing.B) {
	c, _ := openTier(b, 16<<20, true, false)
	by := populate(b, c, 100_000, 512)
	for _, t := range []string{"hot", "warm", "cold"} {
		keys := by[t]
		b.Run("tier="+t, func(b *testing.B) {
			if len(keys) == 0 {
				b.Skipf("no key ended up in %s", t)
			}
			b.ReportAllocs()
			b.SetBytes(512)
			var dst []byte
			i := 0
			for b.Loop() {
				v, ok, _ := c.Get(dst[:0], keys[i%len(keys)])
				if !ok {
					b.Fatalf("miss on a %s key", t)
				}
				dst = v
				i++
			}
		})
	}
	keys := by["hot"]
	b.Run("peer=ristretto", func(b *testing.B) {
		rc, _ := ristretto.NewCache(&ristretto.Config[string, []byte]{NumCounters: 1e6, MaxCost: 64 << 20, BufferItems: 64})
		defer rc.Close()
		v := make([]byte, 512)
		for _, k := range keys {
			rc.Set(string(k), v, 1)
		}
		rc.Wait()
		b.ReportAllocs()
		b.SetBytes(512)
		var dst []byte
		i := 0
		for b.Loop() {
			got, _ := rc.Get(string(keys[i%len(keys)]))
			dst = append(dst[:0], got...) // same copy-out as tier.Get
			i++
		}
	})
	b.Run("peer=otter", func(b *testing.B) {
		oc := otter.Must(&otter.Options[string, []byte]{MaximumSize: 1 << 20})
		v := make([]byte, 512)
		for _, k := range keys {
			oc.Set(string(k), v)
		}
		b.ReportAllocs()
		b.SetBytes(512)
		var dst []byte
		i := 0
		for b.Loop() {
			got, _ := oc.GetIfPresent(string(keys[i%len(keys)]))
			dst = append(dst[:0], got...)
			i++
		}
	})
}

func BenchmarkMGetCold(b *testing.B) {
	c, cns := openTier(b, 16<<20, true, false)
	by := populate(b, c, 100_000, 512)
	mem := append(append([][]byte{}, by["hot"]...), by["warm"]...)
	if len(mem) < 700 || len(by["cold"]) < 300 {
		b.Fatalf("population gave %d memory and %d cold keys: %+v", len(mem), len(by["cold"]), c.Stats())
	}
	keys := append(append([][]byte{}, mem[:700]...), by["cold"][:300]...)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	before := cns.n.Load()
	n := 0
	for b.Loop() {
		vs, err := c.MGet(keys)
		if err != nil {
			b.Fatal(err)
		}
		for i, v := range vs {
			if v == nil {
				v2, ok2, _ := c.Get(nil, keys[i])
				b.Fatalf("MGet missed key %s (where now %q, Get %v %d): %+v", keys[i], c.Where(keys[i]), ok2, len(v2), c.Stats())
			}
		}
		n++
	}
	b.ReportMetric(float64(cns.n.Load()-before)/float64(n), "submissions/op")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(n), "µs/mget")
}

func benchLogger() *zap.Logger {
	if os.Getenv("TIERCACHE_BENCH_LOG") != "" {
		return zap.NewExample()
	}
	return zap.NewNop()
}

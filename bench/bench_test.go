package bench

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dgraph-io/ristretto/v2"
	"github.com/maypok86/otter/v2"
	"go.uber.org/zap"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/coldstore"
	"github.com/tiercache/tiercache/flusher"
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

// countingNS counts device submissions (Do calls) of a namespace.
type countingNS struct {
	nvmekv.Namespace
	n atomic.Int64
}

func (c *countingNS) Do(ctx context.Context, ops ...*nvmekv.Op) error {
	c.n.Add(1)
	return c.Namespace.Do(ctx, ops...)
}

// openTier opens a tiercache for the populate-based benchmarks: hot+warm =
// dram bytes (1/4 hot), promotion off, and an emulated cold store in a
// temporary directory.
func openTier(b *testing.B, dram int64) (*tier.Cache, *countingNS) {
	b.Helper()
	o := tierOptions(dram, 0.25)
	o.Flusher = flusher.Options{QueueItems: 1 << 16, QueueBytes: 256 << 20}
	o.Promotion = policy.PromotionOptions{Disabled: true}
	o.MGetColdBatch = 1000
	cns := withEmulatedCold(b, &o)
	c, err := tier.Open(o)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c, cns
}

// withEmulatedCold gives o a 2 GiB emulated cold store in a temporary
// directory; the returned namespace counts its submissions once Open ran.
func withEmulatedCold(tb testing.TB, o *tier.Options) *countingNS {
	dir := tb.TempDir()
	cns := &countingNS{}
	o.OpenCold = func(p backend.Params) (backend.Store, error) {
		ns, err := emu.Open(emu.Options{Path: dir + "/cold.kv", Capacity: 2 << 30, ReadSlots: 1024, RingEntries: 2048})
		if err != nil {
			return nil, err
		}
		cns.Namespace = ns
		kv, err := nvmekv.NewKV(cns, nvmekv.KVOptions{KeepExpired: true})
		if err != nil {
			return nil, err
		}
		return coldstore.New(kv, "emulated:"+dir, false, p.Strict, p.MaxValue)
	}
	return cns
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
	if st := c.Stats(); st.Lost+st.Flusher.Drops > 0 {
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
	c, _ := openTier(b, 16<<20)
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
	c, cns := openTier(b, 16<<20)
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

package tier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tiercache/tiercache/flusher"
)

// smallOptions are tiers so small that promotion, demotion, flushing and
// the straight-to-cold path all run within a few hundred operations.
func smallOptions(clk *fakeClock) Options {
	return Options{
		HotBytes:      64 << 10,
		HotMaxValue:   16 << 10,
		WarmConfig:    WarmConfig{WarmBytes: 512 << 10, WarmSegmentBytes: 64 << 10, WarmArena: warmArenaForTests()},
		Flusher:       flusher.Options{QueueItems: 1 << 20, QueueBytes: 1 << 40, BatchItems: 16},
		SweepInterval: time.Hour,
		Clock:         clk.Now,
	}
}

// modelVal is the reference model's record.
type modelVal struct {
	v    []byte
	exp  int64
	kind Kind // KindString, or testKind: v is a testList's record
}

// randValue returns a value of 1 B .. max bytes, mostly small.
func randValue(r *rand.Rand, max int) []byte {
	var n int
	switch p := r.IntN(100); {
	case p < 70:
		n = 1 + r.IntN(512)
	case p < 90:
		n = 512 + r.IntN(16<<10)
	case p < 98:
		n = 16<<10 + r.IntN(128<<10)
	default:
		n = 1 + r.IntN(max)
	}
	n = min(n, max)
	v := make([]byte, n)
	for i := range v {
		v[i] = byte(r.Uint32())
	}
	return v
}

// runModel drives c and a map model with the same random operations from a
// single goroutine and fails on the first difference.
func runModel(t *testing.T, c *Cache, clk *fakeClock, steps, keys, maxVal int, seed uint64) {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("stats at failure: %+v", c.Stats())
		}
	})
	r := rand.New(rand.NewPCG(seed, 7))
	model := map[string]modelVal{}
	key := func() []byte { return []byte(fmt.Sprintf("k%03d", r.IntN(keys))) }
	live := modelLive(model, clk)
	for step := 0; step < steps; step++ {
		checkEntries(t, c, step)
		k := key()
		ks := string(k)
		if r.IntN(5) == 0 {
			modelLiveOp(t, step, c, model, live, r, k)
			continue
		}
		switch op := r.IntN(100); {
		case op < 35:
			v := randValue(r, maxVal)
			var o SetOptions
			switch r.IntN(10) {
			case 0:
				o.NX = true
			case 1:
				o.XX = true
			case 2:
				o.TTL = time.Duration(1+r.IntN(10)) * time.Second
			case 3:
				o.KeepTTL = true
			}
			cur, exists := live(ks)
			stored, err := c.Set(k, v, o)
			if err != nil {
				t.Fatalf("step %d: Set(%s, %d bytes): %v", step, k, len(v), err)
			}
			want := !(o.NX && exists) && !(o.XX && !exists)
			if stored != want {
				t.Fatalf("step %d: Set(%s, %+v) stored=%v, model says %v", step, k, o, stored, want)
			}
			if stored {
				exp := int64(0)
				if o.TTL > 0 {
					exp = clk.Now() + int64(o.TTL)
				}
				if o.KeepTTL && exists {
					exp = cur.exp
				}
				model[ks] = modelVal{v: v, exp: exp}
			}
		case op < 45:
			_, exists := live(ks)
			n, _ := c.Delete(k)
			if (n == 1) != exists {
				t.Fatalf("step %d: Delete(%s) = %d, model exists=%v", step, k, n, exists)
			}
			delete(model, ks)
		case op < 80:
			m, exists := live(ks)
			v, ok, err := c.Get(nil, k)
			if err != nil && !errors.Is(err, ErrWrongKind) {
				t.Fatalf("step %d: Get(%s): %v", step, k, err)
			}
			if exists && m.kind != KindString {
				if !errors.Is(err, ErrWrongKind) {
					t.Fatalf("step %d: Get(%s) of an aggregate: %v", step, k, err)
				}
				break
			}
			if ok != exists || (ok && !bytes.Equal(v, m.v)) {
				t.Fatalf("step %d: Get(%s) ok=%v len=%d, model exists=%v len=%d (where=%q)", step, k, ok, len(v), exists, len(m.v), c.Where(k))
			}
		case op < 85:
			ks2 := make([][]byte, 1+r.IntN(20))
			for i := range ks2 {
				ks2[i] = key()
			}
			vs, err := c.MGet(ks2)
			if err != nil {
				t.Fatalf("step %d: MGet: %v", step, err)
			}
			for i, k2 := range ks2 {
				m, exists := live(string(k2))
				exists = exists && m.kind == KindString // MGet answers nil for another kind
				if (vs[i] != nil) != exists || (exists && !bytes.Equal(vs[i], m.v)) {
					t.Fatalf("step %d: MGet[%d] %s hit=%v, model exists=%v", step, i, k2, vs[i] != nil, exists)
				}
			}
		case op < 88:
			_, exists := live(ks)
			if got := c.Exists(k, k); got != map[bool]int{true: 2, false: 0}[exists] {
				t.Fatalf("step %d: Exists(%s,%s) = %d, model exists=%v", step, k, k, got, exists)
			}
		case op < 91:
			modelExpire(t, step, c, clk, model, live, r, k, false)
		case op < 93:
			modelExpire(t, step, c, clk, model, live, r, k, true)
		case op < 95:
			m, exists := live(ks)
			ttl, ok := c.TTL(k)
			switch {
			case ok != exists:
				t.Fatalf("step %d: TTL(%s) exists=%v, model %v", step, k, ok, exists)
			case ok && m.exp == 0 && ttl >= 0:
				t.Fatalf("step %d: TTL(%s) = %v, model has no expiry", step, k, ttl)
			case ok && m.exp != 0 && ttl != time.Duration(m.exp-clk.Now()):
				t.Fatalf("step %d: TTL(%s) = %v, model %v", step, k, ttl, time.Duration(m.exp-clk.Now()))
			}
		case op < 98:
			clk.Advance(int64(time.Duration(r.IntN(3000)) * time.Millisecond))
			checkSweep(t, step, c)
		case op < 99:
			checkModelLen(t, step, c, model, live)
		default:
			modelFlush(t, step, c, model, r)
		}
	}
}

// openMemoryTiers opens a cache of hot and warm only (16 MiB) for the
// model tests; Close runs at cleanup.
func openMemoryTiers(t *testing.T, clk *fakeClock) *Cache {
	t.Helper()
	o := smallOptions(clk)
	o.MaxValue = 256 << 10 // no cold tier: warm (64 KiB segments) bounds values
	o.WarmSegmentBytes = 512 << 10
	o.WarmBytes = 16 << 20
	c, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestModelMemoryTiers(t *testing.T) {
	clk := newFakeClock()
	c := openMemoryTiers(t, clk)
	// Without a cold tier warm evictions lose data: keep the key space small
	// enough to fit hot+warm.
	runModel(t, c, clk, steps(t, 20000), 40, 200<<10, 1)
	t.Logf("stats: %+v", c.Stats())
}

func steps(t *testing.T, n int) int {
	if testing.Short() {
		return n / 5
	}
	return n
}

// checkKeyCount: the O(1) key count (Stats.Keys) equals the number of
// directory entries that are not tombstones.
func checkKeyCount(t *testing.T, c *Cache) {
	t.Helper()
	var n int64
	for i := range c.dir.shards {
		sh := &c.dir.shards[i]
		sh.mu.RLock()
		for _, e := range sh.m {
			if e.state == stateLive {
				n++
			}
		}
		sh.mu.RUnlock()
	}
	if got := c.Stats().DirectoryKeys; got != n {
		t.Fatalf("Stats().DirectoryKeys = %d, directory holds %d entries that are not tombstones", got, n)
	}
}

// checkEntries fails if an entry of the directory breaks a lifecycle
// invariant (L1-L5, entry.check), or the live count disagrees (T12).
func checkEntries(t *testing.T, c *Cache, step int) {
	t.Helper()
	for i := range c.dir.shards {
		sh := &c.dir.shards[i]
		sh.mu.RLock()
		var live, hdrs int64
		tenantLive := make([]int64, len(c.ten.names))
		for k, e := range sh.m {
			if err := e.check(k); err != nil {
				sh.mu.RUnlock()
				t.Fatalf("step %d: %v", step, err)
			}
			if c.stale(e) {
				sh.mu.RUnlock()
				t.Fatalf("step %d: T14: entry of %q in the map has version %d, at or below the flush floor %d", step, k, e.ver, c.floor.Load())
			}
			if want := c.ten.of([]byte(k)); e.tenant != want {
				sh.mu.RUnlock()
				t.Fatalf("step %d: T35: entry of %q is tenant %d's, its prefix selects %d", step, k, e.tenant, want)
			}
			if e.state == stateLive {
				tenantLive[e.tenant]++
			}
			c.mem.mu.Lock()
			resident := e.node.Resident()
			c.mem.mu.Unlock()
			if resident && (e.loc == 0 || e.flushing) {
				sh.mu.RUnlock()
				t.Fatalf("step %d: L6: entry of %q is in the LFU with record %v, flushing %v", step, k, e.loc != 0, e.flushing)
			}
			if e.state == stateLive {
				live++
			}
			if e.hdr {
				hdrs++
			}
		}
		if err := checkLiveShard(c, i, sh); err != nil {
			sh.mu.RUnlock()
			t.Fatalf("step %d: %v", step, err)
		}
		if err := sh.checkExpiryIndex(); err != nil {
			sh.mu.RUnlock()
			t.Fatalf("step %d: %v", step, err)
		}
		if got := sh.hdrs.Load(); got != hdrs {
			sh.mu.RUnlock()
			t.Fatalf("step %d: T37: shard %d counts %d entries whose header cold holds, holds %d", step, i, got, hdrs)
		}
		got := sh.live.Load()
		for id := range sh.tenantLive {
			if n := sh.tenantLive[id].Load(); n != tenantLive[id] {
				sh.mu.RUnlock()
				t.Fatalf("step %d: T35: shard %d counts %d live entries of tenant %d, holds %d", step, i, n, id, tenantLive[id])
			}
		}
		sh.mu.RUnlock()
		if got != live {
			t.Fatalf("step %d: shard %d counts %d live entries, holds %d", step, i, got, live)
		}
	}
}

// modelExpire runs Expire (persist false) or Persist on c and on the
// model, and fails if they disagree; live is the model's lookup.
func modelExpire(t *testing.T, step int, c *Cache, clk *fakeClock, model map[string]modelVal,
	live func(string) (modelVal, bool), r *rand.Rand, k []byte, persist bool) {
	t.Helper()
	ks := string(k)
	m, exists := live(ks)
	if persist {
		want := exists && m.exp != 0
		if got := c.persistForTest(k); got != want {
			t.Fatalf("step %d: Persist(%s) = %v, model %v", step, k, got, want)
		}
		if want {
			m.exp = 0
			model[ks] = m
		}
		return
	}
	ttl := time.Duration(1+r.IntN(10)) * time.Second
	if got := c.Expire(k, ttl); got != exists {
		t.Fatalf("step %d: Expire(%s) = %v, model exists=%v", step, k, got, exists)
	}
	if exists {
		m.exp = clk.Now() + int64(ttl)
		model[ks] = m
	}
}

// checkModelLen fails if c's Len differs from the model's live keys, or
// its key count from its directory (checkKeyCount).
func checkModelLen(t *testing.T, step int, c *Cache, model map[string]modelVal, live func(string) (modelVal, bool)) {
	t.Helper()
	n := 0
	for k := range model {
		if _, ok := live(k); ok {
			n++
		}
	}
	if got := c.Len(); got != n {
		t.Fatalf("step %d: Len = %d, model %d", step, got, n)
	}
	checkKeyCount(t, c)
}

// modelSet sets k to a random value of at most maxVal bytes, with a TTL of
// 1-10 s one time in ttlOneIn, in c and in the model.
func modelSet(t *testing.T, step int, c *Cache, clk *fakeClock, model map[string]modelVal, r *rand.Rand, k []byte, maxVal, ttlOneIn int) {
	t.Helper()
	v := randValue(r, maxVal)
	var o SetOptions
	if r.IntN(ttlOneIn) == 0 {
		o.TTL = time.Duration(1+r.IntN(10)) * time.Second
	}
	if _, err := c.Set(k, v, o); err != nil {
		t.Fatalf("step %d: Set(%s): %v", step, k, err)
	}
	exp := int64(0)
	if o.TTL > 0 {
		exp = clk.Now() + int64(o.TTL)
	}
	model[string(k)] = modelVal{v: v, exp: exp}
}

// modelFlush runs Flush on c and on the model (which it empties), and half
// the time waits for the background purge: the next steps run beside it
// otherwise (T14).
func modelFlush(t *testing.T, step int, c *Cache, model map[string]modelVal, r *rand.Rand) {
	t.Helper()
	if err := c.Flush(); err != nil {
		t.Fatalf("step %d: Flush: %v", step, err)
	}
	clear(model)
	if n := c.Keys(); n != 0 {
		t.Fatalf("step %d: Keys after Flush = %d", step, n)
	}
	if r.IntN(2) == 0 {
		if err := c.WaitPurge(context.Background()); err != nil {
			t.Fatal(err)
		}
		if s := c.Stats(); s.Purging || s.PurgePending != 0 {
			t.Fatalf("step %d: after WaitPurge: purging %v, %d keys pending", step, s.Purging, s.PurgePending)
		}
	}
}

// modelLive returns the model's lookup: a key whose expiry passed on clk
// is removed from model and reported absent.
func modelLive(model map[string]modelVal, clk *fakeClock) func(string) (modelVal, bool) {
	return func(k string) (modelVal, bool) {
		m, ok := model[k]
		if ok && m.exp != 0 && m.exp <= clk.Now() {
			delete(model, k)
			return m, false
		}
		return m, ok
	}
}

package tier

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tiercache/tiercache/backend"
)

// checkSweep sweeps c at its clock's time and fails if a live entry
// expired by then is left in the directory (T55); that no key goes
// before its expiry is the model's to see.
func checkSweep(t *testing.T, step int, c *Cache) {
	t.Helper()
	now := c.now()
	for i := range c.dir.shards {
		sh := &c.dir.shards[i]
		sh.mu.RLock()
		err := sh.checkExpiryIndex()
		sh.mu.RUnlock()
		if err != nil {
			t.Fatalf("step %d: before the sweep: %v", step, err)
		}
	}
	c.sweep(now)
	for i := range c.dir.shards {
		sh := &c.dir.shards[i]
		sh.mu.RLock()
		for k, e := range sh.m {
			if e.state == stateLive && backend.Expired(e.exp, now) && !sh.pendingLocked([]byte(k)) {
				sh.mu.RUnlock()
				t.Fatalf("step %d: T55: %q expired %v ago and the sweep left it", step, k, time.Duration(now-e.exp))
			}
		}
		err := sh.checkExpiryIndex()
		sh.mu.RUnlock()
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
	}
}

// openSwept opens a cache of hot hot bytes on clk whose sweep runs only
// when the test calls it; Close runs at cleanup.
func openSwept(tb testing.TB, clk *fakeClock, hot int64) *Cache {
	tb.Helper()
	c, err := Open(Options{HotBytes: hot, Clock: clk.Now, SweepInterval: time.Hour})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// sweepVisits sweeps c at now and returns how many entries it took from
// the expiry index.
func sweepVisits(c *Cache, now int64) uint64 {
	before := c.st.sweepVisits.Load()
	c.sweep(now)
	return c.st.sweepVisits.Load() - before
}

// TestSweepVisitsOnlyDueKeys (T55): with every key given an expiry an hour
// away, the sweep visits none of them each second until their time; keys
// expiring in seconds are each visited once, by the sweep of their
// second, and purged; a jump past the hour purges all, each visited at
// most once a level of the wheel.
func TestSweepVisitsOnlyDueKeys(t *testing.T) {
	clk := newFakeClock()
	clk.Advance(int64(300 * time.Millisecond)) // not on a second
	c := openSwept(t, clk, 8<<20)
	const n = 4000
	for i := range n {
		if _, err := c.Set([]byte(fmt.Sprintf("ttl:%d", i)), []byte("v"), SetOptions{TTL: time.Hour}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Set([]byte(fmt.Sprintf("plain:%d", i)), []byte("v"), SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for s := range 60 {
		clk.Advance(int64(time.Second))
		if v := sweepVisits(c, c.now()); v != 0 {
			t.Fatalf("second %d: the sweep visited %d entries, none expiring within the minute", s, v)
		}
	}
	for i := range 10 {
		if _, err := c.Set([]byte(fmt.Sprintf("soon:%d", i)), []byte("v"), SetOptions{TTL: time.Duration(1+i%5) * time.Second}); err != nil {
			t.Fatal(err)
		}
	}
	if !c.Expire([]byte("plain:7"), 2*time.Second) {
		t.Fatal("Expire of a key that exists answered false")
	}
	expired := c.st.expired.Load()
	var visits uint64
	for range 6 {
		clk.Advance(int64(time.Second))
		visits += sweepVisits(c, c.now())
	}
	if got := c.st.expired.Load() - expired; got != 11 || visits != 11 {
		t.Fatalf("11 keys expired within 6 s: the sweep purged %d, visiting %d entries", got, visits)
	}
	if _, ok, _ := c.Get(nil, []byte("plain:7")); ok {
		t.Fatal("plain:7 expired and is still there")
	}
	clk.Advance(int64(time.Hour))
	expired = c.st.expired.Load()
	visits = sweepVisits(c, c.now())
	if got := c.st.expired.Load() - expired; got != n || visits > wheelLevels*n {
		t.Fatalf("%d keys expired in the hour: the sweep purged %d, visiting %d entries", n, got, visits)
	}
	if st := c.Stats(); st.DirectoryKeys != n-1 {
		t.Fatalf("%d keys left, want the %d without an expiry", st.DirectoryKeys, n-1)
	}
}

// setInOneShard sets n keys of one shard with a ttl and returns the
// shard's index.
func setInOneShard(t *testing.T, c *Cache, n int, ttl time.Duration) int {
	t.Helper()
	target := -1
	for i, set := 0, 0; set < n; i++ {
		k := []byte(fmt.Sprintf("k%d", i))
		lo, _ := hashKey(k)
		if sh := shardOfTag(tagOfHash(lo)); target < 0 {
			target = sh
		} else if sh != target {
			continue
		}
		if _, err := c.Set(k, []byte("v"), SetOptions{TTL: ttl}); err != nil {
			t.Fatal(err)
		}
		set++
	}
	return target
}

// TestSweepLetsGoBetweenBatches (T55): one hold of a shard's lock takes at
// most sweepBatch entries from its expiry index, and the holds that
// follow purge the rest.
func TestSweepLetsGoBetweenBatches(t *testing.T) {
	clk := newFakeClock()
	c := openSwept(t, clk, 8<<20)
	const n = 3 * sweepBatch
	target := setInOneShard(t, c, n, time.Second)
	clk.Advance(int64(2 * time.Second))
	sh := &c.dir.shards[target]
	holds := 0
	for done := false; !done; holds++ {
		before := c.st.sweepVisits.Load()
		sh.mu.Lock()
		done = c.sweepShardLocked(sh, c.now(), holds == 0)
		sh.mu.Unlock()
		if v := c.st.sweepVisits.Load() - before; v > sweepBatch {
			t.Fatalf("one hold of the shard's lock visited %d entries, more than %d", v, sweepBatch)
		}
	}
	if holds < n/sweepBatch || sh.live.Load() != 0 {
		t.Fatalf("%d holds left %d of %d expired keys", holds, sh.live.Load(), n)
	}
}

// randomSetOptions picks a Set's options at now, one time in n without
// a TTL and one with KEEPTTL, else with ttl, and returns them with the
// key's expiry after the Set (kept: its expiry before, 0 if absent).
func randomSetOptions(r *rand.Rand, n int, now int64, ttl time.Duration, kept int64) (SetOptions, int64) {
	switch r.IntN(n) {
	case 0:
		return SetOptions{}, 0
	case 1:
		return SetOptions{KeepTTL: true}, kept
	}
	return SetOptions{TTL: ttl}, backend.ExpiryAfter(now, ttl)
}

// TestSweepModel (T55): random writes, expiries and deletes on keys over
// many shards, against a map, with a fake clock moved by up to seconds,
// sometimes by minutes, days or a year: after each sweep the directory
// holds exactly the keys of the map not expired (none went early, every
// expired one went) and the expiry index holds each of them once.
func TestSweepModel(t *testing.T) {
	clk := newFakeClock()
	c := openSwept(t, clk, 32<<20)
	r := rand.New(rand.NewPCG(55, 1))
	model := map[string]int64{} // key → expiry (0: none)
	ttl := func() time.Duration {
		switch r.IntN(6) {
		case 0:
			return time.Duration(1+r.IntN(2000)) * time.Millisecond
		case 1:
			return time.Duration(1+r.IntN(120)) * time.Second
		case 2:
			return time.Duration(1+r.IntN(5000)) * time.Minute
		case 3:
			return time.Duration(1+r.IntN(400)) * 24 * time.Hour
		case 4:
			return time.Duration(1+r.IntN(70)) * time.Second
		}
		return time.Duration(1+r.IntN(10)) * time.Second
	}
	alive := func(k string) bool {
		exp, ok := model[k]
		return ok && !backend.Expired(exp, clk.Now())
	}
	steps := steps(t, 60000)
	for step := range steps {
		k := fmt.Sprintf("k%d", r.IntN(3000))
		kb := []byte(k)
		now := clk.Now()
		switch op := r.IntN(100); {
		case op < 30:
			var kept int64
			if alive(k) {
				kept = model[k]
			}
			o, exp := randomSetOptions(r, 4, now, ttl(), kept)
			if _, err := c.Set(kb, []byte("v"), o); err != nil {
				t.Fatal(err)
			}
			model[k] = exp
		case op < 45:
			d := ttl()
			if c.Expire(kb, d) != alive(k) {
				t.Fatalf("step %d: Expire(%s) disagrees with the model", step, k)
			}
			if alive(k) {
				model[k] = backend.ExpiryAfter(now, d)
			}
		case op < 52:
			ok, err := c.Persist(kb)
			if err != nil {
				t.Fatal(err)
			}
			if ok != (alive(k) && model[k] != 0) {
				t.Fatalf("step %d: Persist(%s) = %v, model %v", step, k, ok, model[k])
			}
			if alive(k) {
				model[k] = 0
			}
		case op < 60:
			x := Expiry{TTL: ttl()}
			if r.IntN(3) == 0 {
				x = Expiry{Persist: true}
			}
			_, ok, err := c.GetEx(nil, kb, x)
			if err != nil || ok != alive(k) {
				t.Fatalf("step %d: GetEx(%s) = %v, %v, model %v", step, k, ok, err, alive(k))
			}
			if ok && x.Persist {
				model[k] = 0
			} else if ok {
				model[k] = backend.ExpiryAfter(now, x.TTL)
			}
		case op < 70:
			if _, err := c.Delete(kb); err != nil {
				t.Fatal(err)
			}
			delete(model, k)
		case op < 74:
			dst := fmt.Sprintf("k%d", r.IntN(3000))
			ok, err := c.Rename(kb, []byte(dst), false)
			if err != nil && alive(k) {
				t.Fatalf("step %d: Rename(%s, %s): %v", step, k, dst, err)
			}
			if ok != alive(k) {
				t.Fatalf("step %d: Rename(%s) = %v, model %v", step, k, ok, alive(k))
			}
			if ok && dst != k {
				model[dst] = model[k]
				delete(model, k)
			}
		case op < 99:
			switch r.IntN(40) {
			case 0:
				clk.Advance(int64(time.Duration(1+r.IntN(120)) * time.Minute))
			case 1:
				clk.Advance(int64(time.Duration(1+r.IntN(20)) * 24 * time.Hour))
			case 2:
				clk.Advance(int64(time.Duration(1+r.IntN(400)) * 24 * time.Hour))
			default:
				clk.Advance(int64(time.Duration(r.IntN(3000)) * time.Millisecond))
			}
			checkSweep(t, step, c)
			now := clk.Now()
			for k, exp := range model {
				if backend.Expired(exp, now) {
					delete(model, k)
				}
			}
			if got := c.Stats().DirectoryKeys; got != int64(len(model)) {
				t.Fatalf("step %d: after the sweep the directory holds %d keys, the model %d", step, got, len(model))
			}
			for k := range model {
				if c.Where([]byte(k)) == "" {
					t.Fatalf("step %d: %s, expiring in %v, is gone after the sweep", step, k, time.Duration(model[k]-now))
				}
			}
		default:
			if err := c.Flush(); err != nil {
				t.Fatal(err)
			}
			clear(model)
		}
	}
}

// TestOverlappingSweepsPurgeEveryExpiredKey (T55): a sweep at now purges
// every key expired at now even while another sweep, at an earlier now,
// runs on the same shard (Close's drain sweeps while the background
// goroutine may): the earlier one must not take the keys the later one
// found due and file them again for the next sweep.
func TestOverlappingSweepsPurgeEveryExpiredKey(t *testing.T) {
	clk := newFakeClock()
	c := openSwept(t, clk, 8<<20)
	const n = 8 * sweepBatch
	target := setInOneShard(t, c, n, 1500*time.Millisecond)
	start := clk.Now()
	earlier, later := start+int64(1200*time.Millisecond), start+int64(1600*time.Millisecond)
	clk.Advance(later - start)
	done := make(chan struct{})
	var removals atomic.Int64
	c.OnRemoval(func(_ []byte, why Removal) {
		if why != Expired {
			return
		}
		// The later sweep holds the shard's lock: at its first removal the
		// earlier sweep starts and comes to wait for that lock; a pause
		// at the start of each batch lets it run and wait long enough to
		// be handed the lock between the later one's batches.
		r := removals.Add(1)
		if r == 1 {
			go func() {
				c.sweep(earlier)
				close(done)
			}()
		}
		if r%sweepBatch == 1 {
			time.Sleep(5 * time.Millisecond)
		}
	})
	c.sweep(later)
	<-done
	c.OnRemoval(nil)
	sh := &c.dir.shards[target]
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	left := 0
	for _, e := range sh.m {
		if e.state == stateLive && backend.Expired(e.exp, later) {
			left++
		}
	}
	if left != 0 {
		t.Fatalf("a sweep at %v past the keys' expiry left %d of %d expired keys while an earlier sweep ran beside it", time.Duration(later-start-int64(1500*time.Millisecond)), left, n)
	}
	if err := sh.checkExpiryIndex(); err != nil {
		t.Fatal(err)
	}
}

// TestExpiryIndexDroppedWhenEmpty (T55): once no key with an expiry is
// left, whether they expired, were deleted or persisted, the next sweep
// drops the shards' expiry indexes (Memory.ExpiryIndexBytes back to 0),
// and a key given an expiry afterwards is filed and swept as before.
func TestExpiryIndexDroppedWhenEmpty(t *testing.T) {
	clk := newFakeClock()
	c := openSwept(t, clk, 32<<20)
	const n = 20_000
	key := func(i int) []byte { return fmt.Appendf(nil, "k%d", i) }
	for _, how := range []string{"expired", "deleted", "persisted"} {
		for i := range n {
			if _, err := c.Set(key(i), []byte("v"), SetOptions{TTL: time.Second}); err != nil {
				t.Fatal(err)
			}
		}
		if b := c.Memory().ExpiryIndexBytes; b < n*ExpiryIndexKeyBytes {
			t.Fatalf("%d keys with an expiry: the expiry index takes %d bytes", n, b)
		}
		for i := range n {
			switch how {
			case "deleted":
				if _, err := c.Delete(key(i)); err != nil {
					t.Fatal(err)
				}
			case "persisted":
				if !persist(c, key(i)) {
					t.Fatalf("Persist(%s) answered false", key(i))
				}
			}
		}
		clk.Advance(int64(2 * time.Second))
		c.sweep(c.now())
		if b := c.Memory().ExpiryIndexBytes; b != 0 {
			t.Fatalf("every key with an expiry %s and swept: the expiry index still takes %d bytes", how, b)
		}
		if _, err := c.Delete(keysOf(n, key)...); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Set([]byte("later"), []byte("v"), SetOptions{TTL: time.Second}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(int64(2 * time.Second))
	c.sweep(c.now())
	if c.Keys() != 0 || c.Memory().ExpiryIndexBytes != 0 {
		t.Fatalf("a key set with an expiry after the indexes went: %d keys left, the index %d bytes", c.Keys(), c.Memory().ExpiryIndexBytes)
	}
}

// keysOf is key(i) for i in [0, n).
func keysOf(n int, key func(int) []byte) [][]byte {
	ks := make([][]byte, n)
	for i := range ks {
		ks[i] = key(i)
	}
	return ks
}

package tier

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestHoldSweep checks T62: with the sweep held, background sweeps come
// and go (counted) and the expired key stays, read as gone, no removal
// told; released, the next sweep purges it and tells its expiry.
func TestHoldSweep(t *testing.T) {
	clk := newFakeClock()
	c, err := Open(Options{HotBytes: 64 << 20, Clock: clk.Now, SweepInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var held atomic.Bool
	held.Store(true)
	c.HoldSweep(held.Load)
	var removed atomic.Int64
	c.OnRemoval(func(key []byte, why Removal) { removed.Add(1) })
	if _, err := c.Set([]byte("k"), []byte("v"), SetOptions{TTL: time.Second}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(int64(2 * time.Second))
	waitFor(t, "two held sweeps", func() bool { return c.heldSweeps.Load() >= 2 })
	if _, ok, _ := c.Get(nil, []byte("k")); ok {
		t.Error("an expired key read while the sweep is held")
	}
	if n := removed.Load(); n != 0 {
		t.Fatalf("T62: %d removals told while the sweep was held", n)
	}
	found := false
	for i := range c.dir.shards {
		sh := &c.dir.shards[i]
		sh.mu.RLock()
		found = found || sh.m["k"] != nil
		sh.mu.RUnlock()
	}
	if !found {
		t.Fatal("T62: the held sweep removed the expired key")
	}
	held.Store(false)
	waitFor(t, "the expiry after the hold", func() bool { return removed.Load() == 1 })
}

// waitFor polls cond every millisecond, failing after 60,000 tries.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for try := 0; !cond(); try++ {
		if try == 60000 {
			t.Fatalf("never %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

package tier

import (
	"fmt"
	"testing"
)

// TestCompletionForgetsDownToTrimTarget (T65): a key whose evicted copy's
// write completed is forgotten while the directory is above the trim
// pass's target (90% of its bound), not only above the bound, so a load
// that evicts keys to cold needs no trim pass. The directory is brought
// to exactly its bound: a key only cold holds then goes, the entry in
// hand.
func TestCompletionForgetsDownToTrimTarget(t *testing.T) {
	needURing(t)
	c, err := Open(coldKeysOptions(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if !c.forgetCold {
		t.Fatal("T37: the emulated cold store should let the directory forget cold-only keys")
	}
	// A bound far above the keys written (under mem.mu, which maxKeys
	// takes before it reads trimSlack): none is forgotten while they are
	// written, most are evicted to cold.
	c.mem.mu.Lock()
	c.trimSlack = 1 << 20
	c.mem.mu.Unlock()
	val := make([]byte, 200)
	for i := range 6000 {
		if _, err := c.Set(fmt.Appendf(nil, "key:%07d", i), val, SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	settle(t, c)
	if f := c.Stats().Forgotten; f != 0 {
		t.Fatalf("%d keys forgotten below the bound", f)
	}
	// The bound set to the directory's size now.
	n := c.dir.keyCount()
	c.mem.mu.Lock()
	inDRAM := int64(c.mem.items[memHot] + c.mem.items[memWarm] + c.mem.items[memLive])
	c.trimSlack = n - 2*inDRAM
	c.mem.mu.Unlock()
	if c.trimSlack < 0 {
		t.Fatalf("DRAM holds %d of the %d keys: too many for this test", inDRAM, n)
	}
	target := n - n/10 // trim's
	if b := c.maxKeys(); b != n || n <= target {
		t.Fatalf("bound %d, directory %d, target %d", b, n, target)
	}
	c.boundChecks.Store(0) // overBound looks again at its next call
	for i := range c.dir.shards {
		sh := &c.dir.shards[i]
		sh.mu.Lock()
		for ks, e := range sh.m {
			if e.loc != 0 || !e.coldHas(e.ver) || e.marked(markRecent) {
				continue
			}
			c.forgetColdOnlyLocked(sh, e)
			_, kept := sh.m[ks]
			sh.mu.Unlock()
			if kept {
				t.Fatalf("T65: a cold-only key's entry was kept with the directory at its bound %d, above the trim target %d", n, target)
			}
			if f := c.Stats().Forgotten; f != 1 {
				t.Fatalf("Forgotten = %d, want 1", f)
			}
			return
		}
		sh.mu.Unlock()
	}
	t.Fatal("no key only cold holds")
}

package tier

import (
	"bytes"
	"testing"
	"time"
)

// TestEvictedRecordServedWhileFlushing is T32: a key the LFU evicts is
// written to cold from its DRAM record, which stays readable and pinned
// until the write completes; then cold alone holds it. A key overwritten
// while its old record is being written keeps the new value, and the old
// record is freed when the write ends.
func TestEvictedRecordServedWhileFlushing(t *testing.T) {
	var g *gatedCold
	c := openCold(t, func(o *Options) { g = gated(o) })
	v1, v2 := bytes.Repeat([]byte("1"), 3000), bytes.Repeat([]byte("2"), 3000)
	for _, k := range []string{"stay", "over"} {
		if _, err := c.Set([]byte(k), v1, SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	settle(t, c)
	evictAll := func() {
		c.mem.mu.Lock()
		c.mem.lfus[0].Evict(c.mem.lfus[0].Capacity(), c.mem.evictFn)
		c.mem.mu.Unlock()
	}
	g.arm("stay")
	evictAll()
	go c.processVictims()
	select {
	case <-g.reached:
	case <-time.After(10 * time.Second):
		t.Fatal("the evicted key's cold write never started")
	}
	if v, ok, err := c.Get(nil, []byte("stay")); err != nil || !ok || !bytes.Equal(v, v1) {
		t.Fatalf("while its cold write is in flight: Get = %d bytes, %v, %v", len(v), ok, err)
	}
	if w := c.Where([]byte("stay")); w != "hot" && w != "warm" {
		t.Fatalf("while its cold write is in flight the key is in %q, want its DRAM record", w)
	}
	close(g.release)
	settle(t, c)
	if w := c.Where([]byte("stay")); w != "cold" {
		t.Fatalf("after its cold write the key is in %q, want cold", w)
	}
	if v, ok, _ := c.Get(nil, []byte("stay")); !ok || !bytes.Equal(v, v1) {
		t.Fatalf("after its cold write: Get = %d bytes, %v", len(v), ok)
	}

	// The other key (written again: the first eviction sent it to cold
	// too): evicted, then overwritten while its old record is being
	// written.
	if _, err := c.Set([]byte("over"), v1, SetOptions{}); err != nil {
		t.Fatal(err)
	}
	settle(t, c)
	g.arm("over")
	evictAll()
	go c.processVictims()
	select {
	case <-g.reached:
	case <-time.After(10 * time.Second):
		t.Fatal("the evicted key's cold write never started")
	}
	if _, err := c.Set([]byte("over"), v2, SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if v, ok, _ := c.Get(nil, []byte("over")); !ok || !bytes.Equal(v, v2) {
		t.Fatalf("overwritten while flushing: Get = %d bytes, %v", len(v), ok)
	}
	close(g.release)
	settle(t, c)
	if v, ok, _ := c.Get(nil, []byte("over")); !ok || !bytes.Equal(v, v2) {
		t.Fatalf("after the old record's write ended: Get = %d bytes, %v", len(v), ok)
	}
	st := c.Stats()
	if st.Lost != 0 {
		t.Fatalf("lost %d", st.Lost)
	}
	// Every record the DRAM logs count is some entry's: the pinned one
	// was freed.
	var named int64
	for i := range c.dir.shards {
		sh := &c.dir.shards[i]
		sh.mu.RLock()
		for _, e := range sh.m {
			if e.loc != 0 {
				named++
			}
		}
		sh.mu.RUnlock()
	}
	if held := st.Tiers[0].Items + st.Tiers[1].Items; held != named {
		t.Fatalf("the logs count %d records, the entries name %d", held, named)
	}
}

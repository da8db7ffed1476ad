package tier

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tiercache/tiercache/numa"
	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu"
)

// putColdKeys stores keys [from, to) in c's cold store directly (the
// directory does not learn them: this fills the store's index fast).
func putColdKeys(t *testing.T, c *Cache, from, to int) {
	t.Helper()
	kv := kvOf(c)
	items := make([]nvmekv.Item, 0, 1000)
	for i := from; i < to; i++ {
		items = append(items, nvmekv.Item{Key: fmt.Appendf(nil, "idx-%07d", i), Value: []byte("v")})
		if len(items) == cap(items) || i == to-1 {
			if err := kv.PutMany(context.Background(), items); err != nil {
				t.Fatalf("PutMany: %v", err)
			}
			items = items[:0]
		}
	}
}

func emuStatsOf(c *Cache) emu.Stats { return kvOf(c).Namespace().(*emu.Namespace).Stats() }

// TestColdIndexBoundToNode (T33): with ColdIndexNode set to a node that
// exists (node 0 here; the guest's TestColdIndexOnNode1 uses its CPU-less
// node), the first off-heap table of the emulated store's index and every
// one growth and splits make are bound to it, Stats reports the node, bound bytes
// against all the index's bytes, and a placement of 1 on the node.
func TestColdIndexBoundToNode(t *testing.T) {
	c := openCold(t, func(o *Options) { o.ColdIndexNode = 0 })
	st := c.Stats()
	if st.ColdIndexNode != 0 || st.ColdIndexBytes == 0 || st.ColdIndexBoundBytes != 0 || st.ColdIndexPlacement != -1 {
		t.Fatalf("fresh store: node %d, index %d bytes, %d bound, placement %v; want node 0, a heap table (nothing bound, placement -1)",
			st.ColdIndexNode, st.ColdIndexBytes, st.ColdIndexBoundBytes, st.ColdIndexPlacement)
	}
	tables := map[int]bool{}
	for n := 50_000; n <= 250_000; n += 50_000 { // tag segments go off the heap past ~4,900 keys, then grow and split
		putColdKeys(t, c, n-50_000, n)
		es := emuStatsOf(c)
		tables[es.IndexOffHeapBytes] = true
		st := c.Stats()
		if es.IndexBindErrors != 0 || es.IndexBoundBytes != es.IndexOffHeapBytes || int64(es.IndexBoundBytes) != st.ColdIndexBoundBytes {
			t.Fatalf("%d keys: %d bind errors, %d of %d off-heap bytes bound (Stats: %d)",
				es.Items, es.IndexBindErrors, es.IndexBoundBytes, es.IndexOffHeapBytes, st.ColdIndexBoundBytes)
		}
		if es.IndexOffHeapBytes > 0 && st.ColdIndexPlacement != 1 {
			t.Fatalf("%d keys: placement %v, want 1 on node 0", es.Items, st.ColdIndexPlacement)
		}
		t.Logf("%d keys: index %d bytes, %d off the heap and bound, placement %v", es.Items, st.ColdIndexBytes, es.IndexBoundBytes, st.ColdIndexPlacement)
	}
	if len(tables) < 3 {
		t.Fatalf("saw off-heap sizes %v: want no table, then tables grown at least twice", tables)
	}
	v, _, err := kvOf(c).Get(context.Background(), nil, []byte("idx-0000007"))
	if err != nil || string(v) != "v" {
		t.Fatalf("Get after growing the bound index: %q %v", v, err)
	}
}

// TestColdIndexNodeResolution (T33): AutoNode without a bound warm tier
// leaves the index unbound (node -1); Unbound does; a node that does not
// exist fails Open with an error naming it.
func TestColdIndexNodeResolution(t *testing.T) {
	for _, node := range []int{numa.AutoNode, numa.Unbound} {
		c := openCold(t, func(o *Options) { o.ColdIndexNode = node })
		if st := c.Stats(); st.ColdIndexNode != -1 || st.ColdIndexPlacement != -1 {
			t.Fatalf("ColdIndexNode %d with warm unbound: Stats node %d placement %v, want -1, -1", node, st.ColdIndexNode, st.ColdIndexPlacement)
		}
		c.Close()
	}
	needURing(t)
	o := smallOptions(newFakeClock())
	emuCold(&o, t.TempDir())
	o.ColdIndexNode = 77
	c, err := Open(o)
	if err == nil {
		c.Close()
		t.Fatal("Open with ColdIndexNode 77 succeeded")
	}
	if !errors.Is(err, numa.ErrNoSuchNode) || !strings.Contains(err.Error(), "cold index node 77") {
		t.Fatalf("Open with ColdIndexNode 77: %v; want numa.ErrNoSuchNode naming the cold index node", err)
	}
	t.Log(err)
}

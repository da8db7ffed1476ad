package coldstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/numa"
	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu"
)

// putKeys stores keys [from, to) in s's KV directly.
func putKeys(t *testing.T, s *Store, from, to int) {
	t.Helper()
	items := make([]nvmekv.Item, 0, 1000)
	for i := from; i < to; i++ {
		items = append(items, nvmekv.Item{Key: fmt.Appendf(nil, "idx-%07d", i), Value: []byte("v")})
		if len(items) == cap(items) || i == to-1 {
			if err := s.KV().PutMany(context.Background(), items); err != nil {
				t.Fatalf("PutMany: %v", err)
			}
			items = items[:0]
		}
	}
}

func emuStatsOf(s *Store) emu.Stats { return s.KV().Namespace().(*emu.Namespace).Stats() }

// TestIndexBoundToNode (CS2): with IndexNode set to a node that exists
// (node 0 here; the guest's TestColdIndexOnNode1 uses its CPU-less node),
// the first off-heap table of the emulated store's index and every one
// growth and splits make are bound to it, Stats reports the node, bound
// bytes against all the index's bytes, and a placement of 1 on the node.
func TestIndexBoundToNode(t *testing.T) {
	s := openTest(t, func(c *Config) { c.IndexNode, c.Capacity = 0, 256<<20 }, backend.Params{WarmNode: -1})
	st := s.Stats()
	if st.IndexNode != 0 || st.IndexBytes == 0 || st.IndexBoundBytes != 0 || st.IndexPlacement != -1 {
		t.Fatalf("fresh store: node %d, index %d bytes, %d bound, placement %v; want node 0, a heap table (nothing bound, placement -1)",
			st.IndexNode, st.IndexBytes, st.IndexBoundBytes, st.IndexPlacement)
	}
	tables := map[int]bool{}
	for n := 50_000; n <= 250_000; n += 50_000 { // tag segments go off the heap past ~4,900 keys, then grow and split
		putKeys(t, s, n-50_000, n)
		es := emuStatsOf(s)
		tables[es.IndexOffHeapBytes] = true
		st := s.Stats()
		if es.IndexBindErrors != 0 || es.IndexBoundBytes != es.IndexOffHeapBytes || int64(es.IndexBoundBytes) != st.IndexBoundBytes {
			t.Fatalf("%d keys: %d bind errors, %d of %d off-heap bytes bound (Stats: %d)",
				es.Items, es.IndexBindErrors, es.IndexBoundBytes, es.IndexOffHeapBytes, st.IndexBoundBytes)
		}
		if es.IndexOffHeapBytes > 0 && st.IndexPlacement != 1 {
			t.Fatalf("%d keys: placement %v, want 1 on node 0", es.Items, st.IndexPlacement)
		}
		t.Logf("%d keys: index %d bytes, %d off the heap and bound, placement %v", es.Items, st.IndexBytes, es.IndexBoundBytes, st.IndexPlacement)
	}
	if len(tables) < 3 {
		t.Fatalf("saw off-heap sizes %v: want no table, then tables grown at least twice", tables)
	}
	v, _, err := s.KV().Get(context.Background(), nil, []byte("idx-0000007"))
	if err != nil || string(v) != "v" {
		t.Fatalf("Get after growing the bound index: %q %v", v, err)
	}
}

// TestIndexNodeResolution (CS2): AutoNode with no warm node (-1) leaves the
// index unbound; Unbound does; AutoNode with warm on node 0 binds it there;
// a node that does not exist fails Open with an error naming it.
func TestIndexNodeResolution(t *testing.T) {
	for _, node := range []int{numa.AutoNode, numa.Unbound} {
		s := openTest(t, func(c *Config) { c.IndexNode = node }, backend.Params{WarmNode: -1})
		if st := s.Stats(); st.IndexNode != -1 || st.IndexPlacement != -1 {
			t.Fatalf("IndexNode %d with warm unbound: Stats node %d placement %v, want -1, -1", node, st.IndexNode, st.IndexPlacement)
		}
		s.Close()
	}
	s := openTest(t, func(c *Config) { c.IndexNode = numa.AutoNode }, backend.Params{WarmNode: 0})
	if st := s.Stats(); st.IndexNode != 0 {
		t.Fatalf("IndexNode auto with warm on node 0: Stats node %d, want 0", st.IndexNode)
	}
	s.Close()
	cfg := Config{DataDir: t.TempDir(), Capacity: 8 << 20, RegionBytes: 256 << 10, IndexNode: 77}
	if n, err := cfg.IndexNodeFor(-1); err == nil {
		t.Fatalf("IndexNodeFor with node 77: %d, nil", n)
	}
	bs, err := Open(cfg, backend.Params{WarmNode: -1})
	if err == nil {
		bs.Close()
		t.Fatal("Open with IndexNode 77 succeeded")
	}
	if !errors.Is(err, numa.ErrNoSuchNode) || !strings.Contains(err.Error(), "cold index node 77") {
		t.Fatalf("Open with IndexNode 77: %v; want numa.ErrNoSuchNode naming the cold index node", err)
	}
	t.Log(err)
}

package numanode

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/coldstore"
	"github.com/tiercache/tiercache/numa"
	"github.com/tiercache/tiercache/tier"
)

// TestColdIndexOnNode1 (V28): a cache whose emulated cold store's index
// is bound to the CPU-less node (ColdIndexNode 1, the sidecar's
// cold.index_node: 1) keeps that index's off-heap tables there: after
// enough keys reach cold that the index's tag segments live off the Go
// heap (a segment of 64 KiB and more, logstore E8, E35; 120,000 keys are
// written, values of 200 bytes through 1 MiB of hot, some 1.6 MB of
// index), Stats reports node 1, at least 1 MiB and nine tenths of the
// index bound, no bind error, and at least
// 0.99 of the sampled resident pages on node 1. With ColdIndexNode auto
// and warm on node 1 the index goes to node 1 too.
func TestColdIndexOnNode1(t *testing.T) {
	requireGuest(t)
	setNumaBalancing(t, "1") // Debian's default with two nodes: an mbind policy holds against it
	c, err := tier.Open(tier.Options{HotBytes: 1 << 20, OpenCold: openCold(coldstore.Config{DataDir: t.TempDir(),
		Capacity: 128 << 20, RegionBytes: 1 << 20, IndexNode: cxlNode})})
	if err != nil {
		t.Fatalf("tier.Open with the cold index on node 1: %v", err)
	}
	defer c.Close()
	val := bytes.Repeat([]byte("c"), 200)
	const n = 120_000
	for i := 0; i < n; i++ {
		if _, err := c.Set([]byte(fmt.Sprintf("cold-%07d", i)), val, tier.SetOptions{}); err != nil {
			t.Fatalf("Set %d: %v", i, err)
		}
	}
	var st tier.Stats
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		st = c.Stats()
		if st.ColdIndexBoundBytes >= 1<<20 && st.ColdIndexBoundBytes*10 >= st.ColdIndexBytes*9 && st.Flusher.Queue == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after writing %d keys: cold index %d bytes, %d bound, flusher queue %d; want at least 1 MiB and nine tenths of it bound",
				n, st.ColdIndexBytes, st.ColdIndexBoundBytes, st.Flusher.Queue)
		}
	}
	got, ok, err := c.Get(nil, []byte("cold-0000007"))
	if err != nil || !ok || !bytes.Equal(got, val) {
		t.Fatalf("Get of a cold key = %d bytes, %v, %v", len(got), ok, err)
	}
	st = c.Stats()
	t.Logf("cold index: node %d, %d bytes, %d bound, %d bind errors, placement %.4f; cold items %d",
		st.ColdIndexNode, st.ColdIndexBytes, st.ColdIndexBoundBytes, st.ColdIndexBindErrors, st.ColdIndexPlacement, st.Tiers[len(st.Tiers)-1].Items)
	if st.ColdIndexNode != cxlNode || st.ColdIndexBindErrors != 0 || st.ColdIndexPlacement < 0.99 {
		t.Fatalf("cold index: node %d, %d bind errors, placement %v; want node 1, none, at least 0.99",
			st.ColdIndexNode, st.ColdIndexBindErrors, st.ColdIndexPlacement)
	}

	a, err := tier.Open(tier.Options{HotBytes: 1 << 20, WarmConfig: tier.WarmConfig{WarmBytes: 4 << 20,
		WarmSegmentBytes: 1 << 20, WarmArena: numa.ArenaOptions{Node: cxlNode}},
		OpenCold: openCold(coldstore.Config{DataDir: t.TempDir(), Capacity: 16 << 20, RegionBytes: 1 << 20, IndexNode: numa.AutoNode})})
	if err != nil {
		t.Fatalf("tier.Open with warm on node 1 and the cold index auto: %v", err)
	}
	defer a.Close()
	if st := a.Stats(); st.WarmNode != cxlNode || st.ColdIndexNode != cxlNode {
		t.Fatalf("warm on node 1, cold index auto: warm node %d, index node %d; want 1 and 1", st.WarmNode, st.ColdIndexNode)
	}
}

// openCold is tier.Options.OpenCold for the cold store cc.
func openCold(cc coldstore.Config) func(backend.Params) (backend.Store, error) {
	return func(p backend.Params) (backend.Store, error) { return coldstore.Open(cc, p) }
}

package numanode

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/tiercache/tiercache/numa"
	"github.com/tiercache/tiercache/tier"
)

// numaBalancing is the automatic NUMA balancing switch. Debian's kernel
// enables it by default on a machine with more than one node.
const numaBalancing = "/proc/sys/kernel/numa_balancing"

// setNumaBalancing writes v to the switch and restores the old value at
// the end of the test.
func setNumaBalancing(t *testing.T, v string) {
	t.Helper()
	old, err := os.ReadFile(numaBalancing)
	if err != nil {
		t.Fatalf("read %s: %v", numaBalancing, err)
	}
	if err := os.WriteFile(numaBalancing, []byte(v), 0); err != nil {
		t.Fatalf("write %s: %v", numaBalancing, err)
	}
	t.Cleanup(func() { os.WriteFile(numaBalancing, old, 0) })
}

// TestWarmTierOnNode1 runs the DRAM tiers with the warm log's arena on
// the CPU-less node, with each policy and mode: after Open (which
// pre-faults warm) every page is on node 1, items round-trip, and after
// writing twice what the tiers hold (warm cleaned and its keys evicted)
// every page is still on node 1.
//
// Range mode (an mbind VMA policy) holds with automatic NUMA balancing on:
// the balancer skips VMAs with an explicit policy. Thread mode leaves the
// range with the default policy, so the balancer migrates the pages the
// CPUs touch to node 0 (TestRangeArenaImmuneToNumaBalancing shows both);
// it is checked with balancing off.
func TestWarmTierOnNode1(t *testing.T) {
	requireGuest(t)
	for _, tc := range []struct {
		policy    numa.Policy
		mode      numa.Mode
		balancing string
	}{
		{numa.PolicyBind, numa.ModeRange, "1"},
		{numa.PolicyPreferred, numa.ModeRange, "1"},
		{numa.PolicyBind, numa.ModeThread, "0"},
	} {
		t.Run(tc.policy.String()+"/"+tc.mode.String(), func(t *testing.T) {
			setNumaBalancing(t, tc.balancing)
			c, err := tier.Open(tier.Options{HotBytes: 4 << 20, WarmConfig: tier.WarmConfig{WarmBytes: 16 << 20,
				WarmSegmentBytes: 1 << 20, WarmArena: numa.ArenaOptions{Node: cxlNode, Policy: tc.policy, Mode: tc.mode}}})
			if err != nil {
				t.Fatalf("tier.Open with warm on node 1: %v", err)
			}
			defer c.Close()
			if st := c.Stats(); st.WarmNode != cxlNode || st.WarmPlacement != 1 {
				t.Fatalf("warm after Open: node %d placement %v, want node 1 with placement 1", st.WarmNode, st.WarmPlacement)
			}
			checkPlacement(t, c.WarmArena(), cxlNode)

			val := bytes.Repeat([]byte("w"), 4000)
			const n = 10000 // ~40 MB through 20 MiB of DRAM tiers: evicts
			for i := 0; i < n; i++ {
				if _, err := c.Set([]byte(fmt.Sprintf("key-%06d", i)), val, tier.SetOptions{}); err != nil {
					t.Fatalf("Set %d: %v", i, err)
				}
			}
			got, ok, err := c.Get(nil, []byte(fmt.Sprintf("key-%06d", n-1)))
			if err != nil || !ok || !bytes.Equal(got, val) {
				t.Fatalf("Get of the newest key = %d bytes, %v, %v", len(got), ok, err)
			}
			st := c.Stats()
			if st.Lost == 0 || st.Tiers[1].Items == 0 {
				t.Fatalf("after writing %d bytes into 20 MiB: lost %d, warm items %d; want evictions and a warm tier in use",
					n*len(val), st.Lost, st.Tiers[1].Items)
			}
			checkPlacement(t, c.WarmArena(), cxlNode)
		})
	}
}

package numanode

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/tiercache/tiercache/numa"
	"github.com/tiercache/tiercache/tier/warm"
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

// TestWarmTierOnNode1 runs the warm tier's arena on the CPU-less node with
// each policy and mode: after New (which pre-faults) every sampled page is
// on node 1, items round-trip, and after filling the cache past its size
// (evicting) every page is still on node 1.
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
			evicted := 0
			c, err := warm.New(warm.Options{
				Bytes: 16 << 20, SegmentBytes: 1 << 20,
				Arena:   numa.ArenaOptions{Node: cxlNode, Policy: tc.policy, Mode: tc.mode},
				OnEvict: func(key, value []byte, m warm.Meta) { evicted++ },
			})
			if err != nil {
				t.Fatalf("warm.New on node 1: %v", err)
			}
			defer c.Close()
			st := c.Stats()
			if !st.Bound || st.Node != cxlNode || st.Placement != 1 {
				t.Fatalf("warm stats after New = %+v, want bound to node 1 with placement 1", st)
			}
			checkPlacement(t, c.Arena(), cxlNode)

			val := bytes.Repeat([]byte("w"), 4000)
			const n = 8000 // ~32 MB through a 16 MiB cache: evicts
			for i := 0; i < n; i++ {
				if err := c.Set([]byte(fmt.Sprintf("key-%06d", i)), val, warm.Meta{Version: uint64(i)}); err != nil {
					t.Fatalf("Set %d: %v", i, err)
				}
			}
			got, m, ok := c.Get(nil, []byte(fmt.Sprintf("key-%06d", n-1)))
			if !ok || !bytes.Equal(got, val) || m.Version != n-1 {
				t.Fatalf("Get of the newest key = %d bytes, %+v, %v", len(got), m, ok)
			}
			if evicted == 0 || c.Stats().Evictions == 0 {
				t.Fatalf("no eviction after writing %d bytes into 16 MiB", n*len(val))
			}
			if f, err := c.VerifyPlacement(0); err != nil || f != 1 {
				t.Fatalf("VerifyPlacement after eviction = %v, %v; want 1", f, err)
			}
			checkPlacement(t, c.Arena(), cxlNode)
		})
	}
}

// Package numanode checks the numa package (and the warm tier's arena)
// against a real CPU-less NUMA node: node 1 of the vmtest QEMU guest.
package numanode

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tiercache/tiercache/numa"
)

const (
	cxlNode    = 1        // the guest's memory-only node (vmtest QEMUArgs)
	arenaBytes = 32 << 20 // small: TCG is slow
	mpolBind   = 2        // MPOL_BIND, include/uapi/linux/mempolicy.h
	mpolPref   = 1        // MPOL_PREFERRED
)

func TestTopologyFindsNode1AsCXLCandidate(t *testing.T) {
	requireGuest(t)
	topo, err := numa.ReadTopology()
	if err != nil {
		t.Fatal(err)
	}
	if got := topo.IDs(); !slices.Equal(got, []int{0, 1}) {
		t.Fatalf("online nodes = %v, want [0 1]", got)
	}
	n1, ok := topo.Node(cxlNode)
	if !ok || !n1.CPULess() || n1.HasCPU || !n1.HasMemory || len(n1.CPUs) != 0 || n1.MemTotal == 0 {
		t.Fatalf("node 1 = %+v, want memory without CPUs", n1)
	}
	if n0, _ := topo.Node(0); !n0.HasCPU || n0.CPULess() {
		t.Fatalf("node 0 = %+v, want CPUs and memory", n0)
	}
	if got := topo.CXLCandidates(); !slices.Equal(got, []int{cxlNode}) {
		t.Fatalf("CXLCandidates = %v, want [1]", got)
	}
	if n, reason := topo.WarmNode(); n != cxlNode {
		t.Fatalf("WarmNode = %d (%s), want 1", n, reason)
	}
	if d := topo.Distance(0, 1); d <= topo.Distance(0, 0) {
		t.Fatalf("distance 0->1 = %d, not above local %d", d, topo.Distance(0, 0))
	}
	var sb strings.Builder
	if _, err := topo.WriteTo(&sb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sb.String(), "CXL candidates (CPU-less memory nodes, best first): 1") {
		t.Fatalf("topology print lacks the CXL candidate line:\n%s", sb.String())
	}
	t.Logf("guest topology:\n%s", sb.String())
}

// newArena opens an arena and checks every sampled page is on want.
func newArena(t *testing.T, o numa.ArenaOptions, want int) *numa.Arena {
	t.Helper()
	if o.Bytes == 0 {
		o.Bytes = arenaBytes
	}
	a, err := numa.NewArena(o)
	if err != nil {
		t.Fatalf("NewArena(node %d, %s, %s): %v", o.Node, o.Policy, o.Mode, err)
	}
	t.Cleanup(func() { a.Close() })
	checkPlacement(t, a, want)
	return a
}

func checkPlacement(t *testing.T, a *numa.Arena, want int) {
	t.Helper()
	rep, err := a.PlacementReport(0) // every page
	if err != nil {
		t.Fatalf("PlacementReport: %v", err)
	}
	if rep.Missing != 0 || rep.PerNode[want] != rep.Samples || rep.Samples != a.Len()/4096 {
		t.Fatalf("placement = %+v, want all %d pages on node %d", rep, a.Len()/4096, want)
	}
	if rep.CrossCheck == 0 {
		t.Fatalf("placement = %+v: no page cross-checked with get_mempolicy", rep)
	}
}

func TestArenaBindNode1AllPagesOnNode1(t *testing.T) {
	requireGuest(t)
	setNumaBalancing(t, "1") // a range policy is immune to the balancer
	a := newArena(t, numa.ArenaOptions{Node: cxlNode, Policy: numa.PolicyBind}, cxlNode)
	if n, ok := a.Bound(); !ok || n != cxlNode {
		t.Fatalf("Bound() = %d, %v; want 1, true", n, ok)
	}
	mode, nodes, err := a.RangePolicy()
	if err != nil || mode != mpolBind || !slices.Equal(nodes, []int{cxlNode}) {
		t.Fatalf("RangePolicy = %d %v %v, want MPOL_BIND [1]", mode, nodes, err)
	}
	// The memory is usable: write and read back a pattern over all of it.
	b := a.Bytes()
	for i := range b {
		b[i] = byte(i * 7)
	}
	for i := range b {
		if b[i] != byte(i*7) {
			t.Fatalf("arena byte %d = %d after write", i, b[i])
		}
	}
}

// TestArenaBindNode0Control shows placement really discriminates: the same
// arena bound to node 0 lands entirely on node 0.
func TestArenaBindNode0Control(t *testing.T) {
	requireGuest(t)
	newArena(t, numa.ArenaOptions{Node: 0, Policy: numa.PolicyBind}, 0)
}

func TestArenaPreferredNode1(t *testing.T) {
	requireGuest(t)
	setNumaBalancing(t, "1")
	a := newArena(t, numa.ArenaOptions{Node: cxlNode, Policy: numa.PolicyPreferred}, cxlNode)
	mode, nodes, err := a.RangePolicy()
	if err != nil || mode != mpolPref || !slices.Equal(nodes, []int{cxlNode}) {
		t.Fatalf("RangePolicy = %d %v %v, want MPOL_PREFERRED [1]", mode, nodes, err)
	}
}

func TestArenaPreferredManyNode1(t *testing.T) {
	requireGuest(t)
	newArena(t, numa.ArenaOptions{Node: cxlNode, Nodes: []int{cxlNode}, Policy: numa.PolicyPreferredMany}, cxlNode)
}

// TestArenaThreadModeNode1 runs with automatic NUMA balancing off: thread
// mode sets no VMA policy, so the balancer may move the pages to node 0
// (see TestWarmTierOnNode1).
func TestArenaThreadModeNode1(t *testing.T) {
	requireGuest(t)
	setNumaBalancing(t, "0")
	a := newArena(t, numa.ArenaOptions{Node: cxlNode, Policy: numa.PolicyBind, Mode: numa.ModeThread}, cxlNode)
	if n, ok := a.Bound(); !ok || n != cxlNode {
		t.Fatalf("Bound() = %d, %v; want 1, true", n, ok)
	}
	// Thread mode sets no VMA policy on the range.
	if mode, _, err := a.RangePolicy(); err != nil || mode != 0 {
		t.Fatalf("RangePolicy in thread mode = %d, %v; want MPOL_DEFAULT", mode, err)
	}
}

func TestArenaAutoNodeIsNode1(t *testing.T) {
	requireGuest(t)
	a := newArena(t, numa.ArenaOptions{Node: numa.AutoNode}, cxlNode)
	if n, ok := a.Bound(); !ok || n != cxlNode {
		t.Fatalf("AutoNode arena Bound() = %d, %v; want 1, true", n, ok)
	}
}

func TestArenaRebindMovesPagesToNode1(t *testing.T) {
	requireGuest(t)
	a := newArena(t, numa.ArenaOptions{Node: 0, Policy: numa.PolicyBind}, 0)
	if err := a.Rebind(numa.PolicyBind, cxlNode); err != nil {
		t.Fatalf("Rebind to node 1: %v", err)
	}
	checkPlacement(t, a, cxlNode)
}

func TestArenaNode2ClearError(t *testing.T) {
	requireGuest(t)
	a, err := numa.NewArena(numa.ArenaOptions{Bytes: arenaBytes, Node: 2, Policy: numa.PolicyBind})
	if err == nil {
		a.Close()
		t.Fatal("NewArena bound to node 2, which does not exist")
	}
	if !errors.Is(err, numa.ErrNoSuchNode) {
		t.Fatalf("error = %v, want ErrNoSuchNode", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "node 2") || !strings.Contains(msg, "0-1") || strings.Contains(msg, "\n") {
		t.Fatalf("error %q does not name node 2 and the online nodes 0-1 in one line", msg)
	}
	// With FallbackPreferred the arena starts unbound and says why.
	a, err = numa.NewArena(numa.ArenaOptions{Bytes: 1 << 20, Node: 2, Fallback: numa.FallbackPreferred})
	if err != nil {
		t.Fatalf("FallbackPreferred: %v", err)
	}
	defer a.Close()
	if _, ok := a.Bound(); ok || !errors.Is(a.FallbackErr(), numa.ErrNoSuchNode) {
		t.Fatalf("fallback arena Bound ok=%v FallbackErr=%v", ok, a.FallbackErr())
	}
}

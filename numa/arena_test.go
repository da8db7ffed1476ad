package numa

import (
	"errors"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

const arenaTestBytes = 8 << 20

// requireOnNode binds an arena as configured and requires 100% placement on
// opts.Node. Used with TIERCACHE_NUMA_NODE (0 here, 1 in the QEMU guest).
func requireOnNode(t *testing.T, opts ArenaOptions) *Arena {
	t.Helper()
	a, err := NewArena(opts)
	if errors.Is(err, ErrPermission) {
		skipOrFail(t, "binding needs CAP_SYS_NICE here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if n, ok := a.Bound(); !ok || n != opts.Node {
		t.Fatalf("Bound() = %d, %v; want %d, true (fallback: %v)", n, ok, opts.Node, a.FallbackErr())
	}
	rep, err := a.PlacementReport(0)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Fraction != 1 || rep.Missing != 0 || rep.Samples != a.Len()/os.Getpagesize() {
		t.Fatalf("placement on node %d: %+v, want all pages there", opts.Node, rep)
	}
	if rep.CrossCheck == 0 {
		t.Fatalf("no get_mempolicy cross-check: %+v", rep)
	}
	t.Logf("node %d, %s/%s: %d pages sampled, fraction %.3f, per node %v",
		opts.Node, opts.Policy, opts.Mode, rep.Samples, rep.Fraction, rep.PerNode)
	return a
}

func TestArenaBindPlacement(t *testing.T) {
	node := testNode(t)
	a := requireOnNode(t, ArenaOptions{Bytes: arenaTestBytes, Node: node})
	mode, nodes, err := a.RangePolicy()
	if err != nil {
		t.Fatal(err)
	}
	if mode != unix.MPOL_BIND || !slices.Equal(nodes, []int{node}) {
		t.Fatalf("RangePolicy = %d %v, want MPOL_BIND [%d]", mode, nodes, node)
	}
	// The arena is usable memory.
	b := a.Bytes()
	b[len(b)-1] = 42
	if b[len(b)-1] != 42 || len(b) != arenaTestBytes {
		t.Fatal("arena memory not usable")
	}
}

func TestArenaPolicies(t *testing.T) {
	node := testNode(t)
	for _, p := range []Policy{PolicyPreferred, PolicyPreferredMany, PolicyWeightedInterleave} {
		t.Run(p.String(), func(t *testing.T) {
			a, err := NewArena(ArenaOptions{Bytes: arenaTestBytes, Node: node, Policy: p})
			if p == PolicyWeightedInterleave && !hasWeightedInterleave() {
				// Linux < 6.9: the clear error is the behaviour.
				if !errors.Is(err, ErrPolicyUnsupported) || !strings.Contains(err.Error(), "6.9+") {
					t.Fatalf("weighted-interleave on a kernel without it: %v, want ErrPolicyUnsupported", err)
				}
				t.Logf("kernel without weighted interleave: %v", err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			f, err := a.Placement(256)
			if err != nil {
				t.Fatal(err)
			}
			if f != 1 {
				t.Fatalf("placement %.3f on node %d, want 1", f, node)
			}
			mode, nodes, err := a.RangePolicy()
			if err != nil || mode != p.kernelMode() || !slices.Equal(nodes, []int{node}) {
				t.Fatalf("RangePolicy = %d %v %v, want %d [%d]", mode, nodes, err, p.kernelMode(), node)
			}
		})
	}
}

func TestArenaThreadMode(t *testing.T) {
	node := testNode(t)
	a := requireOnNode(t, ArenaOptions{Bytes: arenaTestBytes, Node: node, Mode: ModeThread})
	// Thread mode sets no VMA policy on the range.
	if mode, _, err := a.RangePolicy(); err != nil || mode != unix.MPOL_DEFAULT {
		t.Fatalf("RangePolicy in thread mode = %d, %v; want MPOL_DEFAULT", mode, err)
	}
}

func TestArenaHugePages(t *testing.T) {
	requireOnNode(t, ArenaOptions{Bytes: 4 << 20, Node: testNode(t), HugePages: true})
}

func TestArenaRebind(t *testing.T) {
	node := testNode(t)
	a := requireOnNode(t, ArenaOptions{Bytes: arenaTestBytes, Node: node})
	if err := a.Rebind(PolicyPreferred, node); err != nil {
		t.Fatal(err)
	}
	if mode, nodes, err := a.RangePolicy(); err != nil || mode != unix.MPOL_PREFERRED || !slices.Equal(nodes, []int{node}) {
		t.Fatalf("after Rebind: %d %v %v", mode, nodes, err)
	}
	if f, err := a.Placement(0); err != nil || f != 1 {
		t.Fatalf("after Rebind placement %v %v", f, err)
	}
	if err := a.Rebind(PolicyBind, 7); !errors.Is(err, ErrNoSuchNode) {
		t.Fatalf("Rebind to node 7: %v, want ErrNoSuchNode", err)
	}
}

func TestArenaMissingNode(t *testing.T) {
	_, err := NewArena(ArenaOptions{Bytes: arenaTestBytes, Node: 7})
	if !errors.Is(err, ErrNoSuchNode) {
		t.Fatalf("err = %v, want ErrNoSuchNode", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "node 7 does not exist") || !strings.Contains(msg, "online nodes: ") {
		t.Fatalf("error %q does not name node 7 and list the nodes", msg)
	}
	t.Logf("%v", err)
}

func TestArenaFakeSysfsErrors(t *testing.T) {
	root := fakeCXLBox(t, "nodelist")
	_, err := NewArena(ArenaOptions{Bytes: arenaTestBytes, Node: 2, SysfsRoot: root})
	if !errors.Is(err, ErrNoMemory) || !strings.Contains(err.Error(), "node 2 has no memory; nodes with memory: 0-1") {
		t.Fatalf("node 2 (no memory): %v", err)
	}
	_, err = NewArena(ArenaOptions{Bytes: arenaTestBytes, Node: 7, SysfsRoot: root})
	if !errors.Is(err, ErrNoSuchNode) || !strings.Contains(err.Error(), "node 7 does not exist; online nodes: 0-2, nodes with memory: 0-1") {
		t.Fatalf("node 7: %v", err)
	}
	// Node 1 passes the fake topology; the real kernel's cpuset decides.
	if real, _ := ReadTopology(); real != nil {
		if _, ok := real.Node(1); !ok {
			_, err = NewArena(ArenaOptions{Bytes: arenaTestBytes, Node: 1, SysfsRoot: root})
			if !errors.Is(err, ErrNotAllowed) || !strings.Contains(err.Error(), "node 1 is not in this process's cpuset") {
				t.Fatalf("node 1 of the fake tree on this kernel: %v", err)
			}
		}
	}
	_, err = NewArena(ArenaOptions{Bytes: arenaTestBytes, Nodes: []int{0, 2, 7}, Policy: PolicyPreferredMany, SysfsRoot: root})
	if !errors.Is(err, ErrNoSuchNode) || !errors.Is(err, ErrNoMemory) {
		t.Fatalf("nodes 0,2,7: %v, want both problems", err)
	}
}

func TestArenaFallbackPreferred(t *testing.T) {
	a, err := NewArena(ArenaOptions{Bytes: arenaTestBytes, Node: 7, Fallback: FallbackPreferred})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if n, ok := a.Bound(); ok || n != Unbound {
		t.Fatalf("Bound() = %d, %v; want unbound", n, ok)
	}
	if !errors.Is(a.FallbackErr(), ErrNoSuchNode) {
		t.Fatalf("FallbackErr = %v", a.FallbackErr())
	}
	// Placement is measured against the configured node 7: nothing there.
	if f, err := a.Placement(64); err != nil || f != 0 {
		t.Fatalf("Placement = %v, %v; want 0", f, err)
	}
}

func TestArenaUnboundAndLazy(t *testing.T) {
	a, err := NewArena(ArenaOptions{Bytes: arenaTestBytes, Node: Unbound, NoPrefault: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	rep, err := a.PlacementReport(0)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Missing != rep.Samples {
		t.Fatalf("untouched arena: %+v, want every page missing", rep)
	}
	b := a.Bytes()
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	if f, err := a.Placement(0); err != nil || f != 1 {
		t.Fatalf("after touching: %v %v", f, err)
	}
}

func TestArenaAutoNode(t *testing.T) {
	a, err := NewArena(ArenaOptions{Bytes: arenaTestBytes, Node: AutoNode})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	topo, _ := ReadTopology()
	want, _ := topo.WarmNode()
	if n, _ := a.Bound(); n != want {
		t.Fatalf("AutoNode bound to %d, want %d", n, want)
	}
}

func TestArenaOptionsValidate(t *testing.T) {
	o := ArenaOptions{Bytes: -1, Node: -5, Policy: 9, Mode: 3, Fallback: 4, Nodes: []int{5000}}
	o.EnsureDefaults()
	err := o.Validate()
	if !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("err = %v", err)
	}
	if n := strings.Count(err.Error(), "\n") + 1; n != 6 {
		t.Fatalf("Validate reported %d problems, want 6:\n%v", n, err)
	}
	for _, s := range []string{"bind", "preferred", "preferred-many", "weighted-interleave"} {
		if p, err := ParsePolicy(s); err != nil || p.String() != s {
			t.Errorf("ParsePolicy(%q) = %v, %v", s, p, err)
		}
	}
	if _, err := ParsePolicy("interleave"); err == nil {
		t.Error("ParsePolicy(interleave) succeeded")
	}
	if m, err := ParseMode("thread"); err != nil || m != ModeThread {
		t.Error("ParseMode(thread)")
	}
	if f, err := ParseFallback("preferred"); err != nil || f != FallbackPreferred {
		t.Error("ParseFallback(preferred)")
	}
}

func TestArenaCloseIdempotent(t *testing.T) {
	a, err := NewArena(ArenaOptions{Bytes: 4096, Node: Unbound})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Placement(1); !errors.Is(err, ErrClosed) {
		t.Fatalf("Placement after Close: %v", err)
	}
}

func TestNodemask(t *testing.T) {
	m := maskOf(0, 3, 64, 130)
	if len(m) != 3 || !slices.Equal(m.nodes(), []int{0, 3, 64, 130}) || !m.has(64) || m.has(1) {
		t.Fatalf("mask %v nodes %v", m, m.nodes())
	}
	if _, maxnode := m.ptr(); maxnode != 3*64+1 {
		t.Fatalf("maxnode = %d, want %d (kernel reads maxnode-1 bits)", maxnode, 3*64+1)
	}
	if p, maxnode := nodemask(nil).ptr(); p != nil || maxnode != 0 {
		t.Fatal("nil mask must pass NULL, 0")
	}
}

// TestPolicyErrors: EPERM and an unknown mode map to sentinels with a
// message that says what to do (EPERM cannot be provoked here as root).
func TestPolicyErrors(t *testing.T) {
	err := policyErr("mbind 4096 bytes", PolicyBind, []int{1}, unix.EPERM)
	if !errors.Is(err, ErrPermission) || !errors.Is(err, unix.EPERM) || !strings.Contains(err.Error(), "CAP_SYS_NICE") ||
		!strings.Contains(err.Error(), "node(s) 1") {
		t.Fatalf("EPERM: %v", err)
	}
	err = policyErr("mbind", PolicyWeightedInterleave, []int{0}, unix.EINVAL)
	if !errors.Is(err, ErrPolicyUnsupported) || !strings.Contains(err.Error(), "6.9") {
		t.Fatalf("EINVAL weighted-interleave: %v", err)
	}
	err = policyErr("mbind", PolicyBind, []int{0}, unix.EINVAL)
	if errors.Is(err, ErrPolicyUnsupported) || !errors.Is(err, unix.EINVAL) {
		t.Fatalf("EINVAL bind: %v", err)
	}
}

// TestThreadPolicyRestored: the helper used by ModeThread leaves the thread
// with MPOL_DEFAULT (N7).
func TestThreadPolicyRestored(t *testing.T) {
	// Unlocked only on success: a failed test leaves the thread locked, so
	// the runtime retires it instead of reusing a thread with a policy.
	runtime.LockOSThread()
	if err := setMempolicy(mpolBind, maskOf(testNode(t))); err != nil {
		t.Fatal(err)
	}
	var mode int32
	if err := getMempolicy(&mode, nil, 0, 0); err != nil || mode != mpolBind {
		t.Fatalf("thread policy = %d, %v; want MPOL_BIND", mode, err)
	}
	if err := restoreDefaultPolicy(); err != nil {
		t.Fatal(err)
	}
	if err := getMempolicy(&mode, nil, 0, 0); err != nil || mode != mpolDefault {
		t.Fatalf("thread policy after restore = %d, %v", mode, err)
	}
	runtime.UnlockOSThread()
}

// hasWeightedInterleave: Linux 6.9+ publishes the weights directory
// (Documentation/ABI/testing/sysfs-kernel-mm-mempolicy-weighted-interleave)
// along with MPOL_WEIGHTED_INTERLEAVE.
func hasWeightedInterleave() bool {
	_, err := os.Stat("/sys/kernel/mm/mempolicy/weighted_interleave")
	return err == nil
}

func TestArenaReleaseFreesPages(t *testing.T) {
	a, err := NewArena(ArenaOptions{Bytes: arenaTestBytes, Node: Unbound, NoPrefault: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b := a.Bytes()
	for i := range b {
		b[i] = 7
	}
	ps := os.Getpagesize()
	// Half the arena, from a byte past a page boundary: the partial first
	// page stays.
	n, err := a.Release(1, len(b)/2)
	if err != nil {
		t.Fatal(err)
	}
	if want := (1+len(b)/2)/ps*ps - ps; n != want {
		t.Fatalf("released %d bytes, want %d", n, want)
	}
	rep, err := a.PlacementReport(0)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Missing != n/ps {
		t.Fatalf("after releasing %d pages: %+v", n/ps, rep)
	}
	if b[0] != 7 || b[ps] != 0 || b[ps+n-1] != 0 || b[ps+n] != 7 {
		t.Fatalf("bytes around the released range: %d %d %d %d", b[0], b[ps], b[ps+n-1], b[ps+n])
	}
	if n, err := a.Release(len(b)-10, 10); n != 0 || err != nil {
		t.Fatalf("a range inside one page released %d bytes, %v", n, err)
	}
}

package numa

import (
	"fmt"
	"os"
)

// Binder places memory that its caller mapped and owns (not an Arena) on
// one node: the emulated cold store's off-heap index tables, each bound
// as it is mapped, before any of its pages is touched. NewBinder checks
// the node once, so a node that does not exist is an error at start (N1);
// Bind can still fail later (EPERM under a seccomp profile, a node taken
// offline), and its caller decides whether that matters.
type Binder struct {
	node     int
	mask     nodemask
	pageSize int
}

// NewBinder checks that node is online, has memory and is in this
// process's cpuset (N1), reading the topology under sysfsRoot ("" is
// /sys), and returns a Binder for it.
func NewBinder(node int, sysfsRoot string) (*Binder, error) {
	if node < 0 || node >= maxGetMempolicyMaskBits {
		return nil, fmt.Errorf("%w: node %d is out of range 0..%d", ErrInvalidOptions, node, maxGetMempolicyMaskBits-1)
	}
	if sysfsRoot == "" {
		sysfsRoot = DefaultSysfsRoot
	}
	topo, err := ReadTopologyFrom(sysfsRoot)
	if err != nil {
		return nil, err
	}
	if err := topo.checkNode(node); err != nil {
		return nil, err
	}
	if err := checkAllowed([]int{node}); err != nil {
		return nil, err
	}
	return &Binder{node: node, mask: maskOf(node), pageSize: os.Getpagesize()}, nil
}

// Node is the node the Binder binds to.
func (b *Binder) Node() int { return b.node }

// Bind gives mem, which must start on a page boundary (an mmap'd range),
// the policy MPOL_BIND to the node over its whole pages, with
// MPOL_MF_MOVE: pages already touched move there too (N12). mem must stay
// mapped while the call runs.
func (b *Binder) Bind(mem []byte) error {
	if len(mem) == 0 {
		return nil
	}
	if baseAddr(mem)%uintptr(b.pageSize) != 0 {
		return fmt.Errorf("%w: Bind needs a page-aligned range", ErrInvalidOptions)
	}
	if err := mbind(baseAddr(mem), uintptr(len(mem)), mpolBind, b.mask, mpolMFMove); err != nil {
		return policyErr(fmt.Sprintf("mbind %d bytes", len(mem)), PolicyBind, []int{b.node}, err)
	}
	return nil
}

// Placement samples up to samples pages of mem spread evenly over it
// (samples <= 0: every page) as Arena.PlacementReport does, with the node
// as the target. Pages never touched hold no memory and count as Missing;
// Resident is the fraction on the node among the others.
func (b *Binder) Placement(mem []byte, samples int) (PlacementReport, error) {
	return samplePages(mem, b.pageSize, b.mask, PolicyBind, samples)
}

package numa

import (
	"errors"
	"os"
	"testing"
)

// TestBinderPlacesCallersMapping (N12): a mapping the caller made, bound
// before it is touched, has every touched page on the node; untouched
// pages count as Missing, and Resident is measured over the others; a
// page touched before Bind moves there too.
func TestBinderPlacesCallersMapping(t *testing.T) {
	node := testNode(t)
	b, err := NewBinder(node, "")
	if err != nil {
		t.Fatalf("NewBinder(%d): %v", node, err)
	}
	ps := os.Getpagesize()
	mem, err := mmapAnon(64 * ps)
	if err != nil {
		t.Fatal(err)
	}
	defer munmap(mem)
	mem[0] = 1 // touched before Bind: MPOL_MF_MOVE moves it
	if err := b.Bind(mem); err != nil {
		t.Fatalf("Bind: %v", err)
	}
	for i := 0; i < len(mem)/2; i += ps {
		mem[i] = 1
	}
	rep, err := b.Placement(mem, 0)
	if err != nil {
		t.Fatalf("Placement: %v", err)
	}
	if rep.Samples != 64 || rep.Missing != 32 || rep.OnTarget != 32 || rep.Resident != 1 || rep.Fraction != 0.5 {
		t.Fatalf("placement = %+v, want 64 samples, 32 missing, 32 on node %d, Resident 1, Fraction 0.5", rep, node)
	}
	if rep.PerNode[node] != 32 {
		t.Fatalf("per node = %v, want 32 pages on node %d", rep.PerNode, node)
	}
	if err := b.Bind(mem[1:]); !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("Bind of an unaligned range = %v, want ErrInvalidOptions", err)
	}
}

// TestBinderMissingNode (N1): a node that does not exist is refused by
// NewBinder, before any memory-policy syscall, naming the node.
func TestBinderMissingNode(t *testing.T) {
	_, err := NewBinder(7, "")
	if !errors.Is(err, ErrNoSuchNode) {
		t.Fatalf("NewBinder(7) = %v, want ErrNoSuchNode", err)
	}
	if _, err := NewBinder(-1, ""); !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("NewBinder(-1) = %v, want ErrInvalidOptions", err)
	}
}

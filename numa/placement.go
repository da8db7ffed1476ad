package numa

import (
	"errors"
	"fmt"
	"syscall"
)

// ErrPlacementMismatch: move_pages and get_mempolicy disagree about a page.
var ErrPlacementMismatch = errors.New("numa: move_pages and get_mempolicy disagree on a page's node")

// PlacementReport is the result of sampling the arena's pages.
type PlacementReport struct {
	Samples    int         // pages sampled
	OnTarget   int         // pages on an intended node (any present page when unbound by configuration)
	Missing    int         // pages with a negative move_pages status (not present, zero page)
	PerNode    map[int]int // node id -> sampled pages there
	CrossCheck int         // pages also checked with get_mempolicy(MPOL_F_NODE|MPOL_F_ADDR)
	Fraction   float64     // OnTarget / Samples
	Resident   float64     // OnTarget / (Samples - Missing): among the pages that hold memory; 0 when none does
}

// crossCheckPages bounds the get_mempolicy cross-checks per call.
const crossCheckPages = 64

// Placement samples up to samples pages spread evenly over the arena
// (samples <= 0: every page) and returns the fraction on the intended node.
func (a *Arena) Placement(samples int) (float64, error) {
	r, err := a.PlacementReport(samples)
	return r.Fraction, err
}

// PlacementReport samples pages with move_pages(nodes=NULL) and cross-checks
// a subset with get_mempolicy(MPOL_F_NODE|MPOL_F_ADDR).
func (a *Arena) PlacementReport(samples int) (PlacementReport, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return PlacementReport{}, ErrClosed
	}
	return samplePages(a.mem, a.pageSize, a.target, a.policy, samples)
}

// samplePages samples up to samples pages of mem (samples <= 0: every
// page) with move_pages(nodes=NULL), cross-checks a subset with
// get_mempolicy(MPOL_F_NODE|MPOL_F_ADDR), and counts those on target (any
// present page when target is nil). p only names the policy in errors.
func samplePages(mem []byte, pageSize int, target nodemask, p Policy, samples int) (PlacementReport, error) {
	pages := (len(mem) + pageSize - 1) / pageSize
	if samples <= 0 || samples > pages {
		samples = pages
	}
	base := baseAddr(mem)
	rep := PlacementReport{Samples: samples, PerNode: map[int]int{}}
	const batch = 1024
	addrs := make([]uintptr, 0, min(batch, samples))
	status := make([]int32, min(batch, samples))
	step := 1
	for i := 0; i < samples; i += len(addrs) {
		addrs = addrs[:0]
		for j := i; j < samples && len(addrs) < batch; j++ {
			page := int(int64(j) * int64(pages) / int64(samples))
			addrs = append(addrs, base+uintptr(page*pageSize))
		}
		st := status[:len(addrs)]
		for k := range st {
			st[k] = moveStatusSentinel
		}
		if err := movePagesQuery(addrs, st); err != nil {
			return rep, policyErr("move_pages(nodes=NULL)", p, target.nodes(), err)
		}
		if i == 0 {
			step = max(1, samples/crossCheckPages)
		}
		for k, s := range st {
			if s < 0 {
				rep.Missing++
				continue
			}
			node := int(s)
			rep.PerNode[node]++
			if target == nil || target.has(node) {
				rep.OnTarget++
			}
			if (i+k)%step == 0 && rep.CrossCheck < crossCheckPages {
				var got int32 = -1
				if err := getMempolicy(&got, nil, addrs[k], mpolFNode|mpolFAddr); err != nil {
					if errors.Is(err, syscall.EPERM) {
						return rep, policyErr("get_mempolicy(MPOL_F_NODE|MPOL_F_ADDR)", p, target.nodes(), err)
					}
					return rep, fmt.Errorf("numa: get_mempolicy(MPOL_F_NODE|MPOL_F_ADDR) at page %d: %w", (i + k), err)
				}
				rep.CrossCheck++
				if int(got) != node {
					return rep, fmt.Errorf("%w: sample %d: move_pages says node %d, get_mempolicy says node %d",
						ErrPlacementMismatch, i+k, node, got)
				}
			}
		}
	}
	if samples > 0 {
		rep.Fraction = float64(rep.OnTarget) / float64(samples)
	}
	if present := samples - rep.Missing; present > 0 {
		rep.Resident = float64(rep.OnTarget) / float64(present)
	}
	return rep, nil
}

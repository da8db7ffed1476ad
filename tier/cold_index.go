package tier

import (
	"fmt"
	"sync"
	"time"

	"github.com/tiercache/tiercache/numa"
)

// coldIndexBinder resolves ColdIndexNode to the binder that places the
// emulated store's off-heap index tables (nil: they stay unbound, T33).
// A node that does not exist, has no memory or is outside the cpuset is
// an error here, at Open, as the warm arena's node is (numa N1).
func (o *Options) coldIndexBinder() (*numa.Binder, error) {
	node := o.ColdIndexNode
	if node == numa.AutoNode {
		node = o.warmNode()
	}
	if node == numa.Unbound {
		return nil, nil
	}
	b, err := numa.NewBinder(node, o.WarmArena.SysfsRoot)
	if err != nil {
		return nil, fmt.Errorf("cold index node %d (ColdIndexNode, the sidecar's cold.index_node): %w", node, err)
	}
	return b, nil
}

// ColdIndexNodeFor is the node Open would bind the emulated store's
// off-heap index to (ColdIndexNode resolved, AutoNode to warm's node), or
// numa.Unbound, and the error Open would refuse with for an unusable node
// (T33; the sidecar's `tiercache numa` prints it).
func (o *Options) ColdIndexNodeFor() (int, error) {
	b, err := o.coldIndexBinder()
	if b == nil || err != nil {
		return numa.Unbound, err
	}
	return b.Node(), nil
}

// warmNode is the node the warm arena is configured to bind to, resolved
// as numa.NewArena resolves it (the first of Nodes, AutoNode's pick), or
// numa.Unbound: no warm tier, warm unbound by configuration, AutoNode
// finding no CPU-less node, or a warm node that does not exist (the warm
// arena's own Open reports that). The cold store opens before the DRAM
// logs, so this is the configuration's answer, not the arena's.
func (o *Options) warmNode() int {
	a := o.WarmArena
	switch {
	case o.WarmBytes == 0:
		return numa.Unbound
	case len(a.Nodes) > 0:
		return a.Nodes[0]
	case a.Node == numa.Unbound:
		return numa.Unbound
	}
	root := a.SysfsRoot
	if root == "" {
		root = numa.DefaultSysfsRoot
	}
	topo, err := numa.ReadTopologyFrom(root)
	if err != nil {
		return numa.Unbound
	}
	n, _, err := topo.WarmNodeFor(a.Node)
	if err != nil {
		return numa.Unbound
	}
	return n
}

// indexPlacementEvery is how often Stats samples the index's pages again:
// the sampling holds the store's read lock (writers wait) for a
// move_pages and up to 64 get_mempolicy calls per table sampled.
const indexPlacementEvery = time.Second

// indexPlacementSamples is how many pages of each sampled off-heap table
// Stats samples.
const indexPlacementSamples = 64

// indexPlacementTables is how many of the off-heap tables Stats samples
// at most, spread evenly over them: a large tag index is some 2,000
// segments (logstore E35), and sampling each would hold the read lock
// for a syscall per segment.
const indexPlacementTables = 16

// coldIndex reports where the emulated store's index is: its node, and
// the fraction of its off-heap tables' resident pages on that node,
// measured at most once a second while its tables stay the same.
type coldIndex struct {
	binder *numa.Binder // nil: unbound

	mu       sync.Mutex
	measured time.Time
	tables   [2]int // the number and bytes of the off-heap tables measured
	frac     float64
}

// placement is the fraction of the sampled resident pages of the tables
// each calls fn with (up to indexPlacementTables of them) that are on the
// binder's node; -1 without a binder
// or a resident page to measure, or when sampling fails.
func (ci *coldIndex) placement(each func(fn func(mem []byte, bound bool))) float64 {
	if ci == nil || ci.binder == nil {
		return -1
	}
	ci.mu.Lock()
	defer ci.mu.Unlock()
	var tables [2]int
	each(func(mem []byte, _ bool) { tables[0], tables[1] = tables[0]+1, tables[1]+len(mem) })
	if !ci.measured.IsZero() && time.Since(ci.measured) < indexPlacementEvery && tables == ci.tables {
		return ci.frac
	}
	var on, present int
	var failed bool
	every, i := max(1, (tables[0]+indexPlacementTables-1)/indexPlacementTables), 0
	each(func(mem []byte, _ bool) {
		if i++; (i-1)%every != 0 {
			return
		}
		rep, err := ci.binder.Placement(mem, indexPlacementSamples)
		if err != nil {
			failed = true
			return
		}
		on += rep.OnTarget
		present += rep.Samples - rep.Missing
	})
	ci.measured, ci.tables, ci.frac = time.Now(), tables, -1
	if !failed && present > 0 {
		ci.frac = float64(on) / float64(present)
	}
	return ci.frac
}

// node is the node the index is bound to, or -1.
func (ci *coldIndex) node() int {
	if ci == nil || ci.binder == nil {
		return numa.Unbound
	}
	return ci.binder.Node()
}

package coldstore

import (
	"fmt"
	"sync"
	"time"

	"github.com/tiercache/tiercache/numa"
)

// indexBinder resolves IndexNode (AutoNode to warmNode) to the binder that
// places the emulated store's off-heap index tables (nil: they stay
// unbound, CS2). A node that does not exist, has no memory or is outside
// the cpuset is an error here, at Open, as the warm arena's node is (numa
// N1).
func (c *Config) indexBinder(warmNode int) (*numa.Binder, error) {
	node := c.IndexNode
	if node == numa.AutoNode {
		node = warmNode
	}
	if node == numa.Unbound {
		return nil, nil
	}
	b, err := numa.NewBinder(node, c.SysfsRoot)
	if err != nil {
		return nil, fmt.Errorf("coldstore: cold index node %d (IndexNode, the sidecar's cold.index_node): %w", node, err)
	}
	return b, nil
}

// IndexNodeFor is the node Open would bind the emulated store's off-heap
// index to when the warm tier is configured for warmNode (IndexNode
// resolved, AutoNode to warmNode), or numa.Unbound, and the error Open
// would refuse with for an unusable node (CS2; the sidecar's `tiercache
// numa` prints it).
func (c Config) IndexNodeFor(warmNode int) (int, error) {
	b, err := c.indexBinder(warmNode)
	if b == nil || err != nil {
		return numa.Unbound, err
	}
	return b.Node(), nil
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

// indexPlace reports where the emulated store's index is: its node, and
// the fraction of its off-heap tables' resident pages on that node,
// measured at most once a second while its tables stay the same.
type indexPlace struct {
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
func (ci *indexPlace) placement(each func(fn func(mem []byte, bound bool))) float64 {
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
func (ci *indexPlace) node() int {
	if ci == nil || ci.binder == nil {
		return numa.Unbound
	}
	return ci.binder.Node()
}

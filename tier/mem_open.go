package tier

import (
	"fmt"

	"github.com/tiercache/tiercache/numa"
	"github.com/tiercache/tiercache/tier/dram"
)

// WarmConfig configures the warm tier: a log of off-heap records in an
// arena that may be bound to a NUMA node (tier/dram, mem.go).
type WarmConfig struct {
	// WarmBytes is the warm arena size in bytes; 0 disables the warm tier.
	WarmBytes int64
	// WarmSegmentBytes is the warm segment size: the largest value warm
	// takes (larger ones go to cold). Default: WarmBytes/64 within
	// [64 KiB, 4 MiB], rounded down to 4 KiB.
	WarmSegmentBytes int
	// WarmArena places the arena (node, policy, fallback, huge pages); its
	// Bytes is set from WarmBytes. The zero value binds to node 0, strict.
	WarmArena numa.ArenaOptions
}

// segmentBytes is a log's default segment: a 64th of it within [lo, hi],
// rounded down to 4 KiB, and at least least (the largest value it must
// take).
func segmentBytes(total int64, lo, hi, least int) int {
	s := int(min(max(total/64, int64(lo)), int64(hi))) &^ 4095
	return max(s, least, 4096)
}

func (w *WarmConfig) ensureDefaults() {
	if w.WarmSegmentBytes == 0 && w.WarmBytes > 0 {
		w.WarmSegmentBytes = segmentBytes(w.WarmBytes, 64<<10, 4<<20, 0)
	}
}

func (w *WarmConfig) validate() []error {
	var errs []error
	if w.WarmBytes < 0 {
		errs = append(errs, fmt.Errorf("%w: WarmBytes %d must not be negative", ErrInvalidOptions, w.WarmBytes))
	}
	if w.WarmBytes > 0 && int64(w.WarmSegmentBytes)*2 > w.WarmBytes {
		errs = append(errs, fmt.Errorf("%w: WarmBytes %d holds fewer than 2 segments of %d bytes", ErrInvalidOptions, w.WarmBytes, w.WarmSegmentBytes))
	}
	return errs
}

// hotSegmentBytes is the hot log's segment: HotSegmentBytes, or a 64th of
// HotBytes within [4 KiB, 4 MiB] and at least HotMaxValue, but at most
// half of HotBytes: values over it go to warm whatever HotMaxValue says.
func (o *Options) hotSegmentBytes() int {
	if o.HotSegmentBytes > 0 {
		return o.HotSegmentBytes
	}
	return max(min(segmentBytes(o.HotBytes, 4<<10, 4<<20, o.HotMaxValue), int(o.HotBytes/2)&^4095), 4096)
}

// openLogs maps the DRAM tiers' arenas: hot in plain memory (huge pages
// unless HotNoHugePages), faulted in as it fills; warm as WarmArena
// places it.
func (o *Options) openLogs() (hot, warm *dram.Log[*entry], err error) {
	hot, err = dram.New[*entry](dram.Options{Name: "hot", Bytes: o.HotBytes, SegmentBytes: o.hotSegmentBytes(),
		Arena: numa.ArenaOptions{Node: numa.Unbound, NoPrefault: true, HugePages: !o.HotNoHugePages, Logger: o.Logger}})
	if err != nil {
		return nil, nil, err
	}
	if o.WarmBytes > 0 {
		ao := o.WarmArena
		if ao.Logger == nil {
			ao.Logger = o.Logger
		}
		if warm, err = dram.New[*entry](dram.Options{Name: "warm", Bytes: o.WarmBytes, SegmentBytes: o.WarmSegmentBytes, Arena: ao}); err != nil {
			hot.Close()
			return nil, nil, err
		}
	}
	return hot, warm, nil
}

// WarmArena is the warm log's arena (nil without a warm tier), for checks
// of its placement.
func (c *Cache) WarmArena() *numa.Arena {
	if w := c.mem.logs[memWarm]; w != nil {
		return w.Arena()
	}
	return nil
}

// WarmNode is the node the warm arena is configured to bind to, resolved
// as numa.NewArena resolves it (the first of Nodes, AutoNode's pick), or
// numa.Unbound: no warm tier, warm unbound by configuration, AutoNode
// finding no CPU-less node, or a warm node that does not exist (the warm
// arena's own Open reports that). The cold store opens before the DRAM
// logs, so this is the configuration's answer, not the arena's.
func (o *Options) WarmNode() int {
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

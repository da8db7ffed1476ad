package tier

import "math/bits"

// The memory model (docs/DESIGN.md, "Memory"): the warm arena is mapped
// off the Go heap at its full size; hot values, the directory and the
// copies on their way to cold live on the Go heap. The hot budget charges
// what a hot item really takes on the heap (cost), and ristretto's
// frequency sketch is taken out of it, so the Go heap the cache holds is
// about HotBytes + DirEntryBytes per key + the flusher's queue; Memory
// reports those figures and HeapBudget adds them up, and the sidecar sets
// its Go memory limit from that sum (cmd/tiercache).

// DirEntryBytes is the Go heap one directory entry takes for a key of up
// to 16 bytes: the entry allocated with its key (64 bytes) and its slot in
// the shard's map (a string header and a pointer, 24 bytes, in a Swiss
// table between 7/16 and 7/8 full, so 27 to 55 bytes a key). Longer keys
// add their length rounded up to 16. Measured by
// TestDirectoryCostCoversHeap.
const DirEntryBytes = 120

// heapSlack is the Go heap the budget leaves for everything else: request
// and reply buffers, the promotion sketch (2 MiB by default), the demotion
// queue, goroutine stacks, and room for the collector to work in.
const heapSlack = 8 << 20

// sketchBytes is what ristretto's TinyLFU takes for counters counters: a
// count-min sketch of 4 rows of 4-bit counters, the count rounded up to a
// power of two, and a Bloom-filter doorkeeper at 1% false positives (about
// 9.6 bits a counter).
func sketchBytes(counters int64) int64 {
	n := int64(1) << bits.Len64(uint64(max(counters, 1)-1))
	return 4*n/2 + counters*12/10
}

// hotMaxCost is ristretto's MaxCost: the hot budget less the sketch, which
// lives on the same heap; a sketch of more than half the budget (tiny test
// configurations) is not taken out.
func hotMaxCost(o *Options) int64 {
	s := sketchBytes(o.HotCounters)
	if s > o.HotBytes/2 {
		return o.HotBytes
	}
	return o.HotBytes - s
}

// Memory is the cache's own account of the memory it holds.
type Memory struct {
	HotBytes       int64 // the hot budget (sketch and items on the Go heap)
	WarmBytes      int64 // the warm arena, mapped off the Go heap
	DirectoryKeys  int64 // directory entries, tombstones included
	DirectoryBytes int64 // their Go heap, at DirEntryBytes each
	FlusherBytes   int64 // the most value bytes the flusher holds: its queue and its batches in flight
	HeapBudget     int64 // HotBytes + DirectoryBytes + FlusherBytes + slack: what the Go heap needs
}

// Memory returns the account. It takes each directory shard's read lock
// in turn (O(shards), not O(keys)).
func (c *Cache) Memory() Memory {
	m := Memory{HotBytes: c.o.HotBytes}
	if c.warm != nil {
		m.WarmBytes = c.warm.Stats().Capacity
	}
	for i := range c.dir.shards {
		sh := &c.dir.shards[i]
		sh.mu.RLock()
		m.DirectoryKeys += int64(len(sh.m))
		sh.mu.RUnlock()
	}
	m.DirectoryBytes = m.DirectoryKeys * DirEntryBytes
	if c.fl != nil {
		f := c.fl.Options()
		m.FlusherBytes = f.QueueBytes + int64(f.InFlight)*f.BatchBytes
	}
	m.HeapBudget = m.HotBytes + m.DirectoryBytes + m.FlusherBytes + heapSlack
	return m
}

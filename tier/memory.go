package tier

import "math/bits"

// The memory model (docs/DESIGN.md, "Memory"): the warm arena is mapped
// off the Go heap at its full size; hot values, the directory and the
// copies on their way to cold live on the Go heap. The hot budget charges
// what a hot item really takes on the heap (cost), and ristretto's
// frequency sketch is taken out of it, so the Go heap the cache holds is
// about HotBytes + DirEntryBytes per key + the flusher's queue; Memory
// reports those figures and HeapBudget adds them up, and the sidecar sets
// its Go memory limit from that sum (cmd/tiercache). Hot victims waiting
// in the demotion queue are counted while they wait (a burst of large
// victims takes up to DemoteQueue of them at once).

// DirEntryBytes is the Go heap one directory entry takes for a key of up
// to 16 bytes: the entry allocated with its key (64 bytes) and its slot in
// the shard's map (a string header and a pointer, 24 bytes, in a Swiss
// table between 7/16 and 7/8 full, so 27 to 55 bytes a key). Longer keys
// add their length rounded up to 16. Measured by
// TestDirectoryCostCoversHeap.
const DirEntryBytes = 120

// heapSlack is the Go heap the budget leaves for everything else: request
// and reply buffers, the promotion sketch (2 MiB by default), goroutine
// stacks; with a tenth of the DRAM budget (slack) on top, it is the room
// the collector works in. A limit nearer the live heap makes it collect
// so often that SET and GET throughput halves.
const heapSlack = 8 << 20

// slack is the heap budget's room beyond what the tiers hold: heapSlack
// plus a tenth of hot + warm, which is what the memory bound (1.10 × the
// DRAM budget + 32 MiB) leaves above the tiers.
func slack(hot, warm int64) int64 { return heapSlack + (hot+warm)/10 }

// sketchBytes is what ristretto's TinyLFU takes for counters counters: a
// count-min sketch of 4 rows of 4-bit counters, the count rounded up to a
// power of two, and a Bloom-filter doorkeeper at 1% false positives:
// -ln(0.01)/ln(2)² = 9.585 bits a counter, rounded up to a power of two.
func sketchBytes(counters int64) int64 {
	return 4*pow2(counters)/2 + pow2(counters*9585/1000+1)/8
}

// pow2 is the smallest power of two at least n (n >= 1).
func pow2(n int64) int64 { return int64(1) << bits.Len64(uint64(max(n, 1)-1)) }

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
	WarmIndexBytes int64 // warm's index, on the Go heap (21-43 bytes a warm item)
	DirectoryKeys  int64 // directory entries, tombstones included
	DirectoryBytes int64 // their Go heap, at DirEntryBytes each
	FlusherBytes   int64 // the most value bytes the flusher holds: its queue and its batches in flight
	DemotingBytes  int64 // hot victims waiting for warm (no longer charged to hot)
	HeapBudget     int64 // HotBytes + DirectoryBytes + WarmIndexBytes + FlusherBytes + DemotingBytes + slack: what the Go heap needs
}

// Memory returns the account. It takes each directory shard's read lock
// in turn (O(shards), not O(keys)).
func (c *Cache) Memory() Memory {
	m := Memory{HotBytes: c.o.HotBytes}
	if c.warm != nil {
		ws := c.warm.Stats()
		m.WarmBytes, m.WarmIndexBytes = ws.Capacity, ws.IndexBytes
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
	m.DemotingBytes = c.demoting.Load()
	m.HeapBudget = m.HotBytes + m.DirectoryBytes + m.WarmIndexBytes + m.FlusherBytes + m.DemotingBytes + slack(c.o.HotBytes, c.o.WarmBytes)
	return m
}

package tier

// The memory model (docs/DESIGN.md §6): the values of the DRAM tiers live
// off the Go heap, in the hot and warm logs' arenas (HotBytes + WarmBytes,
// mapped once); the Go heap holds the directory (DirEntryBytes a key, the
// LFU's links and its sketch among them), its expiry index (16 bytes a key
// with an expiry, ExpiryIndexBytes, T55), the copies on their way to cold
// that are not written from DRAM (values too large for it, drain and
// writethrough writes: the flusher's queue and batches), the LFU's
// frequency sketch, and slack. Memory
// reports those figures and HeapBudget adds up the heap part; the sidecar
// sets its Go memory limit from it (cmd/tiercache).

// DirEntryBytes is the Go heap one directory entry takes for a key of up
// to 16 bytes: the entry allocated with its key (112 bytes: the LFU's
// links and the key's hash, version, expiry, size, the key's header, the
// DRAM record's place), its slot in the shard's map (a string header and a
// pointer, 24 bytes, in a Swiss table between 7/16 and 7/8 full: 27 to 55
// bytes a key), its owner slot in a DRAM segment (8 bytes) and its share
// of the LFU's frequency sketch (16 to 32 bytes). Longer keys add their
// length rounded up to 16. Measured by TestDirectoryCostCoversHeap.
const DirEntryBytes = 200

// ExpiryIndexKeyBytes is the Go heap a key with an expiry takes in its
// shard's expiry index (T55): its slot's entry pointer and two links.
const ExpiryIndexKeyBytes = 16

// ColdIndexBytes is the most the emulated cold store's index takes a key
// (nvmekv/emu E25: the table grows with the keys, 24 to 67 bytes a key,
// measured at most 72 with its growth). With a cold tier, a key's index
// cost is DirEntryBytes + ColdIndexBytes.
const ColdIndexBytes = 72

// heapSlack is the Go heap the budget leaves for everything else: request
// and reply buffers, the promotion sketch (2 MiB by default), goroutine
// stacks; with a twentieth of the DRAM budget on top, and headroom in
// proportion to the heap held (heapHeadroom), it is the room the collector
// works in. A limit nearer the live heap makes it collect so often that
// SET and GET throughput halves.
const heapSlack = 8 << 20

// heapHeadroom is the room the budget leaves in proportion to what the
// heap holds (directory, flusher, sketch, remote tier), as GOGC does: a
// quarter of it (GOGC 25). A fixed room alone was too tight once that
// grew: with a remote tier at 50 MiB of DRAM (scripts/bench-shared) the
// collector ran 333 cycles and tripled the sidecar's CPU against no limit.
const heapHeadroom = 4

// slack is the heap budget's room beyond held, what the directory, the
// flusher, the sketch and the remote tier hold: heapSlack, a twentieth of
// hot + warm and held/heapHeadroom. The memory bound (1.10 × the DRAM
// budget + the directory + 32 MiB) also has to cover what is off the heap
// beside the tiers: the cold store's buffers and index, the binary.
func slack(hot, warm, held int64) int64 { return heapSlack + (hot+warm)/20 + held/heapHeadroom }

// Memory is the cache's own account of the memory it holds.
type Memory struct {
	HotBytes       int64 // the hot arena, mapped off the Go heap (faulted in as it fills)
	WarmBytes      int64 // the warm arena, mapped off the Go heap
	DirectoryKeys  int64 // directory entries, tombstones and flushed entries not purged yet included
	DirectoryBytes int64 // their Go heap, at DirEntryBytes each
	// ExpiryIndexBytes is the Go heap of the shards' expiry indexes (T55),
	// measured: 16 bytes a key with an expiry (at the most the shard held
	// at once) in chunks of 256, and 2 KiB a shard that has one; a sweep
	// that leaves a shard no key with an expiry drops its index.
	ExpiryIndexBytes int64
	FlusherBytes     int64 // the key and value bytes the flusher holds on the heap now (HeapHeld: copies queued and in flight; records it writes from DRAM are off the heap)
	SketchBytes      int64 // the LFU's frequency sketch (8 B a counter word, a power of two: two words a resident key, and two a KiB of DRAM once the keys weigh half of it)
	// RemoteBytes is the remote tier's Go heap now: the changes queued and
	// in flight to it, and its client's connection buffers (0 without one).
	RemoteBytes int64
	// LiveBytes is the Go heap of the live structures (T45), measured:
	// charged to hot, whose arena withholds as many bytes (so HotBytes
	// covers it and HeapBudget does not count it), yet on the Go heap:
	// GoLimit adds it.
	LiveBytes  int64
	HeapBudget int64 // DirectoryBytes + ExpiryIndexBytes + FlusherBytes + SketchBytes + RemoteBytes + slack: what the Go heap needs beside what hot covers
}

// GoLimit is what the Go memory limit follows: the heap budget and the
// live structures, which hot's budget covers but the Go heap holds.
func (m Memory) GoLimit() int64 { return m.HeapBudget + m.LiveBytes }

// Memory returns the account. It takes each directory shard's read lock
// in turn (O(shards), not O(keys)).
func (c *Cache) Memory() Memory {
	m := Memory{HotBytes: c.o.HotBytes, WarmBytes: c.o.WarmBytes}
	for i := range c.dir.shards {
		sh := &c.dir.shards[i]
		sh.mu.RLock()
		m.DirectoryKeys += int64(len(sh.m))
		if sh.exps != nil {
			m.ExpiryIndexBytes += sh.exps.bytes()
		}
		sh.mu.RUnlock()
	}
	m.DirectoryKeys += c.pg.pending.Load() // out of the maps, on the heap until purged (T14)
	m.DirectoryBytes = m.DirectoryKeys * DirEntryBytes
	if c.fl != nil {
		m.FlusherBytes = c.fl.HeapHeld()
	}
	c.mem.mu.Lock()
	m.SketchBytes = c.mem.sketchBytes()
	m.LiveBytes = c.mem.bytes[memLive]
	c.mem.mu.Unlock()
	if r := c.rt; r != nil {
		q := r.q.Stats()
		m.RemoteBytes = q.QueuedBytes + q.InFlightBytes
		if rs := r.s.Stats().Remote; rs != nil {
			m.RemoteBytes += rs.ClientBytes
		}
	}
	held := m.DirectoryBytes + m.ExpiryIndexBytes + m.FlusherBytes + m.SketchBytes + m.RemoteBytes
	m.HeapBudget = held + slack(c.o.HotBytes, c.o.WarmBytes, held)
	return m
}

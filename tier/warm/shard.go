package warm

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/cpu"
)

// Location packing: gen (24 bits) << 40 | offset within the shard (40 bits).
// The generation of the segment is bumped each time the segment is reused,
// so a location that outlived its segment is detected (W3).
const (
	locOffMask = 1<<locOffsetBits - 1
	genMask    = 1<<24 - 1
)

func packLoc(gen uint32, off int) uint64 { return uint64(gen)<<locOffsetBits | uint64(off) }
func locOff(loc uint64) int              { return int(loc & locOffMask) }
func locGen(loc uint64) uint32           { return uint32(loc >> locOffsetBits) }

type segment struct {
	gen  uint32 // bumped on reuse, never 0
	used int    // bytes written
}

// shard owns a slice of the arena (its segments), an index and a log. mu
// guards everything but the hit/miss counters and the records' hit flags.
type shard struct {
	_      cpu.CacheLinePad
	hits   atomic.Uint64
	misses atomic.Uint64
	_      cpu.CacheLinePad

	mu       sync.RWMutex
	closed   bool
	mem      []byte // this shard's segments, contiguous
	segBytes int
	idx      index
	segs     []segment
	tail     int   // segment being appended to
	woff     int   // append offset in tail
	spare    int   // empty segment that receives rescued items on eviction
	free     []int // never used yet
	fifo     []int // full segments, oldest first

	items     int64
	liveBytes int64
	evictions uint64 // live items handed to OnEvict (or dropped without one)
	expired   uint64 // expired items discarded by eviction
	rescued   uint64 // items given a second chance
	displaced uint64 // items pushed out by a hash collision (also in evictions)

	onEvict func(key, value []byte, m Meta)
	clock   func() int64
}

func newShard(mem []byte, segBytes int, onEvict func([]byte, []byte, Meta), clock func() int64) *shard {
	n := len(mem) / segBytes
	s := &shard{mem: mem, segBytes: segBytes, idx: newIndex(0), segs: make([]segment, n),
		onEvict: onEvict, clock: clock}
	for i := range s.segs {
		s.segs[i].gen = 1
	}
	s.tail, s.spare = 0, n-1
	for i := n - 2; i >= 1; i-- {
		s.free = append(s.free, i) // popped from the end: 1, 2, ...
	}
	return s
}

// lookup returns the arena offset of the live record for h and key, or -1.
// Callers hold mu (read or write).
func (s *shard) lookup(h uint64, key []byte) (off int, r recView) {
	loc, ok := s.idx.get(h)
	if !ok {
		return -1, r
	}
	off = locOff(loc)
	if s.segs[off/s.segBytes].gen != locGen(loc) {
		return -1, r // stale: cannot happen while W3 holds, but never served
	}
	r = readRecord(s.mem[off:], loadKeyWord(s.mem, off))
	if string(r.key) != string(key) {
		return -1, r // another key with the same 64-bit hash
	}
	return off, r
}

// alloc reserves size bytes at the end of the log, rotating and evicting
// a segment when the tail is full. Caller holds mu for writing.
func (s *shard) alloc(size int) int {
	if s.woff+size > s.segBytes {
		s.segs[s.tail].used = s.woff
		s.fifo = append(s.fifo, s.tail)
		if n := len(s.free); n > 0 {
			s.tail, s.woff = s.free[n-1], 0
			s.free = s.free[:n-1]
		} else {
			victim := s.fifo[0]
			s.fifo = append(s.fifo[:0], s.fifo[1:]...)
			// Rescue at most half a segment, and never so much that the new
			// record would not fit: each rotation frees room (W5).
			rescued := s.evict(victim, s.spare, min(s.segBytes/2, s.segBytes-size))
			s.tail, s.woff = s.spare, rescued
			s.spare = victim
			g := (s.segs[victim].gen + 1) & genMask
			if g == 0 {
				g = 1
			}
			s.segs[victim] = segment{gen: g}
		}
	}
	off := s.tail*s.segBytes + s.woff
	s.woff += size
	s.segs[s.tail].used = s.woff
	return off
}

// evict empties segment victim: live items read since they were written are
// copied to segment dst (up to limit bytes, hit flag cleared), expired ones
// are dropped, all others go to onEvict. It returns the bytes written to dst.
func (s *shard) evict(victim, dst, limit int) int {
	base, gen := victim*s.segBytes, s.segs[victim].gen
	dstBase, dstGen := dst*s.segBytes, s.segs[dst].gen
	w := 0
	var now int64 = -1
	for off := 0; off < s.segs[victim].used; {
		at := base + off
		r := readRecord(s.mem[at:], loadKeyWord(s.mem, at))
		size := r.size()
		off += size
		loc, ok := s.idx.get(r.hash)
		if !ok || loc != packLoc(gen, at) {
			continue // dead: deleted, overwritten or displaced
		}
		if r.meta.Expiry != 0 {
			if now < 0 {
				now = s.clock()
			}
			if r.meta.Expiry <= now {
				s.remove(r.hash, size)
				s.expired++
				continue
			}
		}
		if r.keyWord&flagHit != 0 && w+size <= limit {
			to := dstBase + w
			copy(s.mem[to:to+size], s.mem[at:at+size])
			storeKeyWord(s.mem, to, r.keyWord&^flagHit)
			s.idx.put(r.hash, packLoc(dstGen, to))
			w += size
			s.rescued++
			continue
		}
		s.evictions++
		if s.onEvict != nil {
			s.onEvict(r.key, r.value, r.meta)
		}
		s.remove(r.hash, size)
	}
	s.segs[dst].used = w
	return w
}

func (s *shard) remove(h uint64, size int) {
	s.idx.del(h)
	s.items--
	s.liveBytes -= int64(size)
}

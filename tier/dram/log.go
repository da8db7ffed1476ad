package dram

import (
	"fmt"

	"github.com/tiercache/tiercache/numa"
)

// Loc is where a record starts: its segment (plus one, so that the zero
// Loc is none) in the high 32 bits, its offset in the low 32.
type Loc uint64

// Segment is the segment index of a Loc (−1 for none).
func (l Loc) Segment() int { return int(l>>32) - 1 }

// Offset is the byte offset of a Loc in its segment.
func (l Loc) Offset() int { return int(uint32(l)) }

func makeLoc(seg, off int) Loc { return Loc(uint64(seg+1)<<32 | uint64(uint32(off))) }

// segment is one SegmentBytes slice of the arena.
type segment[O any] struct {
	used     int   // bytes appended
	live     int64 // bytes of records not freed
	owners   []O   // the owner of every record appended, in order (A1)
	seq      uint64
	state    segState
	cleaning bool
}

type segState uint8

const (
	segFree segState = iota
	segOpen
	segSealed
	segWithheld // lent out of the log (Withhold): no record goes there
)

// Log is a segmented log of records in one numa.Arena; O is what the
// owner of a record is to the caller (tier: its directory entry). See
// doc.go for what it decides and what it leaves to the caller.
type Log[O any] struct {
	o     Options
	arena *numa.Arena
	mem   []byte
	segs  []segment[O]
	free  []int32 // free segments, used last in first out
	open  int     // the open segment, −1 for none
	seq   uint64  // opening order
	live  int64
	used  int64
	// withheld: the segments Withhold took out of the log, their pages
	// given back to the kernel.
	withheld []int32
	closed   bool
}

// New maps the arena and returns an empty log.
func New[O any](o Options) (*Log[O], error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	n := o.Bytes / int64(o.SegmentBytes)
	ao := o.Arena
	ao.Bytes = int(n * int64(o.SegmentBytes))
	a, err := numa.NewArena(ao)
	if err != nil {
		return nil, fmt.Errorf("dram: %s arena of %d bytes: %w", o.Name, ao.Bytes, err)
	}
	l := &Log[O]{o: o, arena: a, mem: a.Bytes(), segs: make([]segment[O], n), open: -1}
	for i := int(n) - 1; i >= 0; i-- {
		l.free = append(l.free, int32(i))
	}
	return l, nil
}

// SegmentBytes is the largest record the log takes.
func (l *Log[O]) SegmentBytes() int { return l.o.SegmentBytes }

// Segments is the number of segments.
func (l *Log[O]) Segments() int { return len(l.segs) }

// Capacity is the arena's size in whole segments.
func (l *Log[O]) Capacity() int64 { return int64(len(l.segs)) * int64(l.o.SegmentBytes) }

// Live is the bytes of live records (A3).
func (l *Log[O]) Live() int64 { return l.live }

// Used is the bytes appended to segments that are not free: live records
// and the dead ones a cleaning could take back.
func (l *Log[O]) Used() int64 { return l.used }

// FreeSegments is the number of free segments.
func (l *Log[O]) FreeSegments() int { return len(l.free) }

// Room is the bytes Alloc can still place without a cleaning: what is left
// of the open segment and the free segments.
func (l *Log[O]) Room() int64 {
	r := int64(len(l.free)) * int64(l.o.SegmentBytes)
	if l.open >= 0 {
		r += int64(l.o.SegmentBytes - l.segs[l.open].used)
	}
	return r
}

// CanAlloc reports whether Alloc(n, _, keep) would place a record now.
func (l *Log[O]) CanAlloc(n, keep int) bool {
	if l.closed || n > l.o.SegmentBytes || n < 0 {
		return false
	}
	return l.open >= 0 && l.segs[l.open].used+n <= l.o.SegmentBytes || len(l.free) > keep
}

// Arena is the memory the log lives in (placement checks).
func (l *Log[O]) Arena() *numa.Arena { return l.arena }

// Alloc places a record of n bytes owned by owner and returns where it is
// and its bytes, for the caller to fill before anyone can read it. It
// opens a free segment only if keep others stay free (a cleaning moves
// records into the segments its writers keep free). ok is false when n
// exceeds SegmentBytes, the log is closed, or neither the open segment
// nor a free one may take it: the caller cleans a segment and tries again.
func (l *Log[O]) Alloc(n int, owner O, keep int) (loc Loc, b []byte, ok bool) {
	if l.closed || n > l.o.SegmentBytes || n < 0 {
		return 0, nil, false
	}
	if l.open < 0 || l.segs[l.open].used+n > l.o.SegmentBytes {
		if len(l.free) <= keep {
			return 0, nil, false
		}
		l.seal()
		i := int(l.free[len(l.free)-1])
		l.free = l.free[:len(l.free)-1]
		l.seq++
		s := &l.segs[i]
		s.state, s.seq, s.used, s.live, s.owners = segOpen, l.seq, 0, 0, s.owners[:0]
		l.open = i
	}
	s := &l.segs[l.open]
	off := s.used
	s.used += n
	s.live += int64(n)
	s.owners = append(s.owners, owner)
	l.live += int64(n)
	l.used += int64(n)
	start := l.open*l.o.SegmentBytes + off
	return makeLoc(l.open, off), l.mem[start : start+n : start+n], true
}

// seal closes the open segment to appends.
func (l *Log[O]) seal() {
	if l.open < 0 {
		return
	}
	i := l.open
	l.open = -1
	l.segs[i].state = segSealed
	l.maybeFree(i)
}

// Bytes returns the n bytes of the record at loc (A2: valid until it is
// freed). It may be called beside the other methods.
func (l *Log[O]) Bytes(loc Loc, n int) []byte {
	start := loc.Segment()*l.o.SegmentBytes + loc.Offset()
	return l.mem[start : start+n : start+n]
}

// Free marks the n-byte record at loc dead. A sealed segment left without
// live records is free again, unless it is being cleaned (EndClean frees
// it then).
func (l *Log[O]) Free(loc Loc, n int) {
	i := loc.Segment()
	if l.closed || i < 0 || i >= len(l.segs) {
		return
	}
	s := &l.segs[i]
	s.live -= int64(n)
	l.live -= int64(n)
	if s.live < 0 {
		panic(fmt.Sprintf("dram: %s segment %d: freed more than it holds", l.o.Name, i))
	}
	l.maybeFree(i)
}

func (l *Log[O]) maybeFree(i int) {
	s := &l.segs[i]
	if s.state != segSealed || s.live != 0 || s.cleaning {
		return
	}
	l.used -= int64(s.used)
	clear(s.owners) // drop the owners for the collector
	s.owners = s.owners[:0]
	s.state, s.used = segFree, 0
	l.free = append(l.free, int32(i))
}

// Oldest returns the sealed segment opened first that is not being
// cleaned (A5), or −1.
func (l *Log[O]) Oldest() int {
	best := -1
	for i := range l.segs {
		s := &l.segs[i]
		if s.state == segSealed && !s.cleaning && (best < 0 || s.seq < l.segs[best].seq) {
			best = i
		}
	}
	return best
}

// Sparsest returns the sealed segment with the fewest live bytes that is
// not being cleaned, and those bytes (A5), or −1.
func (l *Log[O]) Sparsest() (int, int64) {
	best := -1
	for i := range l.segs {
		s := &l.segs[i]
		if s.state == segSealed && !s.cleaning && (best < 0 || s.live < l.segs[best].live) {
			best = i
		}
	}
	if best < 0 {
		return -1, 0
	}
	return best, l.segs[best].live
}

// SegmentLive is the bytes of live records in segment i.
func (l *Log[O]) SegmentLive(i int) int64 { return l.segs[i].live }

// BeginClean marks sealed segment i as being cleaned, so that it is not
// reused while its records move even if they are all freed, and returns a
// copy of its owners, in the order their records were placed, in dst's
// array (dst[:0] appended to: a cleaner reuses one slice).
func (l *Log[O]) BeginClean(i int, dst []O) []O {
	s := &l.segs[i]
	if s.state != segSealed || s.cleaning {
		return dst[:0]
	}
	s.cleaning = true
	return append(dst[:0], s.owners...)
}

// EndClean ends the cleaning of segment i: it is free if no record in it
// is live any more, else it stays sealed (a record the caller could not
// move) and reports false.
func (l *Log[O]) EndClean(i int) bool {
	s := &l.segs[i]
	s.cleaning = false
	l.maybeFree(i)
	return s.state == segFree
}

// Withhold takes a free segment out of the log, if more than keep are
// free (or the open segment while it holds nothing), and gives its pages back to the kernel (numa.Arena.Release), so
// that memory held elsewhere can be charged to the log's budget (A7): the
// log then places records in one segment fewer. It reports false when no
// segment could be taken.
func (l *Log[O]) Withhold(keep int) bool {
	var i int32
	switch {
	case l.closed:
		return false
	case len(l.free) > keep:
		i = l.free[len(l.free)-1]
		l.free = l.free[:len(l.free)-1]
	case l.open >= 0 && l.segs[l.open].used == 0:
		i, l.open = int32(l.open), -1 // opened, nothing in it yet
	default:
		return false
	}
	l.segs[i].state = segWithheld
	l.withheld = append(l.withheld, i)
	// A failed release leaves the pages resident; the segment is withheld
	// all the same (its records' room is what the caller counts on).
	_, _ = l.arena.Release(int(i)*l.o.SegmentBytes, l.o.SegmentBytes)
	return true
}

// Return gives a withheld segment back to the log, free; it reports false
// when none is withheld.
func (l *Log[O]) Return() bool {
	if l.closed || len(l.withheld) == 0 {
		return false
	}
	i := l.withheld[len(l.withheld)-1]
	l.withheld = l.withheld[:len(l.withheld)-1]
	l.segs[i].state = segFree
	l.free = append(l.free, i)
	return true
}

// Withheld is the number of segments Withhold took.
func (l *Log[O]) Withheld() int { return len(l.withheld) }

// In reports whether loc is in segment i.
func (l *Log[O]) In(loc Loc, i int) bool { return loc.Segment() == i }

// Close unmaps the arena (A6).
func (l *Log[O]) Close() error {
	if l.closed {
		return nil
	}
	l.closed = true
	l.segs, l.free, l.mem = nil, nil, nil
	return l.arena.Close()
}

package tier

import (
	"math"
	"time"
	"unsafe"
)

// The expiry index (T55): each shard files its live entries that have an
// expiry in a hierarchical timing wheel (Varghese and Lauck, "Hashed and
// Hierarchical Timing Wheels", SOSP 1987), so the sweep visits the keys
// whose expiry's second came and not every key. An entry is filed in
// O(1), taken out in O(1), and moved down at most wheelLevels-1 times
// before its second comes (visited once more if filed in a slot whose
// span starts at the first tick not visited).
//
// A tick is a second of the cache's clock. Level L has wheelSlots slots
// of wheelSlots^L ticks each: level 0 the next 64 seconds one by one,
// level 1 the next 68 minutes about a minute a slot, level 2 about 3
// days, level 3 about 194 days; a farther expiry waits in level 3 and is
// filed again each time its slot comes round.
//
// The lists are circular and doubly linked through uint32 slot numbers:
// slot i holds an entry pointer (ents, 8 bytes) and its two links (links,
// 8 bytes, no pointer). The first slot numbers are the lists' heads
// (heads, 2 KiB a shard); an entry keeps its slot number in sizeSlot, so
// the entry itself grows by nothing. Slots come in chunks of idxChunk (4
// KiB), allocated as the shard's entries with an expiry first reach them
// and reused through a free list: 16 bytes a key with an expiry, at the
// most keys with one the shard held at once (Memory.ExpiryIndexBytes),
// until none is left: the sweep then drops the index.

const (
	wheelBits   = 6
	wheelSlots  = 1 << wheelBits
	wheelMask   = wheelSlots - 1
	wheelLevels = 4
	// tickNanos is a tick of the wheel.
	tickNanos = int64(time.Second)
	// sweepBatch is the most entries the sweep takes from a shard's index
	// in one hold of its lock: it lets go between batches (T55).
	sweepBatch = 128

	// The heads: the wheel's slots, then due and late.
	headDue   = wheelLevels * wheelSlots
	headLate  = headDue + 1
	firstFree = headLate + 1 // the first slot an entry can take

	idxChunkBits = 8
	idxChunk     = 1 << idxChunkBits
	// sizeBits of sizeSlot hold the value's size (up to 1 TiB; a string is
	// at most 1 GiB, Options.MaxValue); the rest, the slot number (up to
	// 16M keys with an expiry a shard).
	sizeBits = 40
	sizeMask = 1<<sizeBits - 1
	maxSlots = 1 << (64 - sizeBits)
)

// valueSize is the value's bytes.
func (e *entry) valueSize() int64 { return int64(e.sizeSlot & sizeMask) }

// setValueSize records the value's bytes (the shard's write lock held).
func (e *entry) setValueSize(n int64) { e.sizeSlot = e.sizeSlot&^sizeMask | uint64(n)&sizeMask }

// expSlot is e's slot in its shard's expiry index, 0 for none.
func (e *entry) expSlot() uint32 { return uint32(e.sizeSlot >> sizeBits) }

func (e *entry) setExpSlot(i uint32) { e.sizeSlot = e.sizeSlot&sizeMask | uint64(i)<<sizeBits }

// indexed says whether e belongs in its shard's expiry index: live, with
// an expiry before 2262 (a later one, negative, never passes: Expired).
func (e *entry) indexed() bool { return e.state == stateLive && e.exp > 0 }

type expLinks struct{ prev, next uint32 }

// expIndex is one shard's expiry index, made on the shard's first entry
// with an expiry and changed under the shard's write lock.
type expIndex struct {
	heads [firstFree]expLinks
	ents  []*[idxChunk]*entry   // by slot: the entry filed there, nil for a head's or a free slot
	links []*[idxChunk]expLinks // by slot, from firstFree
	used  uint32                // slots handed out so far
	free  uint32                // the first free slot (linked through next), 0 for none
	n     uint32                // slots entries hold: none left, the sweep drops the index
	// cur is the first tick not visited yet: an entry in a wheel slot is
	// visited at a tick in [cur, its expiry's tick] (T55).
	cur int64
}

func newExpIndex(now int64) *expIndex {
	x := &expIndex{cur: tickOf(now), used: firstFree}
	for h := range uint32(firstFree) {
		*x.link(h) = expLinks{h, h}
	}
	return x
}

func (x *expIndex) grow() {
	x.ents = append(x.ents, new([idxChunk]*entry))
	x.links = append(x.links, new([idxChunk]expLinks))
}

func (x *expIndex) link(i uint32) *expLinks {
	if i < firstFree {
		return &x.heads[i]
	}
	p := i - firstFree
	return &x.links[p>>idxChunkBits][p&(idxChunk-1)]
}

// ent is the entry of slot i (not a head's).
func (x *expIndex) ent(i uint32) *entry {
	p := i - firstFree
	return x.ents[p>>idxChunkBits][p&(idxChunk-1)]
}

func (x *expIndex) setEnt(i uint32, e *entry) {
	p := i - firstFree
	x.ents[p>>idxChunkBits][p&(idxChunk-1)] = e
}

// bytes is the heap x takes.
func (x *expIndex) bytes() int64 {
	return int64(unsafe.Sizeof(*x)) + int64(cap(x.ents)+cap(x.links))*8 +
		int64(len(x.ents))*int64(unsafe.Sizeof([idxChunk]*entry{})+unsafe.Sizeof([idxChunk]expLinks{}))
}

func (x *expIndex) empty(h uint32) bool { return x.link(h).next == h }

// unlink takes slot i out of its list (a slot out of every list links to
// itself).
func (x *expIndex) unlink(i uint32) {
	l := x.link(i)
	x.link(l.prev).next, x.link(l.next).prev = l.next, l.prev
	l.prev, l.next = i, i
}

// pushBack links slot i, in no list, at the end of head h's list.
func (x *expIndex) pushBack(h, i uint32) {
	hl := x.link(h)
	*x.link(i) = expLinks{hl.prev, h}
	x.link(hl.prev).next = i
	hl.prev = i
}

// splice moves the slots of from's list to the end of h's.
func (x *expIndex) splice(h, from uint32) {
	if x.empty(from) {
		return
	}
	fl := x.link(from)
	first, last := fl.next, fl.prev
	hl := x.link(h)
	x.link(first).prev, x.link(last).next = hl.prev, h
	x.link(hl.prev).next = first
	hl.prev = last
	fl.prev, fl.next = from, from
}

// slotOf is e's slot if e is filed in x (an entry of a map a Flush
// dropped may name a slot of the index that map had), else 0.
func (x *expIndex) slotOf(e *entry) uint32 {
	i := e.expSlot()
	if i < firstFree || i >= x.used || x.ent(i) != e {
		return 0
	}
	return i
}

// take gives e a slot, in no list; 0 if every slot is taken (16M keys
// with an expiry in one shard, 4G in the cache: far beyond the heap their
// entries would take), and then e is not filed: it expires only when read.
func (x *expIndex) take(e *entry) uint32 {
	i := x.free
	if i != 0 {
		x.free = x.link(i).next
	} else {
		if x.used == maxSlots {
			return 0
		}
		i = x.used
		x.used++
		if int((i-firstFree)>>idxChunkBits) == len(x.ents) {
			x.grow()
		}
	}
	*x.link(i) = expLinks{i, i}
	x.setEnt(i, e)
	e.setExpSlot(i)
	x.n++
	return i
}

// release frees slot i of e, out of every list.
func (x *expIndex) release(i uint32, e *entry) {
	x.setEnt(i, nil)
	e.setExpSlot(0)
	*x.link(i) = expLinks{i, x.free}
	x.free = i
	x.n--
}

// tickOf is the tick holding unix nanosecond t (t > 0).
func tickOf(t int64) int64 { return t / tickNanos }

// head is the head of level's slot s.
func head(level int, s int64) uint32 { return uint32(level*wheelSlots) + uint32(s&wheelMask) }

// file links slot i of e, in no list, into the wheel slot visited at or
// before its expiry's tick, or into late if that tick was visited.
func (x *expIndex) file(i uint32, e *entry) {
	t := tickOf(e.exp)
	switch {
	case t < x.cur:
		x.pushBack(headLate, i)
		return
	case t-x.cur < wheelSlots:
		x.pushBack(head(0, t), i)
		return
	}
	for level := 1; level < wheelLevels; level++ {
		shift := uint(level * wheelBits)
		if bt, bc := t>>shift, x.cur>>shift; bt-bc <= wheelSlots {
			x.pushBack(head(level, bt), i)
			return
		}
	}
	// Beyond the horizon: the top level's slot visited farthest on.
	shift := uint((wheelLevels - 1) * wheelBits)
	x.pushBack(head(wheelLevels-1, x.cur>>shift+wheelSlots), i)
}

// nextVisit is the first tick at or after cur at which a wheel slot that
// holds entries is visited (math.MaxInt64 when none does): the sweep
// skips the ticks in between.
func (x *expIndex) nextVisit() int64 {
	next := int64(math.MaxInt64)
	for d := range int64(wheelSlots) {
		if !x.empty(head(0, x.cur+d)) {
			next = x.cur + d
			break
		}
	}
	for level := 1; level < wheelLevels; level++ {
		if x.levelEmpty(level) {
			continue
		}
		// A boundary of a higher level is one of this level too.
		span := int64(1) << uint(level*wheelBits)
		return min(next, (x.cur+span-1)/span*span)
	}
	return next
}

func (x *expIndex) levelEmpty(level int) bool {
	for s := range int64(wheelSlots) {
		if !x.empty(head(level, s)) {
			return false
		}
	}
	return true
}

// visit moves the entries of the wheel slots visited at tick t (t >= cur)
// to due, and makes t+1 the first tick not visited.
func (x *expIndex) visit(t int64) {
	for level := wheelLevels - 1; level >= 1; level-- {
		shift := uint(level * wheelBits)
		if t&(int64(1)<<shift-1) == 0 {
			x.splice(headDue, head(level, t>>shift))
		}
	}
	x.splice(headDue, head(0, t))
	x.cur = t + 1
}

// popDue takes the first slot out of due and returns it with its entry
// (0 when due is empty).
func (x *expIndex) popDue() (uint32, *entry) {
	i := x.link(headDue).next
	if i == headDue {
		return 0, nil
	}
	x.unlink(i)
	return i, x.ent(i)
}

// fileExpiry files e, an entry of sh's map just written or retimed from
// expiry old, in sh's expiry index if it is live with an expiry, and
// takes it out otherwise (sh.mu held for writing). An entry filed already
// whose expiry moved later stays where it is, visited no later than its
// old expiry's tick, when the sweep files it again: a key set again and
// again with a TTL costs the index nothing until then.
func (sh *shard) fileExpiry(e *entry, old int64) {
	if !e.indexed() {
		sh.unfileExpiry(e)
		return
	}
	if e.expSlot() != 0 && old > 0 && e.exp >= old {
		return // an entry of the map with a slot is filed in sh.exps
	}
	x := sh.exps
	if x == nil {
		x = newExpIndex(sh.clock())
		sh.exps = x
	}
	i := x.slotOf(e)
	switch {
	case i != 0:
		x.unlink(i)
	default:
		if i = x.take(e); i == 0 {
			return
		}
	}
	x.file(i, e)
}

// unfileExpiry takes e, an entry of sh's map deleted, dropped or given no
// expiry, out of sh's expiry index (sh.mu held for writing).
func (sh *shard) unfileExpiry(e *entry) {
	if x := sh.exps; x != nil {
		if i := x.slotOf(e); i != 0 {
			x.unlink(i)
			x.release(i, e)
		}
	}
}

package logstore

import "math/bits"

// Growing the tag index a segment at a time (E35). A segment holds up to
// tagMaxLoad of its slots; one more entry makes room in it first: a
// segment below the size cap grows in place into a table segGrowth times
// larger, one at the cap splits into two segments of one more bit of
// prefix, each sized for its entries times segGrowth, so right after
// either a segment's slots are segGrowth/tagMaxLoad of its entries:
// 10·1.1/0.92 = 11.96 bytes a key, 10.87 just before. Each moves at most
// the cap's entries (about 80,000), under the caller's lock.
const (
	tagMaxLoad = 0.92
	segGrowth  = 1.1
	// segCapBytes is the size at which a full segment splits rather than
	// grows: about a millisecond of reinserting.
	segCapBytes = 1 << 20
	// maxDirDepth bounds the directory (2^16 pointers, 512 KiB); a
	// segment whose entries share their first maxDirDepth bits grows
	// past the cap instead of splitting.
	maxDirDepth = 16
	// segOffHeapBytes: a segment at least this big lives off the Go heap
	// (E8), in a mapping of whole pages.
	segOffHeapBytes = 64 << 10
)

// segCapSlots is segCapBytes in slots; a test seam makes it small so
// that small indexes split.
var segCapSlots = segCapBytes / tslotBytes

// newTagIndex makes a tag index for expected keys (at least minExpected):
// 2^d segments of depth d, the least d from the layout's d0 (E8) that
// leaves each at most the cap, each for its share of the keys. Off-heap segments are given to bind
// (E28).
func newTagIndex(expected int, lay *slotLayout, bind func(mem []byte) error) *tagIndex {
	expected = max(expected, minExpected)
	d := lay.d0
	for d < maxDirDepth && float64(expected>>d)/tagMaxLoad > float64(segCapSlots) {
		d++
	}
	x := &tagIndex{dir: make([]*ttable, 1<<d), depth: d, bind: bind, lay: lay}
	per := (expected + 1<<d - 1) >> d
	for i := range x.dir {
		x.dir[i] = x.newSeg(d, uint64(i)<<(32-d), per, false)
		x.dir[i].cold = x.dir[i].off != nil
	}
	return x
}

// warm makes the pages of a segment newTagIndex made resident, at its
// first entry: a checkpoint of many segments fills them one after another,
// so each is zeroed by the kernel just before it is written, while its
// pages are still in the CPU's caches, not all of them first.
func (s *ttable) warm() {
	s.cold = false
	prefault(s.off.mem[:cap(s.off.mem)])
}

// newSeg makes an empty segment of prefix depth d starting at tag lo, for
// expected entries at tagMaxLoad (at least 64 slots): off the heap from
// segOffHeapBytes, where its slots fill the mapping's last page too,
// given to the index's bind; made resident (prefault) at once if grown,
// else at its first entry (warm). grown says expected holds segGrowth's
// margin over the entries it takes now (growth, splits): an off-heap
// segment's slots then round down to whole pages, not up, while they
// hold those entries and one more below tagMaxLoad. The segments of a directory deeper than 0 grow in step,
// and a page more each (6% of a 64 KiB one) would take the index past
// 12 bytes a key (E35).
func (x *tagIndex) newSeg(d uint, lo uint64, expected int, grown bool) *ttable {
	n := max(64, int(float64(expected)/tagMaxLoad)+1)
	s := &ttable{depth: d, lo: lo, lay: x.lay}
	if n*tslotBytes < segOffHeapBytes {
		s.slots, s.n = make([]tslot, n), n
		return s
	}
	down := n * tslotBytes &^ (pageBytes - 1) / tslotBytes
	n = (n*tslotBytes + pageBytes - 1) &^ (pageBytes - 1) / tslotBytes
	if grown && float64(down)*tagMaxLoad >= float64(expected)/segGrowth+1 {
		n = down
	}
	s.slots, s.off = mappedSlots[tslot](n, mapPages, pageBytes, x.bind)
	s.n = n
	if s.off != nil && grown {
		prefault(s.off.mem[:cap(s.off.mem)]) // its growth or split fills it now: a fault per page would cost more
	}
	return s
}

// full reports whether one more entry takes s past tagMaxLoad.
func (s *ttable) full() bool { return float64(s.count+1) > tagMaxLoad*float64(s.n) }

// makeRoom grows the full segment s, or splits it once its growth would
// pass the cap and a split divides its entries.
func (x *tagIndex) makeRoom(s *ttable) {
	n := int(float64(s.n)*segGrowth) + 1
	if n > segCapSlots && x.split(s) {
		return
	}
	g := x.newSeg(s.depth, s.lo, int(float64(n)*tagMaxLoad), true)
	s.moveAll(func(uint32) *ttable { return g })
	old := s.off
	s.slots, s.n, s.off, s.count, s.bulkEnd = g.slots, g.n, g.off, g.count, -1
	old.free()
}

// moveAll inserts every entry of s into the segment dst names for its
// tag (new, which counts it), leaving s's slots as they are. The entries
// go in the order of their homes (from s's first empty slot, around its
// end), so each lands where Robin Hood insertion would put it, at the
// first empty slot from its home on, at once, as a checkpoint's do
// (ttable.load), but those that would wrap past the end, which take the
// insertion's walk.
func (s *ttable) moveAll(dst func(tag uint32) *ttable) {
	s.inHomeOrder(func(tag uint32, l Loc) {
		t := dst(tag)
		if t.bulkEnd >= 0 && t.load(tag, l) {
			return
		}
		t.insert(tag, l)
		t.count++
		t.bulkEnd = -1
	})
}

// inHomeOrder calls fn for every entry of s in slot order from its first
// empty slot on, around its end: the order of their homes, but that a run
// wrapping past the end comes last, after the entries it follows.
func (s *ttable) inHomeOrder(fn func(tag uint32, l Loc)) {
	e := 0
	for e < s.n && !s.emptyAt(e) {
		e++ // there is one: a segment is at most tagMaxLoad full
	}
	for k := 1; k <= s.n; k++ {
		i := e + k
		if i >= s.n {
			i -= s.n
		}
		if !s.emptyAt(i) {
			fn(s.tagAt(i), s.locAt(i))
		}
	}
}

// split replaces segment s by segments of deeper prefixes: two at the
// first bit below s's prefix where its entries' tags differ, each sized
// for its entries times segGrowth, and an empty minimal segment for each
// prefix in between that holds none; the directory doubles as needed.
// It reports false, changing nothing, when no bit within maxDirDepth
// divides the entries (all share their first maxDirDepth bits: forced
// tag collisions, SetTagMask).
func (x *tagIndex) split(s *ttable) bool {
	var first, diff uint32
	seen := false
	for i := range s.slots {
		if !s.emptyAt(i) {
			if !seen {
				first, seen = s.tagAt(i), true
			}
			diff |= s.tagAt(i) ^ first
		}
	}
	c := uint(bits.LeadingZeros32(diff)) // diff has no bit in s's prefix
	if !seen || c+1 > maxDirDepth {
		return false
	}
	for x.depth < c+1 {
		x.double()
	}
	pre := func(k uint) uint64 { return uint64(first) >> (32 - k) << (32 - k) } // first's k-bit prefix, as a tag
	for k := s.depth + 1; k <= c; k++ {
		x.place(x.newSeg(k, pre(k)^1<<(32-k), 0, false)) // the half first is not in: empty
	}
	var half [2]int
	for i := range s.slots {
		if !s.emptyAt(i) {
			half[s.tagAt(i)>>(31-c)&1]++
		}
	}
	lo := pre(c)
	a := x.newSeg(c+1, lo, int(float64(half[0])*segGrowth), true)
	b := x.newSeg(c+1, lo|1<<(31-c), int(float64(half[1])*segGrowth), true)
	s.moveAll(func(tag uint32) *ttable {
		if tag>>(31-c)&1 == 0 {
			return a
		}
		return b
	})
	a.bulkEnd, b.bulkEnd = -1, -1
	x.place(a)
	x.place(b)
	s.off.free()
	return true
}

// double doubles the directory: each segment fills twice the entries.
func (x *tagIndex) double() {
	d := make([]*ttable, 2*len(x.dir))
	for i, s := range x.dir {
		d[2*i], d[2*i+1] = s, s
	}
	x.dir, x.depth = d, x.depth+1
}

// place points the directory entries of s's prefix at s.
func (x *tagIndex) place(s *ttable) {
	for i := s.lo >> (32 - x.depth); i < s.end()>>(32-x.depth); i++ {
		x.dir[i] = s
	}
}

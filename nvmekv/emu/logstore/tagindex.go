package logstore

import (
	"unsafe"

	"github.com/tiercache/tiercache/nvmekv"
)

// tagIndex maps the tag of a device key to the Locs of the inline records
// whose keys have that tag (E8), in segments (E35): a directory of 2^depth
// segment pointers indexed by a tag's top depth bits, each segment a tag
// table (tagtable.go) holding the tags of one prefix of its own depth
// (at most the directory's; a segment of depth d fills 2^(depth-d)
// consecutive directory entries). A full segment grows into a table 1.2
// times larger, or splits into two of one more bit of prefix once it is
// at the size cap (tagseg.go), so no change rebuilds more than one
// segment. A tag may have several entries (different keys); a lookup
// yields them all (cands) and the log checks the record's key (E8, E30).
// Not safe for concurrent use: lookups may run together, changes need
// the caller's exclusive lock.
type tagIndex struct {
	dir   []*ttable
	depth uint
	count int
	// later holds the entries load could not place without wrapping
	// past their segment's end; finishLoad adds them.
	later []tent
	// lay is how the slots pack a tag and a Loc (E8).
	lay *slotLayout
	// bind places every off-heap segment this index makes (Options.BindIndex
	// through Log.bindIndex; nil: none is bound, E28).
	bind func(mem []byte) error
}

// tagMask keeps the bits of a tag. A test seam: a mask of a few bits
// makes tags of different keys collide often (TestTagCollisionModel).
var tagMask = ^uint32(0)

// tagOf is the tag of a device key (nvmekv.TagOf) with only the bits of
// tagMask kept.
func tagOf(k *[16]byte) uint32 { return nvmekv.TagOf(k) & tagMask }

// TagOf is the tag of device key k (zero-padded to 16 bytes) that the
// index files an inline record under, and that orders TagRangeLocked's
// walk; an extent entry's tag is computed the same way. It is tagOf,
// test seam (tagMask, SetTagMask) included.
func TagOf(k *[16]byte) uint32 { return tagOf(k) }

// SetTagMask keeps only the bits of m in every tag from now on and
// returns the previous mask: a test seam for packages above (emu, whose
// tests make many keys share a tag). Set it only while no log is open:
// a checkpoint holds tags as they were computed.
func SetTagMask(m uint32) (prev uint32) {
	prev, tagMask = tagMask, m
	return prev
}

// seg is the segment holding tag's entries.
func (x *tagIndex) seg(tag uint32) *ttable { return x.dir[uint64(tag)>>(32-x.depth)] }

// segs calls fn with each segment whose tags meet [from, next), in tag
// order.
func (x *tagIndex) segs(from, next uint64, fn func(s *ttable)) {
	for i := from >> (32 - x.depth); i < uint64(len(x.dir)) && i<<(32-x.depth) < next; {
		s := x.dir[i]
		fn(s)
		i = s.end() >> (32 - x.depth)
	}
}

// cands walks every entry of one tag, in probe order.
type cands struct{ p probe }

func (x *tagIndex) cands(tag uint32) cands { return cands{x.seg(tag).probe(tag)} }

// next returns the segment and slot of the next entry of the tag, or nil.
func (c *cands) next() (*ttable, int) {
	if i := c.p.next(); i >= 0 {
		return c.p.t, i
	}
	return nil, -1
}

// findLoc returns the segment and slot of the entry tag → l, or nil.
func (x *tagIndex) findLoc(tag uint32, l Loc) (*ttable, int) {
	s := x.seg(tag)
	if i := s.findLoc(tag, l); i >= 0 {
		return s, i
	}
	return nil, -1
}

// add inserts the entry tag → l (its key known absent), making room in
// its segment first if it is full (tagseg.go).
func (x *tagIndex) add(tag uint32, l Loc) {
	s := x.seg(tag)
	if s.cold {
		s.warm()
	}
	if s.full() {
		x.makeRoom(s)
		s = x.seg(tag)
	}
	s.insert(tag, l)
	s.count++
	x.count++
	s.bulkEnd = -1 // placed by Robin Hood's walk: load no longer knows the segment's end
}

// setAt points the entry at slot i of segment s to l.
func (x *tagIndex) setAt(s *ttable, i int, l Loc) { s.slots[i] = x.lay.pack(s.tagAt(i), l) }

// removeAt removes the entry at slot i of segment s.
func (x *tagIndex) removeAt(s *ttable, i int) {
	s.removeAt(i)
	x.count--
}

// each calls fn for every entry: the segments in tag order, each's in
// slot order from its first empty slot on, around its end, so in the
// order of their homes (a run that wraps past the end comes last, after
// the entries it follows: a checkpoint loads in that order, load).
func (x *tagIndex) each(fn func(tag uint32, l Loc)) {
	x.segs(0, TagSpace, func(t *ttable) { t.inHomeOrder(fn) })
}

func (x *tagIndex) len() int { return x.count }

// bytes is the DRAM the index holds: its segments' slots and headers, and
// the directory.
func (x *tagIndex) bytes() int {
	b := len(x.dir) * int(unsafe.Sizeof(x.dir[0]))
	x.segs(0, TagSpace, func(s *ttable) { b += s.memBytes() + int(unsafe.Sizeof(*s)) })
	return b
}

// mappings are the off-heap mappings of the segments (those on the heap
// have none).
func (x *tagIndex) mappings() []*offHeap {
	var m []*offHeap
	x.segs(0, TagSpace, func(s *ttable) {
		if s.off != nil {
			m = append(m, s.off)
		}
	})
	return m
}

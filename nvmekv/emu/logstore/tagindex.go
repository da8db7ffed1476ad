package logstore

// tagIndex maps the tag of a device key to the Locs of the inline records
// whose keys have that tag: tag tables (tagtable.go) that grow as the key
// index does (growth, E25). A tag may have several entries (different
// keys); a lookup yields them all (cands) and the log checks the record's
// key (E8, E30). Not safe for concurrent use: lookups may run together,
// changes need the caller's exclusive lock.
type tagIndex struct {
	growth[ttable, *ttable]
}

// tagMask keeps the bits of a tag. A test seam: a mask of a few bits
// makes tags of different keys collide often (TestTagCollisionModel).
var tagMask = ^uint32(0)

// tagOf is the tag of a device key: 32 bits of a mix of all 16 bytes
// (device keys may be short or structured, not hashes). Two keys share a
// tag with probability 2^-32.
func tagOf(k *[16]byte) uint32 {
	a, b := splitKey(k)
	h := mix64(mix64(a) ^ b)
	return uint32(h>>32) & tagMask
}

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

// mix64 spreads every bit of h over the high half of the result: the
// mixing steps of the key table's home function (table.go).
func mix64(h uint64) uint64 {
	h *= 0x9e3779b97f4a7c15
	h ^= h >> 32
	h *= 0xd6e8feb86659fd93
	h ^= h >> 29
	return h
}

func newTagIndex(expected int, bind func(mem []byte) error) *tagIndex {
	return &tagIndex{growth[ttable, *ttable]{cur: ttableFor(max(expected, minExpected), bind), bind: bind}}
}

// cands walks every entry of one tag: cur's in probe order, then old's.
type cands struct {
	x   *tagIndex
	p   probe
	old bool
}

func (x *tagIndex) cands(tag uint32) cands { return cands{x: x, p: x.cur.probe(tag)} }

// next returns the table and slot of the next entry of the tag, or nil.
func (c *cands) next() (*ttable, int) {
	for {
		if i := c.p.next(); i >= 0 {
			return c.p.t, i
		}
		if c.old || c.x.old == nil {
			return nil, -1
		}
		c.old, c.p = true, c.x.old.probe(c.p.tag)
	}
}

// findLoc returns the table and slot of the entry tag → l, or nil.
func (x *tagIndex) findLoc(tag uint32, l Loc) (*ttable, int) {
	if i := x.cur.findLoc(tag, l); i >= 0 {
		return x.cur, i
	}
	if x.old != nil {
		if i := x.old.findLoc(tag, l); i >= 0 {
			return x.old, i
		}
	}
	return nil, -1
}

// add inserts the entry tag → l (its key known absent).
func (x *tagIndex) add(tag uint32, l Loc) {
	if x.full() {
		x.grow()
	}
	x.cur.insert(tag, l)
	x.cur.count++
	x.step()
}

// setAt points the entry at slot i of t to l.
func (x *tagIndex) setAt(t *ttable, i int, l Loc) {
	if t == x.cur {
		t.slots[i] = mkTslot(t.slots[i].tag, l)
		x.step()
		return
	}
	tag := t.slots[i].tag // in the old table: it moves now
	t.removeAt(i)
	x.add(tag, l)
}

// removeAt removes the entry at slot i of t.
func (x *tagIndex) removeAt(t *ttable, i int) {
	t.removeAt(i)
	x.step()
}

// each calls fn for every entry: cur's in slot order, then old's.
func (x *tagIndex) each(fn func(tag uint32, l Loc)) {
	for _, t := range []*ttable{x.cur, x.old} {
		if t == nil {
			continue
		}
		for i := range t.slots {
			if s := &t.slots[i]; s.lo|s.hi != 0 {
				fn(s.tag, s.loc())
			}
		}
	}
}

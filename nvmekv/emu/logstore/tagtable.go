package logstore

// ttable is one segment of the tag index (tagIndex, E35): a Robin Hood
// table of tag slots (E8), per slot a device key's tag and its record's
// Loc packed in 10 bytes (tagslot.go), holding the entries whose tags
// start with its depth-bit prefix. The home slot is derived from the tag alone: fastrange of the
// tag's bits below the prefix, (tag<<depth)·n >> 32, which never
// decreases with the tag within the segment, so growth, splits, probe
// distances and the checkpoint need no key, and the slots hold the
// segment's tags in order (E32). Several keys may share a tag: a lookup
// yields every slot of its tag, in probe order (probe), and the caller
// checks the record's key. Deletion shifts the following entries back.
type ttable struct {
	slots []tslot
	n     int
	count int
	off   *offHeap // the mapping that holds slots, when they are off the Go heap
	depth uint     // the prefix's bits: the segment holds tags lo .. lo+2^(32-depth)-1
	lo    uint64   // its first tag
	// bulkEnd and bulkHome are what load knows of a segment it alone has
	// filled: every entry lies below slot bulkEnd, and none has its home
	// above bulkHome. bulkEnd < 0: not known (a segment grown, split or
	// added to).
	bulkEnd, bulkHome int
	// cold: the mapping's pages are not resident yet (warm).
	cold bool
	lay  *slotLayout // the index's
}

// tagAt, locAt and emptyAt read slot i.
func (x *ttable) tagAt(i int) uint32 { return x.lay.tag(&x.slots[i], uint32(x.lo)) }
func (x *ttable) locAt(i int) Loc    { return x.lay.loc(&x.slots[i]) }
func (x *ttable) emptyAt(i int) bool { return x.slots[i].empty() }

func (x *ttable) home(tag uint32) int { return int(uint64(tag<<x.depth) * uint64(x.n) >> 32) }

// end is one past the segment's last tag.
func (x *ttable) end() uint64 { return x.lo + 1<<(32-x.depth) }

func (x *ttable) dist(i int) int {
	d := i - x.home(x.tagAt(i))
	if d < 0 {
		d += x.n
	}
	return d
}

// probe walks the slots of one tag in a table, in probe order.
type probe struct {
	t   *ttable
	tag uint32
	i   int // next slot to look at
	d   int // its distance from the tag's home
}

func (x *ttable) probe(tag uint32) probe { return probe{t: x, tag: tag, i: x.home(tag)} }

// next returns the next slot holding the tag, or -1 when none is left.
func (p *probe) next() int {
	x := p.t
	for {
		if x.emptyAt(p.i) {
			return -1
		}
		t := x.tagAt(p.i)
		d := p.i - x.home(t)
		if d < 0 {
			d += x.n
		}
		if d < p.d {
			return -1
		}
		i := p.i
		if p.i++; p.i == x.n {
			p.i = 0
		}
		p.d++
		if t == p.tag {
			return i
		}
	}
}

// findLoc returns the slot holding tag and l, or -1.
func (x *ttable) findLoc(tag uint32, l Loc) int {
	p := x.probe(tag)
	for i := p.next(); i >= 0; i = p.next() {
		if x.locAt(i) == l {
			return i
		}
	}
	return -1
}

// insert places an entry with Robin Hood displacement; the caller counts
// it.
func (x *ttable) insert(tag uint32, l Loc) {
	e := x.lay.pack(tag, l)
	i := x.home(tag)
	for d := 0; ; d++ {
		s := &x.slots[i]
		if s.empty() {
			*s = e
			return
		}
		if od := x.dist(i); od < d {
			*s, e = e, *s
			d = od
		}
		if i++; i == x.n {
			i = 0
		}
	}
}

func (x *ttable) removeAt(i int) {
	for {
		j := i + 1
		if j == x.n {
			j = 0
		}
		if x.emptyAt(j) || x.dist(j) == 0 {
			x.slots[i] = tslot{}
			break
		}
		x.slots[i] = x.slots[j]
		i = j
	}
	x.count--
}

// memBytes is the DRAM the slots take.
func (x *ttable) memBytes() int { return x.n * tslotBytes }

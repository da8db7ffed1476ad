package logstore

// Loading a tag index in the order of its entries' homes (E29): a
// checkpoint's inline entries come segment by segment in home order
// (tagIndex.each), and a scan's sorted by tag (keyIndexFrom), so nearly
// every entry's home is at or after those of the entries before it in
// its segment. Robin Hood insertion would place such an entry at the
// first empty slot from its home on, walking the run before it, every
// entry of which has a home no later; load places it there at once, from
// what it knows of the segment (bulkEnd, bulkHome), and leaves the others
// to the walk.

// load adds tag → l as add does. In a segment only load has filled,
// every entry lies below bulkEnd, with no empty slot between bulkHome and
// bulkEnd, so an entry whose home h is at least bulkHome goes to slot
// max(h, bulkEnd); one with an earlier home takes Robin Hood's walk, which
// ends at the first empty slot from h on, at most bulkEnd. An entry that
// would wrap past the segment's end waits for finishLoad.
func (x *tagIndex) load(tag uint32, l Loc) {
	s := x.seg(tag)
	if s.cold {
		s.warm()
	}
	if s.bulkEnd < 0 || s.full() {
		x.add(tag, l)
		return
	}
	if !s.load(tag, l) {
		x.later = append(x.later, mkTent(tag, l))
		return
	}
	x.count++
}

// load places tag → l in s, which load alone has filled and which has
// room (not full), and counts it; it reports false, placing nothing,
// when the entry would wrap past the segment's end.
func (s *ttable) load(tag uint32, l Loc) bool {
	h := s.home(tag)
	switch {
	case h >= s.bulkHome && max(h, s.bulkEnd) < s.n:
		i := max(h, s.bulkEnd)
		s.slots[i] = s.lay.pack(tag, l)
		s.bulkEnd, s.bulkHome = i+1, h
	case h < s.bulkHome && s.bulkEnd < s.n:
		s.insert(tag, l)
		if !s.emptyAt(s.bulkEnd) {
			s.bulkEnd++
		}
	default:
		return false
	}
	s.count++
	return true
}

// finishLoad adds the entries load left for later.
func (x *tagIndex) finishLoad() {
	for _, e := range x.later {
		x.add(e.tag, e.loc())
	}
	x.later = nil
}

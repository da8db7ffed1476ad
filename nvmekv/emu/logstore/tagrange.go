package logstore

// Walking the index in tag order (E32). The directory holds the
// segments in the order of their prefixes, and within a segment the home
// slot, fastrange of the tag's bits below the prefix, never decreases
// with the tag, and Robin Hood insertion keeps each run of slots ordered
// by home, so the entries of a range of tags lie in the segments of that
// range, in each from the first tag's home slot on, followed by those
// displaced past the last tag's home (across the segment's end, for its
// last homes). A walk of a range of tags thus touches the slots of that
// range and a probe run's tail, not the index.

// TagSpace is the number of tags: TagRangeLocked's walk is over
// [0, TagSpace), and a next of TagSpace means it reached the end.
const TagSpace = 1 << 32

// walkRange calls fn for every entry of segment x whose tag t has from ≤
// t < next (from < next ≤ TagSpace).
func (x *ttable) walkRange(from, next uint64, fn func(tag uint32, l Loc)) {
	f, e := max(from, x.lo), min(next, x.end())
	if f >= e {
		return
	}
	hs, he := x.home(uint32(f)), x.n
	if e < x.end() {
		he = x.home(uint32(e-1)) + 1
	}
	span := he - hs // the slots whose home is in the range: ≥ 1
	for k := 0; k < x.n; k++ {
		i := hs + k
		if i >= x.n {
			i -= x.n
		}
		if x.emptyAt(i) {
			if k >= span {
				return // past the range's homes, and a run ends
			}
			continue
		}
		if k >= span && x.dist(i) <= k-span {
			return // home ≥ he: this entry and the rest of its run are past the range
		}
		if t := x.tagAt(i); uint64(t) >= from && uint64(t) < next {
			fn(t, x.locAt(i))
		}
	}
}

// tagRangeLocked calls fn for every live entry whose tag is in [from,
// next): the tag index's, segment by segment in slot order, then the
// extent table's, which is walked whole (extents hold values of
// 3.5 KB and more, so they are few) with the key of each (nil for an
// inline entry, whose key only its record holds).
func (lg *Log) tagRangeLocked(from, next uint64, fn func(tag uint32, key *[16]byte, l Loc)) {
	lg.idx.tags.segs(from, next, func(s *ttable) {
		s.walkRange(from, next, func(tag uint32, l Loc) { fn(tag, nil, l) })
	})
	lg.idx.ext.each(func(a, b uint64, l Loc) {
		k := joinKey(a, b)
		if t := uint64(tagOf(&k)); t >= from && t < next {
			fn(uint32(t), &k, l)
		}
	})
}

// nextTagLocked picks the end of a walk from from that visits about n
// entries: the tag span that holds n of the index's entries when tags
// are spread evenly (at least one tag; TagSpace when the rest holds
// fewer, or the index is empty).
func (lg *Log) nextTagLocked(from uint64, n int) uint64 {
	items := lg.idx.len()
	if items == 0 || n >= items {
		return TagSpace
	}
	span := (uint64(max(n, 1))*TagSpace + uint64(items) - 1) / uint64(items)
	return min(from+max(span, 1), TagSpace)
}

// TagRangeLocked calls fn for every live index entry (tag index and
// extent table, a draining old one included) whose tag t (TagOf of its
// device key) has from ≤ t < next, and returns next: chosen so that
// about n entries are visited (at least one tag's worth; every entry of
// a tag in the same call), TagSpace when the walk reached the end. A walk
// from 0 that resumes at each next visits every entry live throughout
// once. The caller holds the read lock; fn must not take it. The tag
// table walk costs the slots of the range and the tail of a probe run;
// the extent table is walked whole (E32).
func (lg *Log) TagRangeLocked(from uint64, n int, fn func(l Loc)) (next uint64) {
	if from >= TagSpace {
		return TagSpace
	}
	next = lg.nextTagLocked(from, n)
	lg.tagRangeLocked(from, next, func(_ uint32, _ *[16]byte, l Loc) { fn(l) })
	return next
}

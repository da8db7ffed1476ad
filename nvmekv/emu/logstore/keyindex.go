package logstore

import (
	"runtime"
	"unsafe"
)

// keyIndex is the log's index of live records (E8): the Loc of every
// inline record under the 32-bit tag of its key (tags, 10 bytes a slot),
// and the Loc of every extent record under its full key (ext, 24 bytes a
// slot). A key is in at most one of them. An inline record's key is
// checked in the record itself (the record header names it, and every
// read checks it); an extent is read without its header (readpath E10),
// so its key stays in DRAM. Changes need the log's exclusive lock.
type keyIndex struct {
	tags *tagIndex
	ext  *index
	// full counts the entries (tag and extent) whose device key is 16 bytes
	// long (Loc.KLen): Stats.FullKeyItems, kept exact by every change.
	full int
}

// fullOf is 1 for the Loc of a live record with a 16-byte device key,
// else 0 (0: no entry).
func fullOf(l Loc) int {
	if l != 0 && l.KLen() == 16 {
		return 1
	}
	return 0
}

// newKeyIndex makes an index sized for expected inline keys (extent keys
// start at minExtExpected and grow).
func newKeyIndex(expected int, lay *slotLayout, bind func(mem []byte) error) *keyIndex {
	return &keyIndex{tags: newTagIndex(expected, lay, bind), ext: newExtIndex(0, bind)}
}

// minExtExpected is the extent index's least size: 1024 keys, a 27 KB
// table (extents hold values of 3.5 KB and more: fewer keys fit a log).
const minExtExpected = 1024

func newExtIndex(expected int, bind func(mem []byte) error) *index {
	return indexOf(tableFor(max(expected, minExtExpected), bind), bind)
}

// keyIndexFrom builds the key index of the entries of a keyed index
// (a scan's, or an older checkpoint's), sized for them and 1/32 more
// (tag segments about 89% full: 11.2 bytes a key), and consumes x: its
// table's memory holds the inline entries while they are sorted. They
// are inserted in order of their tags: segments and, within one, home
// slots follow the tag, so each insert lands at the end of the entries
// placed before it and the inserts sweep the new segments once instead
// of touching them at random (10M random inserts took 4.8 s here).
func keyIndexFrom(x *index, lay *slotLayout, bind func(mem []byte) error) *keyIndex {
	x.drain()
	t := x.cur
	exts := 0
	for i := range t.slots {
		if t.slots[i].l.Ext() {
			exts++
		}
	}
	k := &keyIndex{tags: newTagIndex(t.count-exts+(t.count-exts)/32, lay, bind), ext: newExtIndex(exts+exts/32, bind)}
	// The n 24-byte slots, seen as 2n tag slots: the inline entries are
	// packed into the first n (entry j is written over bytes of slots up
	// to j, already read), and the sort's second buffer is the last n.
	n := len(t.slots)
	if n == 0 {
		return k
	}
	a := unsafe.Slice((*tent)(unsafe.Pointer(unsafe.SliceData(t.slots))), 2*n)
	j := 0
	for i := range t.slots {
		s := t.slots[i]
		switch {
		case s.l == 0:
		case s.l.Ext():
			k.ext.load(s.k0, s.k1, s.l)
			k.full += fullOf(s.l)
		default:
			k.full += fullOf(s.l)
			key := joinKey(s.k0, s.k1)
			a[j] = mkTent(tagOf(&key), s.l)
			j++
		}
	}
	sorted := sortByTag(a[:j], a[n:n+j])
	for i := range sorted {
		k.tags.load(sorted[i].tag, sorted[i].loc())
	}
	k.tags.finishLoad()
	runtime.KeepAlive(t.off) // the slots may live in its mapping
	return k
}

// sortByTag sorts s by tag (an LSD radix sort, a byte a pass, through
// tmp, as long as s) and returns the sorted slots: s or tmp.
func sortByTag(s, tmp []tent) []tent {
	for shift := 0; shift < 32; shift += 8 {
		var count [257]int
		for i := range s {
			count[s[i].tag>>shift&0xff+1]++
		}
		for b := 1; b < len(count); b++ {
			count[b] += count[b-1]
		}
		for i := range s {
			b := s[i].tag >> shift & 0xff
			tmp[count[b]] = s[i]
			count[b]++
		}
		s, tmp = tmp, s
	}
	return s
}

func (k *keyIndex) len() int { return k.tags.len() + k.ext.len() }

// bytes is the DRAM the tables hold.
func (k *keyIndex) bytes() int { return k.tags.bytes() + k.ext.bytes() }

// load enters key → l, key known absent.
func (k *keyIndex) load(key *[16]byte, l Loc) {
	k.full += fullOf(l)
	if l.Ext() {
		a, b := splitKey(key)
		k.ext.load(a, b, l)
		return
	}
	k.tags.add(tagOf(key), l)
}

// has reports whether key's entry is l.
func (k *keyIndex) has(key *[16]byte, l Loc) bool {
	if l.Ext() {
		got, ok := k.ext.get(key)
		return ok && got == l
	}
	t, _ := k.tags.findLoc(tagOf(key), l)
	return t != nil
}

// replace changes key's entry from (its current Loc, 0: absent) to
// (0: none). Neither needs a key check: each Loc names one record.
func (k *keyIndex) replace(key *[16]byte, from, to Loc) {
	tag := tagOf(key)
	if from != 0 && !from.Ext() {
		if t, i := k.tags.findLoc(tag, from); t != nil {
			k.full -= fullOf(from)
			if to != 0 && !to.Ext() {
				k.tags.setAt(t, i, to)
				k.full += fullOf(to)
				return
			}
			k.tags.removeAt(t, i)
		}
	}
	switch {
	case to.Ext():
		k.full += fullOf(to) - fullOf(k.ext.put(key, to))
	case from.Ext():
		if k.ext.delIf(key, from) {
			k.full -= fullOf(from)
		}
		if to != 0 {
			k.tags.add(tag, to)
			k.full += fullOf(to)
		}
	case to != 0:
		k.tags.add(tag, to)
		k.full += fullOf(to)
	}
}

// delIf removes key's entry if it is l (reclaim) and reports whether it
// did.
func (k *keyIndex) delIf(key *[16]byte, l Loc) bool {
	if l.Ext() {
		if !k.ext.delIf(key, l) {
			return false
		}
		k.full -= fullOf(l)
		return true
	}
	t, i := k.tags.findLoc(tagOf(key), l)
	if t == nil {
		return false
	}
	k.tags.removeAt(t, i)
	k.full -= fullOf(l)
	return true
}

// dropRegion removes every inline entry in region r and returns their
// Locs (reclaim of a region it cannot read: their keys are unknown).
func (k *keyIndex) dropRegion(r int) []Loc {
	var drop []tent
	k.tags.each(func(tag uint32, l Loc) {
		if l.Region() == r {
			drop = append(drop, mkTent(tag, l))
		}
	})
	locs := make([]Loc, len(drop))
	for i := range drop {
		locs[i] = drop[i].loc()
		if t, j := k.tags.findLoc(drop[i].tag, locs[i]); t != nil {
			k.tags.removeAt(t, j)
			k.full -= fullOf(locs[i])
		}
	}
	return locs
}

// eachLoc calls fn with every entry's Loc.
func (k *keyIndex) eachLoc(fn func(Loc)) {
	k.tags.each(func(_ uint32, l Loc) { fn(l) })
	k.ext.each(func(_, _ uint64, l Loc) { fn(l) })
}

// mappings are the off-heap mappings of the tag segments and the extent
// tables.
func (k *keyIndex) mappings() []*offHeap {
	x := k.ext.mappings()
	return append(k.tags.mappings(), x[0], x[1])
}

// offHeap is the slot bytes of the tables that live off the Go heap, and
// of those the bind hook placed (E28).
func (k *keyIndex) offHeap() (mapped, bound int) {
	for _, h := range k.mappings() {
		if h == nil {
			continue
		}
		mapped += len(h.mem)
		if h.bound {
			bound += len(h.mem)
		}
	}
	return mapped, bound
}

// eachMapping calls fn with the whole mapping of each off-heap table, and
// whether it is bound.
func (k *keyIndex) eachMapping(fn func(mem []byte, bound bool)) {
	for _, h := range k.mappings() {
		if h != nil {
			fn(h.mem[:cap(h.mem)], h.bound)
			runtime.KeepAlive(h)
		}
	}
}

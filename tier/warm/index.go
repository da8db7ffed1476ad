package warm

// index maps a key hash to a packed location. It is an open-addressing
// table with linear probing and backward-shift deletion, made of one slice
// of pointer-free slots, so the GC never scans it. Hash 0 marks an empty
// slot (keyHash never returns 0). Not safe for concurrent writers: the
// owning shard's lock protects it.
type index struct {
	slots []slot
	mask  uint64
	n     int
}

type slot struct {
	h   uint64
	loc uint64
}

const minIndexSlots = 256

func newIndex(slots int) index {
	n := minIndexSlots
	for n < slots {
		n <<= 1
	}
	return index{slots: make([]slot, n), mask: uint64(n - 1)}
}

func (x *index) get(h uint64) (uint64, bool) {
	for i := h & x.mask; ; i = (i + 1) & x.mask {
		s := &x.slots[i]
		if s.h == h {
			return s.loc, true
		}
		if s.h == 0 {
			return 0, false
		}
	}
}

// put sets h -> loc and returns the previous location, if any.
func (x *index) put(h, loc uint64) (old uint64, existed bool) {
	if (x.n+1)*4 > len(x.slots)*3 {
		x.grow()
	}
	for i := h & x.mask; ; i = (i + 1) & x.mask {
		s := &x.slots[i]
		if s.h == h {
			old, s.loc = s.loc, loc
			return old, true
		}
		if s.h == 0 {
			s.h, s.loc = h, loc
			x.n++
			return 0, false
		}
	}
}

// del removes h, shifting later entries of its probe run back so lookups
// never need tombstones.
func (x *index) del(h uint64) bool {
	i := h & x.mask
	for ; ; i = (i + 1) & x.mask {
		if x.slots[i].h == h {
			break
		}
		if x.slots[i].h == 0 {
			return false
		}
	}
	for j := i; ; {
		j = (j + 1) & x.mask
		if x.slots[j].h == 0 {
			break
		}
		k := x.slots[j].h & x.mask // home slot of the entry at j
		// Leave it if its home lies cyclically in (i, j].
		if (i <= j && i < k && k <= j) || (i > j && (i < k || k <= j)) {
			continue
		}
		x.slots[i] = x.slots[j]
		i = j
	}
	x.slots[i] = slot{}
	x.n--
	return true
}

func (x *index) grow() {
	old := x.slots
	*x = index{slots: make([]slot, 2*len(old)), mask: uint64(2*len(old) - 1)}
	for _, s := range old {
		if s.h != 0 {
			x.put(s.h, s.loc)
		}
	}
}

func (x *index) bytes() int64 { return int64(len(x.slots)) * 16 }

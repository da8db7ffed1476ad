package logstore

import "runtime"

// index maps a 16-byte device key to the Loc of its live record: key
// tables (table.go) that grow with the keys (growth, E25); it holds the
// extent records' keys (keyIndex). Not safe for concurrent use: lookups
// may run together, changes need the caller's exclusive lock.
type index struct {
	growth[table, *table]
}

// migrateStep is how many slots of the old table each change drains: the
// old table (at most 90% full) is empty after n/migrateStep changes,
// while cur, 1.5 times larger, gains at most that many new keys.
const migrateStep = 8

// minExpected is the index's size when nothing says more: 4096 keys, a
// 109 KB table on the Go heap.
const minExpected = 4096

// newIndex makes an index sized for expected keys whose off-heap tables,
// its first and every later one, are given to bind (nil: none).
func newIndex(expected int, bind func(mem []byte) error) *index {
	return indexOf(tableFor(max(expected, minExpected), bind), bind)
}

// indexOf makes an index of table t.
func indexOf(t *table, bind func(mem []byte) error) *index {
	return &index{growth[table, *table]{cur: t, bind: bind}}
}

// locate returns the table holding key and its slot, or nil.
func (x *index) locate(a, b uint64) (*table, int) {
	if i := x.cur.find(a, b); i >= 0 {
		return x.cur, i
	}
	if x.old != nil {
		if i := x.old.find(a, b); i >= 0 {
			return x.old, i
		}
	}
	return nil, -1
}

func (x *index) get(k *[16]byte) (Loc, bool) {
	if t, i := x.locate(splitKey(k)); t != nil {
		return t.slots[i].l, true
	}
	return 0, false
}

// put sets key → l and returns the previous Loc (0 if none).
func (x *index) put(k *[16]byte, l Loc) Loc {
	a, b := splitKey(k)
	defer x.step()
	t, i := x.locate(a, b)
	if t == x.cur && t != nil {
		old := t.slots[i].l
		t.slots[i].l = l
		return old
	}
	var old Loc
	if t != nil { // in the old table: it moves now
		old = t.slots[i].l
		t.removeAt(i)
	}
	if x.full() {
		x.grow()
	}
	x.cur.insert(a, b, l)
	x.cur.count++
	return old
}

// load inserts a key known absent (loading a checkpoint).
func (x *index) load(a, b uint64, l Loc) {
	if x.full() {
		x.grow()
	}
	x.cur.insert(a, b, l)
	x.cur.count++
	x.step()
}

// del removes key and returns its Loc (0 if absent).
func (x *index) del(k *[16]byte) Loc {
	defer x.step()
	t, i := x.locate(splitKey(k))
	if t == nil {
		return 0
	}
	old := t.slots[i].l
	t.removeAt(i)
	return old
}

// delIf removes key only if it still maps to l (reclaim: a newer record
// elsewhere must survive). It reports whether it removed it.
func (x *index) delIf(k *[16]byte, l Loc) bool {
	defer x.step()
	t, i := x.locate(splitKey(k))
	if t == nil || t.slots[i].l != l {
		return false
	}
	t.removeAt(i)
	return true
}

// reserve makes room for expected entries at once (Open, before a scan
// fills the index): the old table is drained and cur rebuilt larger.
func (x *index) reserve(expected int) {
	x.drain()
	n := int(float64(expected)/maxLoad) + 1
	if n <= x.cur.n {
		return
	}
	old := x.cur
	x.cur = tableFor(expected, x.bind)
	for _, s := range old.slots {
		if s.l != 0 {
			x.cur.insert(s.k0, s.k1, s.l)
			x.cur.count++
		}
	}
	runtime.KeepAlive(old.off) // old.slots may live in its mapping
}

// each calls fn for every entry: cur's in slot order, then the old
// table's.
func (x *index) each(fn func(a, b uint64, l Loc)) {
	for _, t := range []*table{x.cur, x.old} {
		if t == nil {
			continue
		}
		for _, s := range t.slots {
			if s.l != 0 {
				fn(s.k0, s.k1, s.l)
			}
		}
	}
}

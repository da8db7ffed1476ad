package logstore

import (
	"runtime"
	"unsafe"
)

// index maps a 16-byte device key to the Loc of its live record: a table
// (table.go) at up to 90% load that grows with the keys (E25). When it is
// full a table 1.5 times larger takes the new keys and every change
// (put, del, delIf) then moves the entries of migrateStep slots of the old
// table into it, so no single change rebuilds the whole index; lookups
// look in both until the old one is empty and dropped. Not safe for
// concurrent use: lookups may run together, changes need the caller's
// exclusive lock.
type index struct {
	cur *table
	// old is the table being drained into cur, or nil. Its slots below mig
	// are empty: drained, and no backward shift of a removal moves an entry
	// below it. A key with its home below mig is therefore in cur, and a
	// lookup in old finds it nowhere (its probe starts at an empty slot),
	// which is right; every key is in exactly one of the two.
	old   *table
	mig   int
	moved uint64 // entries moved from an old table so far
	// bind places every off-heap table this index makes (Options.BindIndex
	// through Log.bindIndex; nil: none is bound, E28).
	bind func(mem []byte) error
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
	return &index{cur: tableFor(max(expected, minExpected), bind), bind: bind}
}

// len is how many keys the index holds.
func (x *index) len() int {
	if x.old != nil {
		return x.cur.count + x.old.count
	}
	return x.cur.count
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
	if float64(x.cur.count+1) > maxLoad*float64(x.cur.n) {
		x.grow()
	}
	x.cur.insert(a, b, l)
	x.cur.count++
	return old
}

// load inserts a key known absent (loading a checkpoint).
func (x *index) load(a, b uint64, l Loc) {
	if float64(x.cur.count+1) > maxLoad*float64(x.cur.n) {
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

// grow starts draining the full table into one 1.5 times larger (after
// draining the previous one whole, if it is not empty yet: cur outgrew it
// faster than the changes drained it, which the sizes make impossible).
func (x *index) grow() {
	x.drain()
	x.old, x.mig = x.cur, 0
	x.cur = tableFor(int(float64(x.old.n+x.old.n/2)*maxLoad), x.bind)
}

// step drains migrateStep slots of the old table, if there is one.
func (x *index) step() {
	if x.old != nil {
		x.migrate(migrateStep)
	}
}

// migrate drains up to steps slots of the old table, from mig up: each
// entry is inserted into cur and removed from old, whose backward shift may
// refill the slot (it is drained again before mig moves on). The old table
// is dropped once empty.
func (x *index) migrate(steps int) {
	o := x.old
	for ; steps > 0 && o.count > 0 && x.mig < o.n; steps-- {
		s := o.slots[x.mig]
		if s.l == 0 {
			x.mig++
			continue
		}
		x.cur.insert(s.k0, s.k1, s.l)
		x.cur.count++
		o.removeAt(x.mig)
		x.moved++
	}
	if o.count == 0 {
		x.old, x.mig = nil, 0
		runtime.KeepAlive(o.off) // its slots may live in that mapping until here
	}
}

// drain moves every entry of the old table, if any, and drops it.
func (x *index) drain() {
	if x.old != nil {
		x.migrate(x.old.n + x.old.count) // a step per slot passed and per entry moved
	}
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

// mappings are the off-heap mappings of the tables (nil for one on the
// heap or absent).
func (x *index) mappings() [2]*offHeap {
	m := [2]*offHeap{x.cur.off}
	if x.old != nil {
		m[1] = x.old.off
	}
	return m
}

// bytes is the DRAM the tables hold.
func (x *index) bytes() int {
	n := x.cur.n
	if x.old != nil {
		n += x.old.n
	}
	return n * int(unsafe.Sizeof(slot{}))
}

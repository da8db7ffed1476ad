package logstore

import "runtime"

// growth is the incremental growth of a keyed index (E25: the extent
// table, and the keyed table a scan replays into; the tag index grows a
// segment at a time instead, E35): a table
// at up to 90% load that, when full, starts draining into one 1.5 times
// larger; every change then moves the entries of migrateStep slots of the
// old table into the new one, so no single change rebuilds the index,
// and lookups look in both until the old one is empty and dropped. T is
// a key table (table).
type growth[T any, P rhTable[T]] struct {
	cur P
	// old is the table being drained into cur, or nil. Its slots below mig
	// are empty: drained, and no backward shift of a removal moves an entry
	// below it. An entry with its home below mig is therefore in cur, and a
	// lookup in old finds it nowhere (its probe starts at an empty slot),
	// which is right; every entry is in exactly one of the two.
	old   P
	mig   int
	moved uint64 // entries moved from an old table so far
	// bind places every off-heap table this index makes (Options.BindIndex
	// through Log.bindIndex; nil: none is bound, E28).
	bind func(mem []byte) error
}

// rhTable is what growth needs of a Robin Hood table.
type rhTable[T any] interface {
	*T
	slotCount() int
	entries() int
	// moveTo moves the entry at slot i, if there is one, into dst (which
	// counts it) and reports whether there was one.
	moveTo(i int, dst *T) bool
	// sized makes an empty table of the same kind for expected entries
	// (the receiver is not used).
	sized(expected int, bind func(mem []byte) error) *T
	mapping() *offHeap
	memBytes() int
}

// len is how many entries the tables hold.
func (x *growth[T, P]) len() int {
	if x.old != nil {
		return x.cur.entries() + x.old.entries()
	}
	return x.cur.entries()
}

// full reports whether one more entry takes cur past maxLoad.
func (x *growth[T, P]) full() bool {
	return float64(x.cur.entries()+1) > maxLoad*float64(x.cur.slotCount())
}

// grow starts draining the full table into one 1.5 times larger (after
// draining the previous one whole, if it is not empty yet: cur outgrew it
// faster than the changes drained it, which the sizes make impossible).
func (x *growth[T, P]) grow() {
	x.drain()
	x.old, x.mig = x.cur, 0
	n := x.old.slotCount()
	x.cur = x.cur.sized(int(float64(n+n/2)*maxLoad), x.bind)
}

// step drains migrateStep slots of the old table, if there is one.
func (x *growth[T, P]) step() {
	if x.old != nil {
		x.migrate(migrateStep)
	}
}

// migrate drains up to steps slots of the old table, from mig up: each
// entry is inserted into cur and removed from old, whose backward shift may
// refill the slot (it is drained again before mig moves on). The old table
// is dropped once empty.
func (x *growth[T, P]) migrate(steps int) {
	o := x.old
	for ; steps > 0 && o.entries() > 0 && x.mig < o.slotCount(); steps-- {
		if !o.moveTo(x.mig, x.cur) {
			x.mig++
			continue
		}
		x.moved++
	}
	if o.entries() == 0 {
		x.old, x.mig = nil, 0
		runtime.KeepAlive(o.mapping()) // its slots may live in that mapping until here
		return
	}
	// The slots below mig stay empty (above), so the drained part of an
	// off-heap old table goes back to the kernel as the drain passes each
	// huge page: the index holds about cur plus what old has left, not
	// both tables whole, for the many changes a drain takes.
	o.mapping().release(x.mig * (o.memBytes() / o.slotCount()))
}

// drain moves every entry of the old table, if any, and drops it.
func (x *growth[T, P]) drain() {
	if x.old != nil {
		x.migrate(x.old.slotCount() + x.old.entries()) // a step per slot passed and per entry moved
	}
}

// mappings are the off-heap mappings of the tables (nil for one on the
// heap or absent).
func (x *growth[T, P]) mappings() [2]*offHeap {
	m := [2]*offHeap{x.cur.mapping()}
	if x.old != nil {
		m[1] = x.old.mapping()
	}
	return m
}

// bytes is the DRAM the tables hold: an old table's released prefix
// not counted.
func (x *growth[T, P]) bytes() int {
	if x.old != nil {
		o := x.old.memBytes()
		if m := x.old.mapping(); m != nil {
			o -= min(m.released, o)
		}
		return x.cur.memBytes() + o
	}
	return x.cur.memBytes()
}

package logstore

import (
	"encoding/binary"
	"math/bits"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/tiercache/tiercache/nvmekv/emu/dev"
)

var (
	_ [unsafe.Sizeof(slot{}) - 24]byte
	_ [24 - unsafe.Sizeof(slot{})]byte
)

// table is a Robin Hood hash table over one non-pointer array (the GC
// never scans it): per slot 16 bytes of key and 8 bytes of Loc, 24 bytes,
// side by side so a probe touches one cache line. The home slot of a key
// is fastrange(mix(key), n) so n need not be a power of two. Deletion
// shifts the following entries back (no tombstones).
type table struct {
	slots []slot
	n     int
	count int
	off   *offHeap // the mapping that holds slots, when they are off the Go heap
}

type slot struct {
	k0, k1 uint64 // key bytes 0..7 and 8..15, little-endian
	l      Loc    // 0 = empty slot
}

const maxLoad = 0.90

// tableFor makes a table for expected keys; bind, if set, is given an
// off-heap table's whole mapping before any slot is written (E28).
func tableFor(expected int, bind func(mem []byte) error) *table {
	n := max(64, int(float64(expected)/maxLoad)+1)
	slots, off := newSlots[slot](n, bind)
	return &table{slots: slots, n: n, off: off}
}

// hugeTableBytes: a table at least this big (one 2 MiB huge page) lives off
// the Go heap, in an anonymous mapping advised to transparent huge pages.
// A lookup is one random access into a table of up to hundreds of MB
// (24 bytes a slot); with 4 KiB pages nearly every one also misses the TLB,
// and in a VM a TLB miss is a two-dimensional page walk. Slots hold no
// pointers, so the GC never needed to see them.
const hugeTableBytes = 2 << 20

// offHeap owns a mapping; it is unmapped once the holder is unreachable,
// or at once by free.
type offHeap struct {
	mem   []byte // the slots' bytes; cap(mem) is the whole mapping
	bound bool   // the bind hook placed it (E28)
	// released is how many bytes from the start were given back to the
	// kernel (release): a drained old table's empty prefix (E25).
	released int
	// grain is the unit release gives back: a huge page for a table in
	// a huge-page mapping, a page for a tag segment's (E35).
	grain   int
	cleanup runtime.Cleanup
}

// release gives the whole grains of h below byte upto back to the kernel
// (madvise(2) MADV_DONTNEED: an anonymous private page reads as zeros
// afterwards, an empty slot, and holds no memory until written). A
// failed advice leaves them resident; the table works either way.
func (h *offHeap) release(upto int) {
	if h == nil {
		return
	}
	if upto &^= h.grain - 1; upto <= h.released {
		return
	}
	if dontNeed(h.mem[h.released:upto]) == nil {
		h.released = upto
	}
}

// free unmaps h now (munmap(2)): its table must be dropped and no slot of
// it used again. nil: nothing.
func (h *offHeap) free() {
	if h == nil {
		return
	}
	h.cleanup.Stop()
	if dev.UnmapBuffer(h.mem[:cap(h.mem)]) == nil {
		offHeapBytes.Add(-int64(cap(h.mem)))
	}
	h.mem = nil
}

// offHeapBytes is what the process's off-heap tables map now.
var offHeapBytes atomic.Int64

// newSlots returns n zeroed slots of type S (pointer-free: a key table's
// slot or a tag segment's tslot): on the heap for a small table, else in a
// huge-page mapping (on the heap after all if mmap fails), given to bind
// (if set) while no page of it has been touched. A failed bind leaves the
// mapping as it is: unbound, and as usable.
func newSlots[S slot | tslot](n int, bind func(mem []byte) error) ([]S, *offHeap) {
	if n*int(unsafe.Sizeof(*new(S))) < hugeTableBytes {
		return make([]S, n), nil
	}
	return mappedSlots[S](n, mapHuge, hugeTableBytes, bind)
}

// mappedSlots returns n zeroed slots in a mapping that mapf makes (its
// bytes given back grain at a time by release), on the heap if mmap
// fails; bind as for newSlots.
func mappedSlots[S slot | tslot](n int, mapf func(int) ([]byte, error), grain int, bind func(mem []byte) error) ([]S, *offHeap) {
	mem, err := mapf(n * int(unsafe.Sizeof(*new(S))))
	if err != nil {
		return make([]S, n), nil
	}
	h := &offHeap{mem: mem, grain: grain}
	if bind != nil {
		h.bound = bind(mem[:cap(mem)]) == nil
	}
	offHeapBytes.Add(int64(cap(mem)))
	h.cleanup = runtime.AddCleanup(h, func(m []byte) {
		if dev.UnmapBuffer(m[:cap(m)]) == nil { // munmap(2) the whole mapping
			offHeapBytes.Add(-int64(cap(m)))
		}
	}, mem)
	return unsafe.Slice((*S)(unsafe.Pointer(&mem[0])), n), h
}

func splitKey(k *[16]byte) (uint64, uint64) {
	return binary.LittleEndian.Uint64(k[:8]), binary.LittleEndian.Uint64(k[8:])
}

func joinKey(a, b uint64) (k [16]byte) {
	binary.LittleEndian.PutUint64(k[:8], a)
	binary.LittleEndian.PutUint64(k[8:], b)
	return k
}

// home is the preferred slot of a key. Device keys may be structured (not
// hashes), so they are mixed first.
func (x *table) home(a, b uint64) int {
	hi, _ := bits.Mul64(homeMix(a, b), uint64(x.n))
	return int(hi)
}

func (x *table) dist(slot int) int {
	d := slot - x.home(x.slots[slot].k0, x.slots[slot].k1)
	if d < 0 {
		d += x.n
	}
	return d
}

// find returns the slot of key, or -1.
func (x *table) find(a, b uint64) int {
	i := x.home(a, b)
	for d := 0; ; d++ {
		s := &x.slots[i]
		if s.l == 0 {
			return -1
		}
		if s.k0 == a && s.k1 == b {
			return i
		}
		if x.dist(i) < d {
			return -1
		}
		if i++; i == x.n {
			i = 0
		}
	}
}

// insert places a new key (known absent) with Robin Hood displacement;
// the caller counts it.
func (x *table) insert(a, b uint64, l Loc) {
	i := x.home(a, b)
	for d := 0; ; d++ {
		s := &x.slots[i]
		if s.l == 0 {
			*s = slot{a, b, l}
			return
		}
		if od := x.dist(i); od < d {
			*s, a, b, l = slot{a, b, l}, s.k0, s.k1, s.l
			d = od
		}
		if i++; i == x.n {
			i = 0
		}
	}
}

func (x *table) removeAt(i int) {
	for {
		j := i + 1
		if j == x.n {
			j = 0
		}
		if x.slots[j].l == 0 || x.dist(j) == 0 {
			x.slots[i] = slot{}
			break
		}
		x.slots[i] = x.slots[j]
		i = j
	}
	x.count--
}

func (x *table) slotCount() int    { return x.n }
func (x *table) entries() int      { return x.count }
func (x *table) mapping() *offHeap { return x.off }
func (x *table) memBytes() int     { return x.n * int(unsafe.Sizeof(slot{})) }

func (*table) sized(expected int, bind func(mem []byte) error) *table {
	return tableFor(expected, bind)
}

func (x *table) moveTo(i int, dst *table) bool {
	s := x.slots[i]
	if s.l == 0 {
		return false
	}
	dst.insert(s.k0, s.k1, s.l)
	dst.count++
	x.removeAt(i)
	return true
}

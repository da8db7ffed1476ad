package logstore

import (
	"math/bits"
	"unsafe"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu/dev"
)

// With Options.ReplayBatch, a scan's index changes (recover.go) are gathered in batches and applied
// in the order of their keys' home slots in the keyed table, so that the
// table is walked forward instead of probed at random: at 100M keys the
// table is some 2.6 GB, and a change applied as its record is read is a
// cache miss (and, on 4 KiB pages, a TLB miss) almost every time. The sort
// is stable, so the changes of one key keep the log's order, and changes
// of different keys commute: the index and the regions' live counts come
// out as an in-order replay leaves them (E36).

// replayOp is one change: key (k0, k1) now at l, or deleted (l 0); h is
// the mix the keyed table's home slot is taken from (table.home).
type replayOp struct {
	h, k0, k1 uint64
	l         Loc
}

// ReplayBatch is the batch the keyed replay took by default before E37
// (Options.ReplayBatch): 2M changes of 32 bytes, 64 MiB, and as much
// again for the sort, mapped off the Go heap while a scan runs.
const ReplayBatch = 1 << 21

// replay is a scan's batch of changes.
type replay struct {
	ops, tmp []replayOp
	mem      [][]byte // the mappings of ops and tmp (nil: on the heap)
	n        int
}

// newReplay makes a batch of up to n changes, growing to it as filled.
func newReplay(n int) *replay { return &replay{ops: make([]replayOp, 0, min(n, 4096)), n: n} }

// add queues the change of key (a, b) (splitKey) to l (0: a delete) and
// reports whether the batch is full (the caller applies it).
func (rp *replay) add(a, b uint64, l Loc) bool {
	if len(rp.ops) == cap(rp.ops) {
		rp.grow()
	}
	rp.ops = append(rp.ops, replayOp{h: homeMix(a, b), k0: a, k1: b, l: l})
	return len(rp.ops) >= rp.n
}

// pending is how many changes wait in the batch.
func (rp *replay) pending() int { return len(rp.ops) }

// grow doubles the batch's room, up to n, off the heap past a small size.
func (rp *replay) grow() {
	want := min(rp.n, 2*cap(rp.ops))
	ops, m1 := replaySlice(want)
	tmp, m2 := replaySlice(want)
	copy(ops, rp.ops)
	ops = ops[:len(rp.ops)]
	rp.free()
	rp.ops, rp.tmp, rp.mem = ops, tmp[:0], [][]byte{m1, m2}
}

// replaySlice returns room for n ops: mapped when that is a MiB or more.
func replaySlice(n int) ([]replayOp, []byte) { return mappedSlice[replayOp](n, 1<<20) }

// mappedSlice returns room for n values of a pointer-free T, mapped off
// the heap when that is minMap bytes or more (with its mapping; else nil).
func mappedSlice[T any](n, minMap int) ([]T, []byte) {
	var zero T
	sz := n * int(unsafe.Sizeof(zero))
	if sz >= minMap {
		if mem, err := mapPages(sz); err == nil {
			return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(mem))), n), mem
		}
	}
	return make([]T, n), nil
}

// unmapAll unmaps the mappings of mem (nil ones are on the heap).
func unmapAll(mem [][]byte) {
	for _, m := range mem {
		if m != nil {
			_ = dev.UnmapBuffer(m[:cap(m)])
		}
	}
}

// free unmaps the batch's mappings.
func (rp *replay) free() {
	unmapAll(rp.mem)
	rp.ops, rp.tmp, rp.mem = nil, nil, nil
}

// apply sorts the batch by home (stably) and applies it to x, keeping the
// regions' live counts (lg.mu is the scan's: nothing else runs).
func (rp *replay) apply(lg *Log, x *index) {
	ops := rp.sorted()
	for i := range ops {
		op := &ops[i]
		k := joinKey(op.k0, op.k1)
		if op.l != 0 {
			if old := x.put(&k, op.l); old != 0 {
				lg.dropLocked(old)
			}
			lg.addLocked(op.l)
		} else if old := x.del(&k); old != 0 {
			lg.dropLocked(old)
		}
	}
	rp.ops = rp.ops[:0]
}

// sorted returns the batch ordered by the top 32 bits of h, stably: an
// LSD radix sort of two 16-bit digits between ops and tmp. The home slot
// of a table of up to 2^32 slots is monotone in those bits.
func (rp *replay) sorted() []replayOp {
	src := rp.ops
	if len(src) < 2 {
		return src
	}
	if cap(rp.tmp) < len(src) {
		rp.tmp = make([]replayOp, len(src)) // a batch that never grew past its first room
	}
	dst := rp.tmp[:len(src)]
	var count [1 << 16]int
	for _, shift := range [2]uint{32, 48} {
		clear(count[:])
		for i := range src {
			count[uint16(src[i].h>>shift)]++
		}
		sum := 0
		for d, c := range count {
			count[d] = sum
			sum += c
		}
		for i := range src {
			d := uint16(src[i].h >> shift)
			dst[count[d]] = src[i]
			count[d]++
		}
		src, dst = dst, src
	}
	return src // after two passes: ops again
}

// homeMix is what table.home takes the home slot of key (a, b) from.
func homeMix(a, b uint64) uint64 { return nvmekv.Mix64(a ^ bits.RotateLeft64(b, 29)) }

package logstore

import (
	"runtime"
	"unsafe"

	"github.com/tiercache/tiercache/nvmekv/emu/dev"
)

// The undo journal (E21): every index change a Store, a Delete or a
// Strict-mode evacuation made since the last Flush that completed, with
// the location the key had before (0: none) and the append count of its
// record. A Flush that completes drops the changes it made durable; a
// failed write (which makes the namespace read-only, E7) puts every
// journaled key back where it was, newest change first, so that a Store
// or Delete whose Flush failed is not seen by later reads either: reads
// keep returning what the last completed Flush left, as a restart would.
//
// The journal holds at most undoMax changes; past that (a caller that
// writes much and never flushes, as a cache without durability does) it
// is dropped and stays off until a completed Flush has made durable every
// change made while it was off (Stats.UndoDropped counts it), and a
// failed write then leaves the index as it is.
//
// A region about to be written again holds records the journal may point
// back to. A restart would not find them either, so those keys go back to
// absent (undoForgetRegionLocked). A sync that makes every record
// appended so far durable (before a moved region is reused) ends their
// changes as a completed Flush does.

// undoMax bounds the journal: 48 bytes a change, 3 MiB at most, mapped
// off the Go heap at the first change (newJournal), so that a journal
// filled and emptied again and again is neither allocated anew nor
// scanned by the collector; its pages come in as it first fills.
const undoMax = 1 << 16

// newJournal maps room for undoMax changes (on the heap if mmap fails);
// the mapping goes when its offHeap is unreachable (runtime.AddCleanup),
// with the Log that holds it.
func newJournal() ([]undoRec, *offHeap) {
	mem, err := mapPages(undoMax * int(unsafe.Sizeof(undoRec{})))
	if err != nil {
		return make([]undoRec, 0, undoMax), nil
	}
	h := &offHeap{mem: mem, grain: pageBytes}
	h.cleanup = runtime.AddCleanup(h, func(m []byte) { _ = dev.UnmapBuffer(m[:cap(m)]) }, mem)
	return unsafe.Slice((*undoRec)(unsafe.Pointer(&mem[0])), undoMax)[:0], h
}

// undoRec is one change: both Locs are kept, so that putting it back
// finds the entry by its Loc and checks no key (E8).
type undoRec struct {
	key [16]byte
	old Loc    // where the key was before, 0 if absent
	new Loc    // where the change put it, 0 if deleted
	seq uint64 // lg.appended after the change's record
}

// journalLocked records that key's index entry changed from old to nl
// (lg.mu held for writing).
func (lg *Log) journalLocked(key *[16]byte, old, nl Loc) {
	if lg.undoOff {
		lg.undoGap = lg.appended // not journaled: the journal stays off until it is durable
		return
	}
	if len(lg.undo) >= undoMax {
		lg.undo, lg.undoOff, lg.undoGap = lg.undo[:0], true, lg.appended
		lg.st.UndoDropped++
		return
	}
	if cap(lg.undo) < undoMax {
		lg.undo, lg.undoMem = newJournal()
	}
	lg.undo = append(lg.undo, undoRec{key: *key, old: old, new: nl, seq: lg.appended}) // within its room: no allocation
}

// durableLocked drops the changes whose records a completed Flush made
// durable (every record appended up to mark).
func (lg *Log) durableLocked(mark uint64) {
	i := 0
	for i < len(lg.undo) && lg.undo[i].seq <= mark {
		i++
	}
	lg.undo = append(lg.undo[:0], lg.undo[i:]...)
	if lg.undoOff && mark >= lg.undoGap {
		lg.undoOff = false
	}
}

// undoForgetRegionLocked: region r is about to be written again, so no
// journaled key may be put back onto a record in it; each goes back to
// absent instead, which is what a restart would find. Nor may undoing
// look for an entry by a Loc in it: the Loc may come to name another
// key's record, with the same tag (E30).
func (lg *Log) undoForgetRegionLocked(r int) {
	for i := range lg.undo {
		u := &lg.undo[i]
		if u.old != 0 && u.old.Region() == r {
			u.old = 0
		}
		if u.new != 0 && u.new.Region() == r {
			u.new = 0 // reclaim drops that entry; a later record there may be another key's
		}
	}
}

// undoLocked puts every journaled key back where it was, newest first.
func (lg *Log) undoLocked() {
	for i := len(lg.undo) - 1; i >= 0; i-- {
		u := &lg.undo[i]
		lg.idx.replace(&u.key, u.new, u.old)
	}
	lg.st.Undone += uint64(len(lg.undo))
	lg.undo = lg.undo[:0]
}

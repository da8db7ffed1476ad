package logstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/tiercache/tiercache/nvmekv/emu/dev"
)

// Clear drops every record stored before it, at a cost that does not
// grow with the keys (E34): it makes the next region seq S = nextSeq the
// store's clear seq, written durably in the superblock (version 4, see
// layout.go), so that every region incarnation written so far, all of
// them below S, holds nothing live; then it starts a fresh index, the
// old tables left to be freed, and zeroes the live counts of every
// region. Nothing is read or walked per key, and no region is written:
// the open region is abandoned (records after Clear go in a new region,
// seq S or more), and the regions are reused later as empty ones (their
// Cache-mode reclaim reads nothing and reports no key, E6). A scan at
// Open skips the regions below S unread.
//
// When it returns nil, a Retrieve or Exist of a key stored before
// answers not found, Stats.Items counts only what was stored after, and
// both hold after a clean close and after a crash. A crash inside it
// leaves either every record it had or none: the superblock write is
// the one change to the device. Clear reports no key to OnReclaim.
//
// It fails, changing nothing, on a closed or read-only log, on a store
// with a version-2 superblock (errors.ErrUnsupported: its region headers
// name no store, and its format has no clear record; the caller deletes
// key by key instead), and on a cancelled ctx. A failed superblock write
// or sync leaves the index as it was and the log read-only (ErrReadOnly
// wrapping the error, as a failed region write does, E7): whether the
// clear reached the device is unknown until a reopen finds all or none.
// It allocates no block, so a full filesystem does not fail it.
func (lg *Log) Clear(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("logstore: clear %s: %w", lg.o.Path, err)
	}
	lg.syncMu.Lock() // no Flush between the seal and the superblock
	defer lg.syncMu.Unlock()
	lg.mu.Lock()
	defer lg.mu.Unlock()
	if err := lg.flushState(); err != nil {
		return fmt.Errorf("logstore: clear %s: %w", lg.o.Path, err)
	}
	if lg.sb.version == sbVersionV2 {
		return fmt.Errorf("logstore: clear %s: %w: a version-2 store has no clear record (reformat it to clear it whole)",
			lg.o.Path, errors.ErrUnsupported)
	}
	sbuf, err := dev.MapBuffer(blockBytes)
	if err != nil {
		return fmt.Errorf("logstore: clear %s: %w", lg.o.Path, err)
	}
	defer dev.UnmapBuffer(sbuf)
	prev := lg.sb
	lg.sb.version, lg.sb.clearSeq = sbVersionClr, lg.nextSeq
	if err := lg.writeSuperblock(sbuf); err != nil {
		lg.sb = prev
		lg.failLocked(err)
		return fmt.Errorf("logstore: clear: %w", lg.failed)
	}
	lg.clearLocked()
	return nil
}

// clearLocked empties the DRAM state once the clear seq is durable: a
// fresh index (the old one's off-heap tables give their pages back to
// the kernel at once, E25, and are unmapped when unreachable, E8),
// every region without live records (each keeps its seq, so reusing it
// goes through reclaim: readers of it recheck, and it is deallocated,
// E18), no open region, and an empty undo journal (every change in it
// was cleared: none may be put back, E21). Every record appended so far
// counts as durable: the clear made their fate durable.
func (lg *Log) clearLocked() {
	for _, h := range lg.idx.mappings() {
		if h != nil {
			h.release(cap(h.mem)) // its pages go back to the kernel now, not at the next GC
		}
	}
	lg.idx = newKeyIndex(lg.expected(), &lg.lay, lg.bindIdx)
	for r := range lg.regs {
		lg.regs[r] = regionState{seq: lg.regs[r].seq}
	}
	lg.liveBytes = 0
	lg.act = nil // records after Clear go in a region with seq ≥ the clear seq
	lg.moves = lg.moves[:0]
	lg.undo, lg.undoOff, lg.undoGap = lg.undo[:0], false, 0
	lg.durable = lg.appended
	lg.st.Clears++
}

package emu

import (
	"errors"
	"fmt"
	"syscall"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/uring"
)

// The log: regions are taken round-robin, so the next region is always the
// oldest (FIFO). All methods named *Locked run with e.mu held.

func alignUp(n int) int { return (n + blockBytes - 1) &^ (blockBytes - 1) }

func (e *Namespace) regionOff(r int) int64 { return e.dataOff + int64(r)*int64(e.opts.RegionBytes) }

// appendLocked appends a record to the open region, rotating when it is
// full. It returns the record's loc, or an NVMe status / errno to report.
func (e *Namespace) appendLocked(kind uint8, key []byte, value []byte) (loc, int32) {
	if e.failed != nil {
		return 0, -int32(errnoOf(e.failed))
	}
	size := recSize(len(value))
	if e.opts.Mode == Strict {
		if st := e.makeRoomLocked(size, kind == kindDelete); st != 0 {
			return 0, st
		}
	} else if e.act == nil || e.act.fill+size > e.opts.RegionBytes {
		if st := e.rotateLocked(); st != 0 {
			return 0, st
		}
	}
	b := e.act
	off := b.fill
	putRecord(b.mem[off:], kind, b.seq, key, value)
	b.fill += size
	e.appended++
	return mkLoc(b.region, len(key), off, size), 0
}

// errnoOf finds the errno inside a failure (EIO when there is none).
func errnoOf(err error) syscall.Errno {
	var en syscall.Errno
	for e := err; e != nil; {
		if x, ok := e.(syscall.Errno); ok {
			return x
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			break
		}
		e = u.Unwrap()
	}
	if en == 0 {
		en = syscall.EIO
	}
	return en
}

// rotateLocked seals the open region (its write is submitted) and opens
// the next one, reclaiming it first if it holds data.
func (e *Namespace) rotateLocked() int32 {
	next := (e.cur + 1) % e.nReg
	if rs := e.regs[next]; rs.seq != 0 && e.opts.Mode == Strict && rs.live > 0 {
		return nvmekv.Status(0, nvmekv.SCCapacityExceeded, true)
	}
	if e.act != nil {
		e.submitWriteLocked(e.act, alignUp(e.act.fill))
		e.act = nil
	}
	b, err := e.freeBufLocked()
	if err != nil {
		return -int32(errnoOf(err))
	}
	if e.regs[next].moved {
		// Its live records were copied into later regions: those copies
		// must be durable before the originals are overwritten.
		if err := e.syncLocked(); err != nil {
			return -int32(errnoOf(err))
		}
	}
	if e.regs[next].seq != 0 {
		e.reclaimLocked(next, b)
	}
	clear(b.mem)
	b.region, b.seq, b.written, b.pending = next, e.nextSeq, 0, b.pending[:0]
	e.nextSeq++
	putRegionHdr(b.mem, b.seq)
	b.fill = regionHdr
	e.regs[next] = regionState{seq: b.seq}
	e.cur = next
	e.act = b
	return 0
}

// freeBufLocked returns a write buffer that is not the open one, waiting
// (with the lock held: writes complete without it) for its writes.
func (e *Namespace) freeBufLocked() (*wbuf, error) {
	var best *wbuf
	for _, b := range e.bufs {
		if b == e.act {
			continue
		}
		if best == nil || b.seq < best.seq {
			best = b
		}
	}
	for _, w := range best.pending {
		<-w.done
		if err := e.checkWrite(w); err != nil {
			e.failLocked(err)
			return nil, e.failed
		}
	}
	best.pending = best.pending[:0]
	best.region = -1
	return best, nil
}

// checkWrite returns the outcome of a completed write (computed once).
func (e *Namespace) checkWrite(w *ioWait) error {
	w.once.Do(func() { w.err = e.writeOutcome(w) })
	return w.err
}

func (e *Namespace) writeOutcome(w *ioWait) error {
	if w.res == w.want {
		return nil
	}
	var err error = syscall.EIO
	if w.res < 0 {
		err = syscall.Errno(-w.res)
	} else if w.data != nil {
		// Short write: finish it synchronously to learn why (ENOSPC on a full filesystem).
		if perr := pwrite(e.fd, w.data[w.res:], w.off+int64(w.res)); perr == nil {
			w.res = w.want
			return nil
		} else if !errors.Is(perr, syscall.EINVAL) {
			err = perr
		}
	}
	return fmt.Errorf("emu: write of %d bytes at offset %d of %s failed: %w", w.want, w.off, e.opts.Path, err)
}

func (e *Namespace) failLocked(err error) {
	if e.failed == nil {
		e.failed = fmt.Errorf("%w: %w", ErrReadOnly, err)
		e.log.Error("emu: write failed; namespace is read-only until reopened")
	}
}

// submitWriteLocked writes b.mem[b.written:end) to its region.
func (e *Namespace) submitWriteLocked(b *wbuf, end int) {
	if end <= b.written {
		return
	}
	data := b.mem[b.written:end]
	off := e.regionOff(b.region) + int64(b.written)
	w := &ioWait{done: make(chan struct{}), want: int32(len(data)), off: off, data: data}
	b.written = end
	b.pending = append(b.pending, w)
	e.st.RegionWrites++
	if e.opts.Fault != nil {
		if en := e.opts.Fault(true, off, len(data)); en != 0 {
			w.res = -int32(en)
			close(w.done)
			return
		}
	}
	fd, idx, fixed := int32(e.fd), b.idx, e.fixed
	req := &uring.Request{
		Prep: func(s *uring.SQE) {
			if fixed {
				s.PrepWriteFixed(fd, data, uint64(off), idx)
			} else {
				s.PrepWrite(fd, data, uint64(off))
			}
		},
		Done: func(r uring.Result) { w.res = r.Res; close(w.done) },
	}
	if err := e.front.Submit(req); err != nil {
		w.res = -int32(errnoOf(err))
		close(w.done)
	}
}

// flushLocked pads the open region to a block boundary and submits its
// unwritten blocks.
func (e *Namespace) flushLocked() error {
	if b := e.act; b != nil {
		end := alignUp(b.fill)
		b.fill = end
		e.submitWriteLocked(b, end)
		if b.fill >= e.opts.RegionBytes {
			e.act = nil // full: the next append rotates
		}
	}
	return nil
}

// waitAll waits for every write submitted so far, then fdatasyncs.
func (e *Namespace) waitAll() error {
	e.mu.Lock()
	var ws []*ioWait
	for _, b := range e.bufs {
		ws = append(ws, b.pending...)
	}
	e.mu.Unlock()
	var first error
	for _, w := range ws {
		<-w.done
		if err := e.checkWrite(w); err != nil && first == nil {
			first = err
		}
	}
	if first == nil {
		if err := fdatasync(e.fd); err != nil {
			first = fmt.Errorf("emu: fdatasync %s: %w", e.opts.Path, err)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.st.Syncs++
	if first != nil {
		e.failLocked(first)
		return e.failed
	}
	for _, b := range e.bufs {
		keep := b.pending[:0]
		for _, w := range b.pending {
			if !w.finished() {
				keep = append(keep, w)
			}
		}
		b.pending = keep
	}
	return nil
}

// reclaimLocked drops every live record of region r from the index,
// reading the region into b to learn its keys.
func (e *Namespace) reclaimLocked(r int, b *wbuf) {
	seq := e.regs[r].seq
	n := 0
	if e.regs[r].live == 0 {
		e.regs[r] = regionState{}
		e.st.Reclaimed++
		return
	}
	if err := e.readRegion(r, b); err == nil {
		walkRegion(b.mem, seq, e.opts.RegionBytes, func(off int, rc *rec, size int) {
			if rc.kind == kindStore && e.idx.delIf(&rc.key, mkLoc(r, rc.klen, off, size)) {
				e.liveBytes -= int64(size)
				e.reclaimQ = append(e.reclaimQ, rc.key)
				n++
			}
		})
	}
	if e.regs[r].live > uint32(n) {
		// Unreadable region (or records not found): sweep the index.
		var drop [][16]byte
		var locs []loc
		e.idx.each(func(a, b uint64, l loc) {
			if l.region() == r {
				drop, locs = append(drop, joinKey(a, b)), append(locs, l)
			}
		})
		for i := range drop {
			e.idx.del(&drop[i])
			e.liveBytes -= int64(locs[i].size())
			e.reclaimQ = append(e.reclaimQ, drop[i])
		}
	}
	e.regs[r] = regionState{}
	e.st.Reclaimed++
}

// readRegion reads region r into b.mem (synchronously).
func (e *Namespace) readRegion(r int, b *wbuf) error {
	off := e.regionOff(r)
	if e.opts.Fault != nil {
		if en := e.opts.Fault(false, off, len(b.mem)); en != 0 {
			return en
		}
	}
	fd, idx, fixed, mem := int32(e.fd), b.idx, e.fixed, b.mem
	req := &uring.Request{Prep: func(s *uring.SQE) {
		if fixed {
			s.PrepReadFixed(fd, mem, uint64(off), idx)
		} else {
			s.PrepRead(fd, mem, uint64(off))
		}
	}}
	res, err := e.front.Do(bgCtx, req)
	if err != nil {
		return err
	}
	if res[0].Res < 0 {
		return syscall.Errno(-res[0].Res)
	}
	if int(res[0].Res) < len(mem) {
		clear(mem[res[0].Res:])
	}
	return nil
}

// walkRegion calls fn for each valid record of a region image. A zero
// magic is padding: the walk continues at the next block. It returns where
// appending may resume: the offset of the first invalid record (torn tail or
// older data; torn = true), else the block end after the last valid record.
func walkRegion(mem []byte, seq uint64, maxValue int, fn func(off int, r *rec, size int)) (end int, torn bool) {
	off, last := regionHdr, regionHdr
	for off+recHdrBytes <= len(mem) {
		if mem[off] == 0 && mem[off+1] == 0 && mem[off+2] == 0 && mem[off+3] == 0 {
			next := alignUp(off + 1)
			if next == off {
				next += blockBytes
			}
			off = next
			continue
		}
		r, ok := parseRecord(mem[off:], seq, maxValue)
		if !ok {
			return off, true
		}
		size := recSize(r.vlen)
		fn(off, &r, size)
		off += size
		last = off
	}
	return min(alignUp(last), len(mem)), false
}

// syncLocked waits for every submitted write and fdatasyncs, with the lock
// held (Strict mode, before reusing a region whose records were moved).
func (e *Namespace) syncLocked() error {
	for _, b := range e.bufs {
		for _, w := range b.pending {
			<-w.done
			if err := e.checkWrite(w); err != nil {
				e.failLocked(err)
				return e.failed
			}
		}
		b.pending = b.pending[:0]
	}
	if err := fdatasync(e.fd); err != nil {
		e.failLocked(fmt.Errorf("emu: fdatasync %s: %w", e.opts.Path, err))
		return e.failed
	}
	e.st.Syncs++
	return nil
}

// makeRoomLocked (Strict mode) makes the open region able to take size
// more bytes. Strict mode keeps the region after the open one (the oldest,
// next to be reused) free of live records: right after rotating into a
// fresh region it copies the live records of the new oldest region into it
// (they fit: they came from one region), so the next rotation never finds
// live data in its way. Deletes skip the fullness check (they free space).
func (e *Namespace) makeRoomLocked(size int, isDelete bool) int32 {
	R := e.opts.RegionBytes
	full := nvmekv.Status(0, nvmekv.SCCapacityExceeded, true)
	if !isDelete && e.liveBytes+int64(size) > int64(e.nReg-2)*int64(R-regionHdr) {
		return full
	}
	for tries := 0; tries <= 2*e.nReg+2; tries++ {
		if e.act != nil && e.act.fill+size <= R {
			return 0
		}
		next := (e.cur + 1) % e.nReg
		if e.regs[next].live > 0 {
			// Only after a crash at the wrong moment: evacuate into the
			// open region if it has room, else the log is stuck full.
			if e.act == nil || e.act.fill+int(e.regs[next].liveB) > R {
				return full
			}
			if st := e.evacuateLocked(next); st != 0 {
				return st
			}
		}
		if st := e.rotateLocked(); st != 0 {
			return st
		}
		if nn := (e.cur + 1) % e.nReg; e.regs[nn].live > 0 {
			if st := e.evacuateLocked(nn); st != 0 {
				return st
			}
		}
	}
	return full
}

// evacuateLocked copies region r's live records into the open region
// (their index entries move with them) and marks r moved.
func (e *Namespace) evacuateLocked(r int) int32 {
	img := []byte(nil)
	if src := e.bufOfLocked(r); src != nil {
		img = src.mem
	} else {
		b, err := e.freeBufLocked()
		if err != nil {
			return -int32(errnoOf(err))
		}
		if err := e.readRegion(r, b); err != nil {
			return -int32(errnoOf(err))
		}
		img = b.mem
	}
	a := e.act
	walkRegion(img, e.regs[r].seq, e.opts.RegionBytes, func(off int, rc *rec, size int) {
		if rc.kind != kindStore || a.fill+size > e.opts.RegionBytes {
			return
		}
		if l, ok := e.idx.get(&rc.key); !ok || l != mkLoc(r, rc.klen, off, size) {
			return
		}
		noff := a.fill
		putRecord(a.mem[noff:], kindStore, a.seq, rc.key[:rc.klen], img[off+recHdrBytes:off+recHdrBytes+rc.vlen])
		a.fill += size
		e.appended++
		e.setLocked(&rc.key, mkLoc(a.region, rc.klen, noff, size))
	})
	e.st.Evacuated++
	if e.regs[r].live != 0 {
		e.log.Warn("emu: live records of a region could not be moved", zap.Int("region", r), zap.Uint32("left", e.regs[r].live))
		return nvmekv.Status(0, nvmekv.SCCapacityExceeded, true)
	}
	e.regs[r].moved = true
	return 0
}

// resumeLocked reopens region cur for appending at curEnd, so a restart
// does not waste the rest of it. The block holding curEnd is rewritten
// from its start: it was never part of a completed Flush (a Flush pads to
// a block end, and a scan stops inside a block only at a torn write).
func (e *Namespace) resumeLocked() {
	end := e.curEnd
	if end < regionHdr || e.regs[e.cur].seq == 0 || end+recSize(0) > e.opts.RegionBytes {
		return
	}
	b, err := e.freeBufLocked()
	if err != nil {
		return
	}
	if err := e.readRegion(e.cur, b); err != nil {
		e.log.Warn("emu: cannot read the last region back, starting a new one", zap.Error(err))
		return
	}
	clear(b.mem[end:])
	b.region, b.seq, b.fill, b.written = e.cur, e.regs[e.cur].seq, end, end&^(blockBytes-1)
	e.act = b
}

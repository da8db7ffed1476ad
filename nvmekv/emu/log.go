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
// oldest (FIFO). All methods named *Locked run with e.mu held (locked;
// execLocked of a Retrieve or Exist, lookupLocked and bufOfLocked also
// read-locked).

func alignUp(n int) int { return (n + blockBytes - 1) &^ (blockBytes - 1) }

func (e *Namespace) regionOff(r int) int64 { return e.dataOff + int64(r)*int64(e.opts.RegionBytes) }

// appendLocked appends a record to the open region, rotating when it is
// full. It returns the record's loc, or an NVMe status / errno to report.
func (e *Namespace) appendLocked(kind uint8, key []byte, value []byte) (loc, int32) {
	if e.failed != nil {
		return 0, -int32(errnoOf(e.failed))
	}
	ext := kind == kindStore && useExtent(len(value))
	if e.opts.Mode == Strict {
		if st := e.makeRoomLocked(len(value), ext, kind == kindDelete); st != 0 {
			return 0, st
		}
	} else if e.act == nil || !e.act.fits(len(value), ext) {
		if st := e.rotateLocked(); st != 0 {
			return 0, st
		}
	}
	return e.putLocked(e.act, kind, key, value, ext), 0
}

// putLocked appends a record to b, which has room (fits).
func (e *Namespace) putLocked(b *wbuf, kind uint8, key []byte, value []byte, ext bool) loc {
	off := b.fill
	e.appended++
	if ext {
		b.low -= extBytes(len(value))
		putExtRecord(b.mem, off, b.seq, key, b.low, value)
		b.fill += extRecBytes
		return mkExtLoc(b.region, len(key), b.low, len(value))
	}
	size := recSize(len(value))
	putRecord(b.mem[off:], kind, b.seq, key, value)
	b.fill += size
	return mkLoc(b.region, len(key), off, size)
}

// fits reports whether b has room for a record of vlen value bytes (ext:
// as a header plus an extent): the forward end, rounded to its block for an
// extent, must not pass the extents' low end.
func (b *wbuf) fits(vlen int, ext bool) bool {
	if ext {
		return alignUp(b.fill+extRecBytes)+extBytes(vlen) <= b.low
	}
	return b.fill+recSize(vlen) <= b.low
}

// fitsBytes reports whether b surely has room for records that held n
// bytes (inline records plus extents, liveB) in another region.
func (b *wbuf) fitsBytes(n int) bool { return alignUp(b.fill)+n+blockBytes <= b.low }

// recBytes is the region space a record of vlen value bytes takes.
func recBytes(vlen int, ext bool) int {
	if ext {
		return extRecBytes + extBytes(vlen)
	}
	return recSize(vlen)
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
		e.durable = max(e.durable, e.appended) // every record appended so far was submitted and synced
		e.durableLocked(e.appended)
	}
	if e.regs[next].seq != 0 {
		e.undoForgetRegionLocked(next)
		e.reclaimLocked(next, b)
	}
	clear(b.mem)
	b.region, b.seq, b.written, b.pending = next, e.nextSeq, 0, b.pending[:0]
	b.low, b.wlow = e.opts.RegionBytes, e.opts.RegionBytes
	e.nextSeq++
	e.sb.putRegionHdr(b.mem, b.seq)
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
		if perr := e.disk.WriteAt(w.data[w.res:], w.off+int64(w.res)); perr == nil {
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
		e.undoLocked() // what the failed write held is not seen (E21)
		e.failed = fmt.Errorf("%w: %w", ErrReadOnly, err)
		e.log.Error("emu: write failed; namespace is read-only until reopened")
	}
}

// submitWriteLocked writes b's forward blocks mem[b.written:end) and its
// newly allocated extents mem[b.low:b.wlow) to its region (one write when
// they meet).
func (e *Namespace) submitWriteLocked(b *wbuf, end int) {
	if b.low < b.wlow {
		if end >= b.low {
			e.submitRangeLocked(b, b.written, b.wlow)
			b.written, b.wlow = max(b.written, end), b.low
			return
		}
		e.submitRangeLocked(b, b.low, b.wlow)
		b.wlow = b.low
	}
	if end > b.written {
		e.submitRangeLocked(b, b.written, end)
		b.written = end
	}
}

// submitRangeLocked writes b.mem[from:to) to its region, in pieces no
// larger than the device's largest transfer.
func (e *Namespace) submitRangeLocked(b *wbuf, from, to int) {
	if to <= from {
		return
	}
	e.st.RegionWrites++
	e.chunks(b.mem[from:to], e.regionOff(b.region)+int64(from), func(data []byte, off int64) {
		w := &ioWait{done: make(chan struct{}), want: int32(len(data)), off: off, data: data}
		b.pending = append(b.pending, w)
		if res, refused := e.refuse(true, off, len(data)); refused {
			w.res = res
			close(w.done)
			return
		}
		d, idx, fixed := e.disk, b.idx, e.fixed
		req := &uring.Request{
			Prep: func(s *uring.SQE) { d.PrepWrite(s, data, off, fixed, idx) },
			Done: func(r uring.Result) { w.res = d.Done(r.Res, len(data)); close(w.done) },
		}
		if err := e.front.Submit(req); err != nil {
			w.res = -int32(errnoOf(err))
			close(w.done)
		}
	})
}

// flushLocked pads the open region to a block boundary and submits its
// unwritten blocks.
func (e *Namespace) flushLocked() error {
	if b := e.act; b != nil {
		end := alignUp(b.fill)
		b.fill = end
		e.submitWriteLocked(b, end)
		if b.fill >= b.low {
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
		if err := e.disk.Sync(); err != nil {
			first = fmt.Errorf("emu: sync %s: %w", e.opts.Path, err)
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
	e.reclaims.Add(1) // before anything new is written into r (readers recheck, see moved)
	if e.regs[r].live == 0 {
		e.regs[r] = regionState{}
		e.st.Reclaimed++
		e.deallocate(r)
		return
	}
	if err := e.readRegion(r, b); err == nil {
		walkRegion(b.mem, seq, e.opts.RegionBytes, func(off int, rc *rec) {
			if l := rc.locIn(r, off); rc.kind != kindDelete && e.idx.delIf(&rc.key, l) {
				e.liveBytes -= int64(l.size())
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
		n += len(drop)
	}
	e.regs[r] = regionState{}
	e.st.Reclaimed++
	e.st.ReclaimedKeys += uint64(n)
	e.deallocate(r)
}

// deallocate tells the device that region r holds nothing now (NVM
// Dataset Management on an NVMe namespace; nothing on a file). A failure
// only costs the device's garbage collector: it is logged.
func (e *Namespace) deallocate(r int) {
	if err := e.disk.Deallocate(e.regionOff(r), int64(e.opts.RegionBytes)); err != nil {
		e.log.Warn("emu: deallocate a reclaimed region", zap.Int("region", r), zap.Error(err))
	}
}

// readRegion reads region r into b.mem (synchronously).
func (e *Namespace) readRegion(r int, b *wbuf) error {
	res := e.readAt(b.mem, e.regionOff(r), b.idx)
	if res < 0 {
		return syscall.Errno(-res)
	}
	if int(res) < len(b.mem) {
		clear(b.mem[res:])
	}
	return nil
}

// readAt reads mem (registered buffer idx) at off on the main ring, in
// pieces no larger than the device's largest transfer, submitted
// together. It returns the bytes read up to the first short piece, or the
// first piece's -errno.
func (e *Namespace) readAt(mem []byte, off int64, idx uint16) int32 {
	var reqs []*uring.Request
	var lens []int
	var refusedRes int32
	refused := false
	e.chunks(mem, off, func(m []byte, o int64) {
		if refused {
			return
		}
		if res, no := e.refuse(false, o, len(m)); no {
			refusedRes, refused = res, true
			return
		}
		d, fixed := e.disk, e.fixed
		reqs = append(reqs, &uring.Request{Prep: func(s *uring.SQE) { d.PrepRead(s, m, o, fixed, idx) }})
		lens = append(lens, len(m))
	})
	var total int32
	if len(reqs) > 0 {
		res, err := e.front.Do(bgCtx, reqs...)
		if err != nil {
			return -int32(errnoOf(err))
		}
		for i, r := range res {
			n := e.disk.Done(r.Res, lens[i])
			if n < 0 {
				return n
			}
			total += n
			if int(n) < lens[i] {
				return total
			}
		}
	}
	if refused {
		if refusedRes < 0 {
			return refusedRes
		}
		return total + refusedRes
	}
	return total
}

// walkRegion calls fn for each valid record of a region image. A zero
// magic is padding: the walk continues at the next block. The walk stops
// where the extents of the records seen so far begin. It returns where
// appending may resume: the offset of the first invalid record (torn tail or
// older data; torn = true), else the block end after the last valid record;
// and low, the lowest extent of a valid record (len(mem) if none): blocks
// from low up are never reused before the region is.
func walkRegion(mem []byte, seq uint64, maxValue int, fn func(off int, r *rec)) (end, low int, torn bool) {
	off, last := regionHdr, regionHdr
	low = len(mem)
	for off+recHdrBytes <= low {
		if mem[off] == 0 && mem[off+1] == 0 && mem[off+2] == 0 && mem[off+3] == 0 {
			next := alignUp(off + 1)
			if next == off {
				next += blockBytes
			}
			off = next
			continue
		}
		r, ok := parseRecord(mem, off, seq, maxValue, low)
		if !ok {
			return off, low, true
		}
		if r.kind == kindExtent {
			low = r.ext
		}
		fn(off, &r)
		off += r.size()
		last = off
	}
	return min(alignUp(last), low), low, false
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
	if err := e.disk.Sync(); err != nil {
		e.failLocked(fmt.Errorf("emu: sync %s: %w", e.opts.Path, err))
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
func (e *Namespace) makeRoomLocked(vlen int, ext, isDelete bool) int32 {
	R := e.opts.RegionBytes
	full := nvmekv.Status(0, nvmekv.SCCapacityExceeded, true)
	if !isDelete && e.liveBytes+int64(recBytes(vlen, ext)) > int64(e.nReg-2)*int64(R-regionHdr) {
		return full
	}
	for tries := 0; tries <= 2*e.nReg+2; tries++ {
		if e.act != nil && e.act.fits(vlen, ext) {
			return 0
		}
		next := (e.cur + 1) % e.nReg
		if e.regs[next].live > 0 {
			// Only after a crash at the wrong moment: evacuate into the
			// open region if it has room, else the log is stuck full.
			if e.act == nil || !e.act.fitsBytes(int(e.regs[next].liveB)) {
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
	walkRegion(img, e.regs[r].seq, e.opts.RegionBytes, func(off int, rc *rec) {
		ext := rc.kind == kindExtent
		if rc.kind == kindDelete || !a.fits(rc.vlen, ext) {
			return
		}
		l, ok := e.idx.get(&rc.key)
		if !ok || l != rc.locIn(r, off) {
			return
		}
		nl := e.putLocked(a, kindStore, rc.key[:rc.klen], rc.value(img, off), ext)
		e.setLocked(&rc.key, nl)
		e.journalLocked(&rc.key, l)
	})
	e.st.Evacuated++
	if e.regs[r].live != 0 {
		e.log.Warn("emu: live records of a region could not be moved", zap.Int("region", r), zap.Uint32("left", e.regs[r].live))
		return nvmekv.Status(0, nvmekv.SCCapacityExceeded, true)
	}
	e.regs[r].moved = true
	return 0
}

// resumeLocked reopens region cur for appending at curEnd (forward) and
// curLow (extents), so a restart does not waste the rest of it. The block
// holding curEnd is rewritten from its start: it was never part of a
// completed Flush (a Flush pads to a block end, and a scan stops inside a
// block only at a torn write). Blocks from curLow up hold extents of valid
// records and are kept; blocks between are free (never part of a completed
// Flush: a Flush writes a record's header and extent together).
func (e *Namespace) resumeLocked() {
	end, low := e.curEnd, e.curLow
	if end < regionHdr || e.regs[e.cur].seq == 0 || low > e.opts.RegionBytes || low%blockBytes != 0 ||
		alignUp(end) > low || end+recSize(0) > low {
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
	clear(b.mem[end:low])
	b.region, b.seq, b.fill, b.written = e.cur, e.regs[e.cur].seq, end, end&^(blockBytes-1)
	b.low, b.wlow = low, low
	e.act = b
}

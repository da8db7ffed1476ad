package logstore

import (
	"syscall"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/nvmekv"
)

// reclaimLocked drops every live record of region r from the index,
// reading the region into b to learn its keys.
func (lg *Log) reclaimLocked(r int, b *wbuf) {
	seq := lg.regs[r].seq
	n := 0
	lg.reclaims.Add(1) // before anything new is written into r (readers recheck, see moved)
	if lg.regs[r].live == 0 {
		lg.regs[r] = regionState{}
		lg.st.Reclaimed++
		lg.deallocate(r)
		return
	}
	if err := lg.readRegion(r, b); err == nil {
		walkRegion(b.mem, seq, lg.o.RegionBytes, func(off int, rc *rec) {
			if l := rc.locIn(r, off); rc.kind != kindDelete && lg.idx.delIf(&rc.key, l) {
				lg.liveBytes -= int64(l.Size())
				lg.reclaimQ = append(lg.reclaimQ, rc.key)
				n++
			}
		})
	}
	if lg.regs[r].live > uint32(n) {
		// Unreadable region (or records not found): sweep the index. An
		// extent's key is in it; an inline record's is not (only its
		// tag): that key is dropped unreported.
		var drop [][16]byte
		var locs []Loc
		lg.idx.ext.each(func(a, b uint64, l Loc) {
			if l.Region() == r {
				drop, locs = append(drop, joinKey(a, b)), append(locs, l)
			}
		})
		for i := range drop {
			lg.idx.delIf(&drop[i], locs[i])
			lg.liveBytes -= int64(locs[i].Size())
			lg.reclaimQ = append(lg.reclaimQ, drop[i])
		}
		lost := lg.idx.dropRegion(r)
		for _, l := range lost {
			lg.liveBytes -= int64(l.Size())
		}
		if len(lost) > 0 {
			lg.st.UnreportedKeys += uint64(len(lost))
			lg.log.Warn("logstore: reclaimed a region that could not be read back; its inline keys were dropped without OnReclaim",
				zap.Int("region", r), zap.Int("keys", len(lost)))
		}
		n += len(drop) + len(lost)
	}
	lg.regs[r] = regionState{}
	lg.st.Reclaimed++
	lg.st.ReclaimedKeys += uint64(n)
	lg.deallocate(r)
}

// deallocate tells the device that region r holds nothing now (NVM
// Dataset Management on an NVMe namespace; nothing on a file). A failure
// only costs the device's garbage collector: it is logged.
func (lg *Log) deallocate(r int) {
	if err := lg.d.Deallocate(lg.regionOff(r), int64(lg.o.RegionBytes)); err != nil {
		lg.log.Warn("logstore: deallocate a reclaimed region", zap.Int("region", r), zap.Error(err))
	}
}

// readRegion reads region r into b.mem (synchronously).
func (lg *Log) readRegion(r int, b *wbuf) error {
	res := lg.rg.ReadAt(b.mem, lg.regionOff(r), b.idx)
	if res < 0 {
		return syscall.Errno(-res)
	}
	if int(res) < len(b.mem) {
		clear(b.mem[res:])
	}
	return nil
}

// makeRoomLocked (Strict mode) makes the open region able to take size
// more bytes. Strict mode keeps the region after the open one (the oldest,
// next to be reused) free of live records: right after rotating into a
// fresh region it copies the live records of the new oldest region into it
// (they fit: they came from one region), so the next rotation never finds
// live data in its way. Deletes skip the fullness check (they free space).
func (lg *Log) makeRoomLocked(vlen int, ext, isDelete bool) int32 {
	R := lg.o.RegionBytes
	full := nvmekv.Status(0, nvmekv.SCCapacityExceeded, true)
	if !isDelete && lg.liveBytes+int64(recBytes(vlen, ext)) > int64(lg.nReg-2)*int64(R-regionHdr) {
		return full
	}
	for tries := 0; tries <= 2*lg.nReg+2; tries++ {
		if lg.act != nil && lg.act.fits(vlen, ext) {
			return 0
		}
		next := (lg.cur + 1) % lg.nReg
		if lg.regs[next].live > 0 {
			// Only after a crash at the wrong moment: evacuate into the
			// open region if it has room, else the log is stuck full.
			if lg.act == nil || !lg.act.fitsBytes(int(lg.regs[next].liveB)) {
				return full
			}
			if st := lg.evacuateLocked(next); st != 0 {
				return st
			}
		}
		if st := lg.rotateLocked(); st != 0 {
			return st
		}
		if nn := (lg.cur + 1) % lg.nReg; lg.regs[nn].live > 0 {
			if st := lg.evacuateLocked(nn); st != 0 {
				return st
			}
		}
	}
	return full
}

// evacuateLocked copies region r's live records into the open region
// (their index entries move with them) and marks r moved.
func (lg *Log) evacuateLocked(r int) int32 {
	img := []byte(nil)
	if src := lg.bufOfLocked(r); src != nil {
		img = src.mem
	} else {
		b, err := lg.freeBufLocked()
		if err != nil {
			return -int32(errnoOf(err))
		}
		if err := lg.readRegion(r, b); err != nil {
			return -int32(errnoOf(err))
		}
		img = b.mem
	}
	a := lg.act
	walkRegion(img, lg.regs[r].seq, lg.o.RegionBytes, func(off int, rc *rec) {
		ext := rc.kind == kindExtent
		if rc.kind == kindDelete || !a.fits(rc.vlen, ext) {
			return
		}
		l := rc.locIn(r, off)
		if !lg.idx.has(&rc.key, l) {
			return
		}
		nl := lg.putLocked(a, kindStore, rc.key[:rc.klen], rc.value(img, off), ext)
		lg.setLocked(&rc.key, l, nl)
		lg.journalLocked(&rc.key, l, nl)
		lg.moves = append(lg.moves, locMove{l, nl})
	})
	lg.st.Evacuated++
	if lg.regs[r].live != 0 {
		lg.log.Warn("logstore: live records of a region could not be moved", zap.Int("region", r), zap.Uint32("left", lg.regs[r].live))
		return nvmekv.Status(0, nvmekv.SCCapacityExceeded, true)
	}
	lg.regs[r].moved = true
	return 0
}

// resumeLocked reopens region cur for appending at curEnd (forward) and
// curLow (extents), so a restart does not waste the rest of it. The block
// holding curEnd is rewritten from its start: it was never part of a
// completed Flush (a Flush pads to a block end, and a scan stops inside a
// block only at a torn write). Blocks from curLow up hold extents of valid
// records and are kept; blocks between are free (never part of a completed
// Flush: a Flush writes a record's header and extent together).
func (lg *Log) resumeLocked() {
	end, low := lg.curEnd, lg.curLow
	if end < regionHdr || lg.regs[lg.cur].seq == 0 || low > lg.o.RegionBytes || low%blockBytes != 0 ||
		alignUp(end) > low || end+recSize(0) > low {
		return
	}
	b, err := lg.freeBufLocked()
	if err != nil {
		return
	}
	if err := lg.readRegion(lg.cur, b); err != nil {
		lg.log.Warn("logstore: cannot read the last region back, starting a new one", zap.Error(err))
		return
	}
	clear(b.mem[end:low])
	b.region, b.seq, b.fill, b.written = lg.cur, lg.regs[lg.cur].seq, end, end&^(blockBytes-1)
	b.low, b.wlow = low, low
	lg.act = b
}

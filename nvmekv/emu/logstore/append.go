package logstore

import (
	"errors"
	"syscall"

	"github.com/tiercache/tiercache/nvmekv"
)

// Appending: regions are taken round-robin, so the next region is always
// the oldest (FIFO). All methods named *Locked run with lg.mu held
// (locked, unless their comment or the Log's says read-locked is enough).

func alignUp(n int) int { return (n + blockBytes - 1) &^ (blockBytes - 1) }

func (lg *Log) regionOff(r int) int64 { return lg.dataOff + int64(r)*int64(lg.o.RegionBytes) }

// appendLocked appends a record to the open region, rotating when it is
// full. It returns the record's Loc, or an NVMe status / errno to report.
func (lg *Log) appendLocked(kind uint8, key []byte, value []byte) (Loc, int32) {
	if lg.failed != nil {
		return 0, -int32(errnoOf(lg.failed))
	}
	ext := kind == kindStore && useExtent(len(value))
	if lg.o.Mode == Strict {
		if st := lg.makeRoomLocked(len(value), ext, kind == kindDelete); st != 0 {
			return 0, st
		}
	} else if lg.act == nil || !lg.act.fits(len(value), ext) {
		if st := lg.rotateLocked(); st != 0 {
			return 0, st
		}
	}
	return lg.putLocked(lg.act, kind, key, value, ext), 0
}

// putLocked appends a record to b, which has room (fits).
func (lg *Log) putLocked(b *wbuf, kind uint8, key []byte, value []byte, ext bool) Loc {
	off := b.fill
	lg.appended++
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
	if errors.As(err, &en) {
		return en
	}
	return syscall.EIO
}

// rotateLocked seals the open region (its write is submitted) and opens
// the next one, reclaiming it first if it holds data.
func (lg *Log) rotateLocked() int32 {
	next := (lg.cur + 1) % lg.nReg
	if rs := lg.regs[next]; rs.seq != 0 && lg.o.Mode == Strict && rs.live > 0 {
		return nvmekv.Status(0, nvmekv.SCCapacityExceeded, true)
	}
	if lg.act != nil {
		lg.submitWriteLocked(lg.act, alignUp(lg.act.fill))
		lg.act = nil
	}
	b, err := lg.freeBufLocked()
	if err != nil {
		return -int32(errnoOf(err))
	}
	if lg.regs[next].moved {
		// Its live records were copied into later regions: those copies
		// must be durable before the originals are overwritten.
		if err := lg.syncLocked(); err != nil {
			return -int32(errnoOf(err))
		}
		lg.durable = max(lg.durable, lg.appended) // every record appended so far was submitted and synced
		lg.durableLocked(lg.appended)
	}
	if lg.regs[next].seq != 0 {
		lg.undoForgetRegionLocked(next)
		lg.reclaimLocked(next, b)
	}
	clear(b.mem)
	b.region, b.seq, b.written, b.pending = next, lg.nextSeq, 0, b.pending[:0]
	b.low, b.wlow = lg.o.RegionBytes, lg.o.RegionBytes
	lg.nextSeq++
	lg.sb.putRegionHdr(b.mem, b.seq)
	b.fill = regionHdr
	lg.regs[next] = regionState{seq: b.seq}
	lg.cur = next
	lg.act = b
	return 0
}

// freeBufLocked returns a write buffer that is not the open one, waiting
// (with the lock held: writes complete without it) for its writes.
func (lg *Log) freeBufLocked() (*wbuf, error) {
	var best *wbuf
	for _, b := range lg.bufs {
		if b == lg.act {
			continue
		}
		if best == nil || b.seq < best.seq {
			best = b
		}
	}
	for _, w := range best.pending {
		<-w.done
		if err := lg.checkWrite(w); err != nil {
			lg.failLocked(err)
			return nil, lg.failed
		}
	}
	best.pending = best.pending[:0]
	best.region = -1
	return best, nil
}

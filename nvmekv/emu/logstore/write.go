package logstore

import (
	"errors"
	"fmt"
	"syscall"
)

// checkWrite returns the outcome of a completed write (computed once).
func (lg *Log) checkWrite(w *ioWait) error {
	w.once.Do(func() { w.err = lg.writeOutcome(w) })
	return w.err
}

func (lg *Log) writeOutcome(w *ioWait) error {
	if w.res == w.want {
		return nil
	}
	var err error = syscall.EIO
	if w.res < 0 {
		err = syscall.Errno(-w.res)
	} else if w.data != nil {
		// Short write: finish it synchronously to learn why (ENOSPC on a full filesystem).
		if perr := lg.d.WriteAt(w.data[w.res:], w.off+int64(w.res)); perr == nil {
			w.res = w.want
			return nil
		} else if !errors.Is(perr, syscall.EINVAL) {
			err = perr
		}
	}
	return fmt.Errorf("logstore: write of %d bytes at offset %d of %s failed: %w", w.want, w.off, lg.o.Path, err)
}

func (lg *Log) failLocked(err error) {
	if lg.failed == nil {
		lg.undoLocked() // what the failed write held is not seen (E21)
		lg.failed = fmt.Errorf("%w: %w", ErrReadOnly, err)
		lg.log.Error("logstore: write failed; namespace is read-only until reopened")
	}
}

// submitWriteLocked writes b's forward blocks mem[b.written:end) and its
// newly allocated extents mem[b.low:b.wlow) to its region (one write when
// they meet).
func (lg *Log) submitWriteLocked(b *wbuf, end int) {
	if b.low < b.wlow {
		if end >= b.low {
			lg.submitRangeLocked(b, b.written, b.wlow)
			b.written, b.wlow = max(b.written, end), b.low
			return
		}
		lg.submitRangeLocked(b, b.low, b.wlow)
		b.wlow = b.low
	}
	if end > b.written {
		lg.submitRangeLocked(b, b.written, end)
		b.written = end
	}
}

// submitRangeLocked writes b.mem[from:to) to its region, in pieces no
// larger than the device's largest transfer (rings E17).
func (lg *Log) submitRangeLocked(b *wbuf, from, to int) {
	if to <= from {
		return
	}
	lg.st.RegionWrites++
	lg.rg.Chunks(b.mem[from:to], lg.regionOff(b.region)+int64(from), func(data []byte, off int64) {
		w := &ioWait{done: make(chan struct{}), want: int32(len(data)), off: off, data: data}
		b.pending = append(b.pending, w)
		lg.rg.Write(data, off, b.idx, func(res int32) { w.res = res; close(w.done) })
	})
}

// flushLocked pads the open region to a block boundary and submits its
// unwritten blocks.
func (lg *Log) flushLocked() error {
	if b := lg.act; b != nil {
		end := alignUp(b.fill)
		b.fill = end
		lg.submitWriteLocked(b, end)
		if b.fill >= b.low {
			lg.act = nil // full: the next append rotates
		}
	}
	return nil
}

// waitAll waits for every write submitted so far, then fdatasyncs.
func (lg *Log) waitAll() error {
	lg.mu.Lock()
	var ws []*ioWait
	for _, b := range lg.bufs {
		ws = append(ws, b.pending...)
	}
	lg.mu.Unlock()
	var first error
	for _, w := range ws {
		<-w.done
		if err := lg.checkWrite(w); err != nil && first == nil {
			first = err
		}
	}
	if first == nil {
		if err := lg.d.Sync(); err != nil {
			first = fmt.Errorf("logstore: sync %s: %w", lg.o.Path, err)
		}
	}
	lg.mu.Lock()
	defer lg.mu.Unlock()
	lg.st.Syncs++
	if first != nil {
		lg.failLocked(first)
		return lg.failed
	}
	for _, b := range lg.bufs {
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

// syncLocked waits for every submitted write and fdatasyncs, with the lock
// held (Strict mode, before reusing a region whose records were moved).
func (lg *Log) syncLocked() error {
	for _, b := range lg.bufs {
		for _, w := range b.pending {
			<-w.done
			if err := lg.checkWrite(w); err != nil {
				lg.failLocked(err)
				return lg.failed
			}
		}
		b.pending = b.pending[:0]
	}
	if err := lg.d.Sync(); err != nil {
		lg.failLocked(fmt.Errorf("logstore: sync %s: %w", lg.o.Path, err))
		return lg.failed
	}
	lg.st.Syncs++
	return nil
}

package readpath

import (
	"context"
	"fmt"
	"syscall"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu/dev"
	"github.com/tiercache/tiercache/nvmekv/emu/logstore"
)

// Read reads every pending Retrieve and completes them; it returns the
// ops whose record moved meanwhile (to run again, one depth deeper). Reads
// go in waves of at most Wave (≤ Slots and ≤ rings.MaxWave); each wave
// takes its slots all at once and returns them before the next wave, so
// any batch size and any number of concurrent batches complete (E9).
func (rd *Reader) Read(ctx context.Context, depth int, reads []Pending) []*nvmekv.Op {
	rd.mu.RLock()
	defer rd.mu.RUnlock()
	if rd.slab == nil {
		for _, pr := range reads {
			pr.Op.Err = logstore.ErrClosed
		}
		return nil
	}
	var retry []*nvmekv.Op
	for len(reads) > 0 {
		n := min(len(reads), rd.wave)
		if err := ctx.Err(); err != nil {
			for _, pr := range reads {
				pr.Op.Err = err
			}
			break
		}
		retry = rd.readWave(depth, reads[:n], retry)
		reads = reads[n:]
	}
	return retry
}

// readWave reads up to Wave pending Retrieves in one submission, each as
// one read of its record (or its extent) rounded out to the read
// alignment, on the lane the rings give (rings E15, E16, E19). The reads
// complete through Done into a pooled wave (no per-read allocation, E12);
// the caller waits for the whole wave.
func (rd *Reader) readWave(depth int, reads []Pending, retry []*nvmekv.Op) []*nvmekv.Op {
	w := rd.waves.Get().(*wave)
	w.grow(len(reads))
	need := 0
	for i, pr := range reads {
		var off int64
		var size int
		l := pr.Loc
		if l.Ext() {
			// An extent is block aligned and read alone: only as much of
			// the value as the buffer takes.
			off, size = rd.lg.RegionOff(l.Region())+int64(l.ExtOff()), min(l.VLen(), len(pr.Op.Buf))
		} else {
			off, size = rd.lg.RegionOff(l.Region())+int64(l.Off()), l.Size()
		}
		a := int64(rd.align)
		start := off &^ (a - 1)
		n := int((off - start + int64(size) + a - 1) &^ (a - 1))
		r := w.rds[i]
		r.mem, r.slot, r.heap, r.start, r.n, r.skip, r.res, r.err = nil, -1, nil, start, n, int(off-start), 0, nil
		// An extent read that fills the caller's buffer exactly, with the
		// buffer aligned for O_DIRECT, goes straight into it: no slot, no
		// copy (a 4 KiB value into a 4 KiB buffer, E13). The buffer is on
		// the Go heap (it escapes into the pooled call) and the caller waits
		// for the read, so it stays put and alive while the kernel fills it.
		r.direct = l.Ext() && start == off && n == size && aligned(pr.Op.Buf, rd.align)
		if n <= SlotBytes && !r.direct {
			need++
		}
	}
	lane := rd.rg.Lane(len(reads))
	defer lane.Release()
	fixed := lane.Fixed()
	w.slots = rd.slots.get(w.slots[:0], need)
	got := w.slots
	w.reqs = w.reqs[:0]
	nb := 0
	maxXfer := rd.d.MaxTransfer()
	for i := range reads {
		r := w.rds[i]
		if r.direct {
			r.mem = reads[i].Op.Buf[:r.n]
			rd.directReads.Add(1)
		} else if r.n <= SlotBytes {
			r.slot, got = got[len(got)-1], got[:len(got)-1]
			r.mem = rd.slab[r.slot*SlotBytes : r.slot*SlotBytes+r.n]
		} else if c := heapClass(r.n); c >= 0 && rd.heapBuf(r, c) {
			rd.heapReads.Add(1)
		} else {
			m, err := dev.MapBuffer(r.n)
			if err != nil {
				r.err = err
				continue
			}
			r.mem = m
		}
		if maxXfer > 0 && r.n > maxXfer {
			// Larger than one command may move: read it synchronously,
			// in pieces (dev.Device.ReadAt).
			r.res = int32(r.n)
			if err := rd.d.ReadAt(r.mem, r.start); err != nil {
				r.err = err
			}
			continue
		}
		if res, refused := rd.d.Refuse(false, r.start, r.n); refused {
			r.res = res
			continue
		}
		r.disk, r.fixed, r.bufIdx = rd.d, fixed && r.slot >= 0, rd.o.Slab
		w.reqs = append(w.reqs, &r.req)
		nb += r.n
	}
	if len(w.reqs) > 0 {
		w.left.Store(int32(len(w.reqs)))
		// Every Done runs once; one that could not be submitted says so
		// with -ECANCELED.
		if err := lane.Run(w.reqs); err != nil {
			for i := range reads {
				if r := w.rds[i]; r.err == nil && r.res == -int32(syscall.ECANCELED) {
					r.err = err
				}
			}
		}
		<-w.done
		rd.diskReads.Add(uint64(len(w.reqs)))
		if lane.Quick() {
			rd.quickReads.Add(uint64(len(w.reqs)))
		}
		if lane.Batch() {
			rd.batchReads.Add(uint64(len(w.reqs)))
		}
		rd.readBytes.Add(uint64(nb))
	}
	free := w.slots[:0]
	for i := range reads {
		pr := &reads[i]
		r := w.rds[i]
		l := pr.Loc
		switch {
		case r.err != nil:
			pr.Op.Err = fmt.Errorf("emu: Retrieve: read %d bytes at offset %d of %s: %w", r.n, r.start, rd.o.Path, r.err)
		case r.res < 0:
			pr.Op.Complete(r.res, 0)
			pr.Op.Err = fmt.Errorf("emu: read %s at offset %d: %w", rd.o.Path, r.start, pr.Op.Err)
		case l.Ext():
			// No header to check: the region must not have been reclaimed
			// (and so rewritten) between the lookup and the read's end (E2).
			st, dw0 := int32(0), uint32(l.VLen())
			if rd.lg.Reclaims() != pr.Epoch && rd.lg.RegionChanged(l.Region(), pr.Seq) {
				if depth < 3 {
					rd.readRetries.Add(1)
					retry = append(retry, pr.Op)
					break
				}
				st, dw0 = unrecovered, 0
			} else if int(r.res) < min(l.VLen(), len(pr.Op.Buf)) {
				st, dw0 = unrecovered, 0
			} else if !r.direct {
				copy(pr.Op.Buf, r.mem[:min(l.VLen(), len(pr.Op.Buf))])
			}
			pr.Op.Complete(st, uint64(dw0))
		case int(r.res) < r.skip+l.Size():
			pr.Op.Complete(unrecovered, 0)
		default:
			st, dw0 := logstore.CopyValue(r.mem[:r.skip+l.Size()], r.skip, pr.Seq, &pr.Key, pr.Klen, pr.Op.Buf, rd.lg.RegionBytes())
			if st != 0 && depth < 3 && rd.lg.Moved(&pr.Key, pr.Klen, l, pr.Seq) {
				rd.readRetries.Add(1)
				retry = append(retry, pr.Op)
				break
			}
			pr.Op.Complete(st, uint64(dw0))
		}
		switch {
		case r.slot >= 0:
			free = append(free, r.slot)
		case r.heap != nil:
			rd.heap.put(r.class, r.heap)
		case r.mem != nil && !r.direct:
			dev.UnmapBuffer(r.mem)
		}
		r.mem, r.direct, r.heap = nil, false, nil
	}
	rd.slots.put(free)
	w.slots = free[:0]
	clear(w.reqs)
	rd.waves.Put(w)
	return retry
}

// unrecovered is the Unrecovered Error status (SC 0x88, DNR).
var unrecovered = nvmekv.Status(0, nvmekv.SCUnrecovered, true)

// heapBuf gives r a pooled heap buffer of size class c, if one aligned
// for the device can be had.
func (rd *Reader) heapBuf(r *waveRead, c int) bool {
	b := rd.heap.get(c, rd.align)
	if b == nil {
		return false
	}
	r.heap, r.class, r.mem = b, c, (*b)[:r.n]
	return true
}

package logstore

import (
	"cmp"
	"slices"
	"sync"
	"syscall"

	"go.uber.org/zap"
)

// scan rebuilds the index by reading every region in seq order and
// replaying its valid records; a region's walk stops at its first invalid
// record (torn tail or older data).
//
// The scan replays into a keyed index (full keys, 24 bytes a slot), where
// a later record of a key finds the earlier one without reading it back,
// then builds the log's key index from it (keyIndexFrom): for a moment
// Open holds both. The records' changes are applied in batches sorted by
// their keys' home slots (replay.go, E36), so that the table is walked
// forward instead of probed at random.
func (lg *Log) scan() error {
	lg.fresh()
	lg.st.Recovered = "scan"
	tmp := newIndex(lg.expected(), lg.bindIdx)
	// 1. Region headers, in batches of one block each, read into the
	// first write buffer.
	type hdr struct {
		r   int
		seq uint64
	}
	var found []hdr
	hb := lg.bufs[0]
	batch := min(64, len(hb.mem)/blockBytes)
	res := make([]int32, batch)
	var wg sync.WaitGroup
	for r0 := 0; r0 < lg.nReg; r0 += batch {
		n := min(batch, lg.nReg-r0)
		wg.Add(n)
		for j := 0; j < n; j++ {
			lg.rg.Read(hb.mem[j*blockBytes:(j+1)*blockBytes], lg.regionOff(r0+j), hb.idx, func(got int32) { res[j] = got; wg.Done() })
		}
		wg.Wait()
		for j := 0; j < n; j++ {
			got := res[j]
			if got < 0 {
				lg.log.Warn("logstore: unreadable region header, region skipped", zap.String("path", lg.o.Path), zap.Int("region", r0+j), zap.Error(syscall.Errno(-got)))
				continue
			}
			if int(got) < regionHdr {
				continue
			}
			if seq := lg.sb.regionSeq(hb.mem[j*blockBytes:]); seq != 0 {
				found = append(found, hdr{r0 + j, seq})
			}
		}
	}
	R := int64(lg.o.RegionBytes)
	slices.SortFunc(found, func(a, b hdr) int { return cmpU64(a.seq, b.seq) })
	// Regions below the clear seq were emptied by a Clear (E34): they are
	// not read, and hold no live record; appending goes on after the
	// newest of them, in a region with a seq of at least the clear seq.
	cleared := 0
	for cleared < len(found) && found[cleared].seq < lg.sb.clearSeq {
		h := found[cleared]
		lg.regs[h.r] = regionState{seq: h.seq}
		lg.cur, lg.nextSeq = h.r, max(h.seq+1, lg.sb.clearSeq)
		cleared++
	}
	found = found[cleared:]
	lg.prog.report("scan", 0, int64(len(found))*R, 0)
	if len(found) == 0 {
		return nil
	}
	rp := newReplay(cmp.Or(lg.o.ReplayBatch, replayBatch))
	// 2. Replay regions in seq order, reading up to len(lg.bufs) ahead.
	type inflight struct {
		done chan struct{}
		res  int32
	}
	fl := make([]*inflight, len(found))
	submit := func(i int) {
		b := lg.bufs[i%len(lg.bufs)]
		f := &inflight{done: make(chan struct{})}
		fl[i] = f
		// A region may take several reads (the device's largest transfer):
		// f.res is the bytes read up to the first short piece, or -errno.
		lg.rg.Read(b.mem, lg.regionOff(found[i].r), b.idx, func(n int32) { f.res = n; close(f.done) })
	}
	for i := 0; i < min(len(found), len(lg.bufs)); i++ {
		submit(i)
	}
	for i, h := range found {
		<-fl[i].done
		b := lg.bufs[i%len(lg.bufs)]
		if fl[i].res < 0 {
			lg.log.Warn("logstore: unreadable region, its records are lost", zap.String("path", lg.o.Path), zap.Int("region", h.r), zap.Error(syscall.Errno(-fl[i].res)))
			clear(b.mem)
		} else if int(fl[i].res) < len(b.mem) {
			clear(b.mem[fl[i].res:])
		}
		lg.regs[h.r] = regionState{seq: h.seq}
		end, low, torn := walkRegion(b.mem, h.seq, lg.o.RegionBytes, func(off int, rc *rec) {
			var l Loc // a delete
			if rc.kind != kindDelete {
				l = rc.locIn(h.r, off)
			}
			if rp.add(&rc.key, l) {
				rp.apply(lg, tmp)
			}
		})
		if torn {
			lg.st.TornTails++
		}
		if i == len(found)-1 {
			lg.curEnd, lg.curLow = end, low
		}
		if i == 0 && len(found) > 2 {
			// Size the index once from the first region's record count.
			tmp.reserve(int(float64(rp.pending()) * (float64(len(found)) - 0.5) * 1.01)) // last region assumed half full
		}
		if i+len(lg.bufs) < len(found) {
			submit(i + len(lg.bufs))
		}
		lg.prog.report("scan", int64(i+1)*R, int64(len(found))*R, tmp.len()+rp.pending())
	}
	rp.apply(lg, tmp)
	rp.free()
	for _, b := range lg.bufs {
		clear(b.mem)
	}
	lg.idx = keyIndexFrom(tmp, lg.bindIdx)
	last := found[len(found)-1]
	lg.cur, lg.nextSeq = last.r, last.seq+1
	return nil
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

package logstore

import (
	"slices"
	"sync"
	"syscall"

	"go.uber.org/zap"
)

// scan rebuilds the index by reading every region in seq order and
// replaying its valid records; a region's walk stops at its first invalid
// record (torn tail or older data).
//
// Each record's index change goes to a bucket by its key's tag; once every
// region is read, the buckets are settled (the last change of each key
// wins) and the key index is loaded from them in tag order (tagreplay.go,
// tagbuild.go, E37). With Options.ReplayBatch the scan replays into a
// keyed index instead (full keys, 24 bytes a slot), in batches sorted by their keys'
// home slots (replay.go, E36), and builds the key index from it
// (keyIndexFrom): the route before E37, BenchmarkOpen's peer.
func (lg *Log) scan() error {
	lg.fresh()
	lg.st.Recovered = "scan"
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
	// The changes go to tag buckets (E37), or, with Options.ReplayBatch,
	// to the keyed table in sorted batches (E36).
	var rp *replay
	var tmp *index
	var tr *tagReplay
	if lg.o.ReplayBatch > 0 {
		rp, tmp = newReplay(lg.o.ReplayBatch), newIndex(lg.expected(), lg.bindIdx)
	} else {
		tr = &tagReplay{}
	}
	pending := func() int {
		if tr != nil {
			return tr.n
		}
		return tmp.len() + rp.pending()
	}
	// 2. Replay regions in seq order, reading up to len(lg.bufs) ahead.
	// Each region is walked (records parsed, CRCs checked) on a goroutine
	// of its own once read, which then reads the region len(lg.bufs) on
	// into the buffer it is done with, so the reads go on while the
	// replay, in seq order here, takes the changes the walks found: up to
	// 2·len(lg.bufs) regions' changes, a walk waiting for the list it
	// takes over to be replayed.
	type inflight struct {
		done     chan struct{} // read and walked
		replayed chan struct{} // its changes taken: ch is free
		res      int32
		ch       *regionChanges
		end, low int
		torn     bool
		next     *inflight // the region len(lg.bufs) on, once done
		starter  *inflight // the region len(lg.bufs) before, until done
		wait     *inflight // the region that used ch before, until walked
	}
	nb := len(lg.bufs)
	lists := make([]regionChanges, 2*nb) // the change lists, reused
	var submit func(i int, starter, wait *inflight) *inflight
	submit = func(i int, starter, wait *inflight) *inflight {
		b, h := lg.bufs[i%nb], found[i]
		f := &inflight{done: make(chan struct{}), replayed: make(chan struct{}), ch: &lists[i%len(lists)], starter: starter, wait: wait}
		read := make(chan struct{})
		// A region may take several reads (the device's largest transfer):
		// f.res is the bytes read up to the first short piece, or -errno.
		lg.rg.Read(b.mem, lg.regionOff(h.r), b.idx, func(n int32) { f.res = n; close(read) })
		go func() {
			<-read
			if f.res < 0 {
				clear(b.mem)
			} else if int(f.res) < len(b.mem) {
				clear(b.mem[f.res:])
			}
			if f.wait != nil {
				<-f.wait.replayed
				f.wait = nil
			}
			f.ch.reset()
			f.end, f.low, f.torn = walkRegion(b.mem, h.seq, lg.o.RegionBytes, func(off int, rc *rec) {
				var l Loc // a delete
				if rc.kind != kindDelete {
					l = rc.locIn(h.r, off)
				}
				f.ch.add(&rc.key, l, tr != nil)
			})
			if tr != nil {
				f.ch.byBucket() // here, beside the replay
			}
			if i+nb < len(found) {
				// Region i+nb takes the list of region i-nb (2·nb lists).
				f.next = submit(i+nb, f, f.starter)
			}
			f.starter = nil
			close(f.done)
		}()
		return f
	}
	ring := make([]*inflight, nb) // the next region of each buffer
	for i := 0; i < min(len(found), nb); i++ {
		ring[i] = submit(i, nil, nil)
	}
	for i, h := range found {
		f := ring[i%nb]
		<-f.done
		ring[i%nb] = f.next
		if f.res < 0 {
			lg.log.Warn("logstore: unreadable region, its records are lost", zap.String("path", lg.o.Path), zap.Int("region", h.r), zap.Error(syscall.Errno(-f.res)))
		}
		lg.regs[h.r] = regionState{seq: h.seq}
		if tr != nil {
			tr.addRegion(f.ch)
		} else {
			for j := range f.ch.ops {
				if op := &f.ch.ops[j]; rp.add(op.k0, op.k1, op.l) {
					rp.apply(lg, tmp)
				}
			}
		}
		close(f.replayed)
		end, low, torn := f.end, f.low, f.torn
		if torn {
			lg.st.TornTails++
		}
		if i == len(found)-1 {
			lg.curEnd, lg.curLow = end, low
		}
		if i == 0 && len(found) > 2 && rp != nil {
			// Size the index once from the first region's record count.
			tmp.reserve(int(float64(rp.pending()) * (float64(len(found)) - 0.5) * 1.01)) // last region assumed half full
		}
		lg.prog.report("scan", int64(i+1)*R, int64(len(found))*R, pending())
	}
	for _, b := range lg.bufs {
		clear(b.mem)
	}
	if tr != nil {
		lg.idx = tr.build(lg, lg.bindIdx)
	} else {
		rp.apply(lg, tmp)
		rp.free()
		lg.idx = keyIndexFrom(tmp, &lg.lay, lg.bindIdx)
	}
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

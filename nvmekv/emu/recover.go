package emu

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"syscall"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/uring"
)

// Checkpoint file (written at clean Close, all little-endian):
//
//	header 80 B: u64 magic "CEMU_CK3", u64 store id, u64 clean generation,
//	  u64 regions, u64 region bytes, u64 cur (last region taken), u64 next seq,
//	  u64 entries, u64 end of region cur (appending resumes there; 0 = none),
//	  u64 lowest extent of region cur (extents resume below it)
//	regions × 16 B: u64 seq, u32 live records, u32 live bytes
//	entries × 24 B: u64 key[0:8], u64 key[8:16], u64 loc
//	u32 CRC32C of everything before it
//
// It is trusted only if the superblock says clean with the same store id
// and generation; Open marks the superblock dirty before writing anything.
const (
	ckMagic    = 0x334b435f554d4543 // bytes "CEMU_CK3"
	ckHdrBytes = 80
)

// recover rebuilds the index: from the checkpoint after a clean close,
// otherwise by scanning every region.
func (e *Namespace) recover() error {
	if e.sb.clean && e.ckpt != "" {
		err := e.loadCheckpoint()
		if err == nil {
			e.st.Recovered = "checkpoint"
			return nil
		}
		e.log.Warn("emu: checkpoint unusable, scanning regions", zap.String("path", e.ckpt), zap.Error(err))
	}
	return e.scan()
}

func (e *Namespace) loadCheckpoint() error {
	f, err := os.Open(e.ckpt)
	if err != nil {
		return err
	}
	defer f.Close()
	crc := crc32.New(castagnoli)
	br := bufio.NewReaderSize(f, 1<<20)
	r := readerFunc(func(b []byte) (int, error) { // hashes exactly what is consumed
		n, err := io.ReadFull(br, b)
		crc.Write(b[:n])
		return n, err
	})
	var h [ckHdrBytes]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return err
	}
	le := binary.LittleEndian
	if le.Uint64(h[0:]) != ckMagic || le.Uint64(h[8:]) != e.sb.storeID || le.Uint64(h[16:]) != e.sb.cleanGen ||
		le.Uint64(h[24:]) != uint64(e.nReg) || le.Uint64(h[32:]) != e.sb.regionBytes {
		return fmt.Errorf("%w: checkpoint %s does not belong to this clean close of %s", ErrFormat, e.ckpt, e.opts.Path)
	}
	cur, nextSeq, count, curEnd, curLow := le.Uint64(h[40:]), le.Uint64(h[48:]), le.Uint64(h[56:]), le.Uint64(h[64:]), le.Uint64(h[72:])
	if cur >= uint64(e.nReg) || count > uint64(e.nReg)*uint64(e.opts.RegionBytes)/recHdrBytes {
		return fmt.Errorf("%w: checkpoint %s header is inconsistent", ErrFormat, e.ckpt)
	}
	regs := make([]regionState, e.nReg)
	var rb [16]byte
	for i := range regs {
		if _, err := io.ReadFull(r, rb[:]); err != nil {
			return err
		}
		regs[i] = regionState{seq: le.Uint64(rb[0:]), live: le.Uint32(rb[8:]), liveB: le.Uint32(rb[12:])}
	}
	idx := newIndex(max(int(count), e.expected()))
	var live int64
	buf := make([]byte, 24*4096)
	for left := int(count); left > 0; {
		n := min(left, 4096)
		if _, err := io.ReadFull(r, buf[:24*n]); err != nil {
			return err
		}
		for j := 0; j < n; j++ {
			b := buf[24*j:]
			l := loc(le.Uint64(b[16:]))
			if l == 0 || l.region() < 0 || l.region() >= e.nReg || (l.ext() && l.extOff()+extBytes(l.vlen()) > e.opts.RegionBytes) {
				return fmt.Errorf("%w: checkpoint %s has an entry outside the log", ErrFormat, e.ckpt)
			}
			idx.insert(le.Uint64(b[0:]), le.Uint64(b[8:]), l)
			idx.count++
			live += int64(l.size())
		}
		left -= n
	}
	want := crc.Sum32()
	var tail [4]byte
	if _, err := io.ReadFull(br, tail[:]); err != nil {
		return err
	}
	if le.Uint32(tail[:]) != want {
		return fmt.Errorf("%w: checkpoint %s CRC mismatch", ErrFormat, e.ckpt)
	}
	e.idx, e.regs, e.cur, e.nextSeq, e.liveBytes = idx, regs, int(cur), nextSeq, live
	e.curEnd = int(min(curEnd, uint64(e.opts.RegionBytes)))
	e.curLow = int(min(curLow, uint64(e.opts.RegionBytes)))
	return nil
}

// saveClean writes the checkpoint (if configured) and marks the
// superblock clean. Called by Close after every write is durable.
func (e *Namespace) saveClean() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	gen := e.sb.cleanGen + 1
	if e.ckpt != "" {
		if err := e.writeCheckpoint(gen); err != nil {
			return err
		}
	}
	sbuf, err := mapBuf(blockBytes)
	if err != nil {
		return err
	}
	defer unmapBuf(sbuf)
	e.sb.clean, e.sb.cleanGen = e.ckpt != "", gen
	return e.writeSuperblock(sbuf)
}

func (e *Namespace) writeCheckpoint(gen uint64) error {
	tmp := e.ckpt + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("%w: %w", errCheckpoint, err)
	}
	crc := crc32.New(castagnoli)
	w := bufio.NewWriterSize(io.MultiWriter(f, crc), 1<<20)
	le := binary.LittleEndian
	var h [ckHdrBytes]byte
	curEnd, curLow := uint64(0), uint64(e.opts.RegionBytes)
	if e.act != nil && e.act.region == e.cur {
		curEnd, curLow = uint64(e.act.fill), uint64(e.act.low)
	}
	for i, v := range []uint64{ckMagic, e.sb.storeID, gen, uint64(e.nReg), e.sb.regionBytes, uint64(e.cur), e.nextSeq, uint64(e.idx.count), curEnd, curLow} {
		le.PutUint64(h[8*i:], v)
	}
	w.Write(h[:])
	var rb [16]byte
	for _, r := range e.regs {
		le.PutUint64(rb[0:], r.seq)
		le.PutUint32(rb[8:], r.live)
		le.PutUint32(rb[12:], r.liveB)
		w.Write(rb[:])
	}
	var eb [24]byte
	e.idx.each(func(a, b uint64, l loc) {
		le.PutUint64(eb[0:], a)
		le.PutUint64(eb[8:], b)
		le.PutUint64(eb[16:], uint64(l))
		w.Write(eb[:])
	})
	err = w.Flush()
	if err == nil {
		le.PutUint32(rb[:4], crc.Sum32())
		_, err = f.Write(rb[:4])
	}
	if err == nil {
		err = f.Sync()
	}
	err = errors.Join(err, f.Close())
	if err == nil {
		err = os.Rename(tmp, e.ckpt)
	}
	if err == nil {
		if d, derr := os.Open(filepath.Dir(e.ckpt)); derr == nil {
			err = d.Sync()
			d.Close()
		}
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%w: %s: %w", errCheckpoint, e.ckpt, err)
	}
	return nil
}

// scan rebuilds the index by reading every region in seq order and
// replaying its valid records; a region's walk stops at its first invalid
// record (torn tail or older data).
func (e *Namespace) scan() error {
	e.fresh()
	e.st.Recovered = "scan"
	// 1. Region headers, in batches through the read slab.
	type hdr struct {
		r   int
		seq uint64
	}
	var found []hdr
	batch := min(e.opts.ReadSlots, 64)
	for r0 := 0; r0 < e.nReg; r0 += batch {
		n := min(batch, e.nReg-r0)
		reqs := make([]*uring.Request, n)
		for j := 0; j < n; j++ {
			mem := e.readSlab[j*readSlotBytes : j*readSlotBytes+blockBytes]
			off, d, fixed, idx := e.regionOff(r0+j), e.disk, e.fixed, uint16(len(e.bufs))
			reqs[j] = &uring.Request{Prep: func(s *uring.SQE) { d.PrepRead(s, mem, off, fixed, idx) }}
		}
		res, err := e.front.Do(bgCtx, reqs...)
		if err != nil {
			return fmt.Errorf("emu: scan %s: %w", e.opts.Path, err)
		}
		for j := 0; j < n; j++ {
			got := e.disk.Done(res[j].Res, blockBytes)
			if got < 0 {
				e.log.Warn("emu: unreadable region header, region skipped", zap.Int("region", r0+j), zap.Error(syscall.Errno(-got)))
				continue
			}
			if int(got) < regionHdr {
				continue
			}
			if seq := e.sb.regionSeq(e.readSlab[j*readSlotBytes:]); seq != 0 {
				found = append(found, hdr{r0 + j, seq})
			}
		}
	}
	if len(found) == 0 {
		return nil
	}
	slices.SortFunc(found, func(a, b hdr) int { return cmpU64(a.seq, b.seq) })
	// 2. Replay regions in seq order, reading up to len(e.bufs) ahead.
	type inflight struct {
		done chan struct{}
		res  int32
	}
	fl := make([]*inflight, len(found))
	submit := func(i int) {
		b := e.bufs[i%len(e.bufs)]
		f := &inflight{done: make(chan struct{})}
		fl[i] = f
		// A region may take several reads (the device's largest transfer):
		// f.res is the bytes read up to the first short piece, or -errno.
		type piece struct {
			mem []byte
			off int64
		}
		var ps []piece
		e.chunks(b.mem, e.regionOff(found[i].r), func(m []byte, o int64) { ps = append(ps, piece{m, o}) })
		res := make([]int32, len(ps))
		var left atomic.Int32
		left.Store(int32(len(ps)))
		finish := func() {
			for j, p := range ps {
				if res[j] < 0 {
					f.res = res[j]
					break
				}
				f.res += res[j]
				if int(res[j]) < len(p.mem) {
					break
				}
			}
			close(f.done)
		}
		d, fixed := e.disk, e.fixed
		reqs := make([]*uring.Request, len(ps))
		for j, p := range ps {
			reqs[j] = &uring.Request{
				Prep: func(s *uring.SQE) { d.PrepRead(s, p.mem, p.off, fixed, b.idx) },
				Done: func(r uring.Result) {
					res[j] = d.Done(r.Res, len(p.mem))
					if left.Add(-1) == 0 {
						finish()
					}
				},
			}
		}
		if err := e.front.Submit(reqs...); err != nil {
			f.res = -int32(errnoOf(err))
			close(f.done)
		}
	}
	for i := 0; i < min(len(found), len(e.bufs)); i++ {
		submit(i)
	}
	for i, h := range found {
		<-fl[i].done
		b := e.bufs[i%len(e.bufs)]
		if fl[i].res < 0 {
			e.log.Warn("emu: unreadable region, its records are lost", zap.Int("region", h.r), zap.Error(syscall.Errno(-fl[i].res)))
			clear(b.mem)
		} else if int(fl[i].res) < len(b.mem) {
			clear(b.mem[fl[i].res:])
		}
		e.regs[h.r] = regionState{seq: h.seq}
		end, low, torn := walkRegion(b.mem, h.seq, e.opts.RegionBytes, func(off int, rc *rec) {
			if rc.kind != kindDelete {
				e.setLocked(&rc.key, rc.locIn(h.r, off))
			} else if old := e.idx.del(&rc.key); old != 0 {
				e.dropLocked(old)
			}
		})
		if torn {
			e.st.TornTails++
		}
		if i == len(found)-1 {
			e.curEnd, e.curLow = end, low
		}
		if i == 0 && len(found) > 2 {
			// Size the index once from the first region's record count.
			e.idx.reserve(int(float64(e.idx.count) * (float64(len(found)) - 0.5) * 1.01)) // last region assumed half full
		}
		if i+len(e.bufs) < len(found) {
			submit(i + len(e.bufs))
		}
	}
	for _, b := range e.bufs {
		clear(b.mem)
	}
	last := found[len(found)-1]
	e.cur, e.nextSeq = last.r, last.seq+1
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

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(b []byte) (int, error) { return f(b) }

package logstore

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/nvmekv/emu/dev"
)

// Checkpoint file (written at clean Close, all little-endian). This build
// writes "CEMU_CK5" (checkpoint_tags.go): the CK3 header with a u64 count
// of extent entries after it, the regions, then the index's entries as
// it holds them: each inline record's tag and Loc (12 B), then each
// extent record's key and Loc (24 B), then the CRC. It reads CK3 and CK4
// (written by builds whose index held full keys) as well, computing the
// tags from their keys.
//
// CK3:
//
//	header 80 B: u64 magic "CEMU_CK3", u64 store id, u64 clean generation,
//	  u64 regions, u64 region bytes, u64 cur (last region taken), u64 next seq,
//	  u64 entries, u64 end of region cur (appending resumes there; 0 = none),
//	  u64 lowest extent of region cur (extents resume below it)
//	regions × 16 B: u64 seq, u32 live records, u32 live bytes
//	entries × 24 B: u64 key[0:8], u64 key[8:16], u64 Loc
//	u32 CRC32C of everything before it
//
// It is trusted only if the superblock says clean with the same store id
// and generation; Open marks the superblock dirty before writing anything.
//
// CK4 (checkpoint_image.go): the same header with an 11th u64, the keyed
// table's slot count n, then the regions, then that table, n × 24 B slots
// as they lay in memory (empty ones included), then the CRC.
const (
	ckMagic    = 0x334b435f554d4543 // bytes "CEMU_CK3"
	ckHdrBytes = 80
	// checkpointChunk is how many entries are read (and reported, E27)
	// at a time.
	checkpointChunk = 4096
)

// recover rebuilds the index: from the checkpoint after a clean close,
// otherwise by scanning every region.
func (lg *Log) recover() error {
	if lg.sb.clean && lg.ckpt != "" {
		err := lg.loadCheckpoint()
		if err == nil {
			lg.st.Recovered = "checkpoint"
			return nil
		}
		lg.log.Warn("logstore: checkpoint unusable, scanning regions", zap.String("path", lg.ckpt), zap.Error(err))
	}
	return lg.scan()
}

func (lg *Log) loadCheckpoint() error {
	f, err := os.Open(lg.ckpt)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	total := fi.Size()
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
	switch le.Uint64(h[0:]) {
	case ckMagicImage:
		return lg.loadImage(h, r, br, crc, total)
	case ckMagicTags:
		return lg.loadTags(h, r, br, crc, total)
	}
	if le.Uint64(h[0:]) != ckMagic {
		return fmt.Errorf("%w: checkpoint %s has no checkpoint magic", ErrFormat, lg.ckpt)
	}
	ck, err := lg.parseCkHeader(h)
	if err != nil {
		return err
	}
	count := ck.count
	if err := lg.checkCkSize(ckHdrBytes, 24*int64(count), total); err != nil {
		return err
	}
	regs, err := lg.readRegions(r)
	if err != nil {
		return err
	}
	idx := newKeyIndex(max(int(count)+int(count)/32, lg.expected()), &lg.lay, lg.bindIdx)
	var live int64
	counts := make(ckCounts, lg.nReg)
	buf := make([]byte, 24*checkpointChunk)
	done := int64(ckHdrBytes + 16*len(regs))
	lg.prog.report("checkpoint", done, total, 0)
	for left := int(count); left > 0; {
		n := min(left, checkpointChunk)
		if _, err := io.ReadFull(r, buf[:24*n]); err != nil {
			return err
		}
		for j := 0; j < n; j++ {
			b := buf[24*j:]
			l := Loc(le.Uint64(b[16:]))
			if l == 0 {
				return fmt.Errorf("%w: checkpoint %s has an empty entry", ErrFormat, lg.ckpt)
			}
			if err := lg.checkCkLoc(l); err != nil {
				return err
			}
			k := [16]byte(b[:16])
			idx.load(&k, l)
			live += int64(l.Size())
			counts.add(l)
		}
		left -= n
		done += int64(24 * n)
		lg.prog.report("checkpoint", min(done, total), total, idx.len())
	}
	if err := lg.checkCkCRC(br, crc); err != nil {
		return err
	}
	if err := lg.checkCkCounts(counts, regs); err != nil {
		return err
	}
	lg.adoptCheckpoint(idx, regs, ck, live)
	return nil
}

// ckHeader is a checkpoint header's state fields (CK3 and CK4 alike).
type ckHeader struct {
	cur, nextSeq, count, curEnd, curLow uint64
}

// parseCkHeader checks that the header h belongs to this clean close of
// this store and is consistent, and returns its fields.
func (lg *Log) parseCkHeader(h [ckHdrBytes]byte) (ckHeader, error) {
	le := binary.LittleEndian
	if le.Uint64(h[8:]) != lg.sb.storeID || le.Uint64(h[16:]) != lg.sb.cleanGen ||
		le.Uint64(h[24:]) != uint64(lg.nReg) || le.Uint64(h[32:]) != lg.sb.regionBytes {
		return ckHeader{}, fmt.Errorf("%w: checkpoint %s does not belong to this clean close of %s", ErrFormat, lg.ckpt, lg.o.Path)
	}
	ck := ckHeader{cur: le.Uint64(h[40:]), nextSeq: le.Uint64(h[48:]), count: le.Uint64(h[56:]), curEnd: le.Uint64(h[64:]), curLow: le.Uint64(h[72:])}
	if ck.cur >= uint64(lg.nReg) || ck.count > lg.maxCkKeys() {
		return ckHeader{}, fmt.Errorf("%w: checkpoint %s header is inconsistent", ErrFormat, lg.ckpt)
	}
	return ck, nil
}

// maxCkKeys is the most records the log's regions can hold.
func (lg *Log) maxCkKeys() uint64 { return uint64(lg.nReg) * uint64(lg.o.RegionBytes) / recHdrBytes }

// checkCkSize refuses a checkpoint whose header counts more entries than
// its file holds (entries bytes of them after a hdr-byte header and the
// regions): the index is sized for the count before the CRC is checked.
func (lg *Log) checkCkSize(hdr, entries, total int64) error {
	if hdr+16*int64(lg.nReg)+entries+4 > total {
		return fmt.Errorf("%w: checkpoint %s counts more entries than its %d bytes hold", ErrFormat, lg.ckpt, total)
	}
	return nil
}

// ckCounts is the records and bytes a checkpoint's entries hold in each
// region, which must be the counts it gives the regions: Close writes
// them so (CheckAccounting), and a region counted short could be reused
// with live records in Strict mode (E6).
type ckCounts []struct{ live, liveB uint64 }

func (c ckCounts) add(l Loc) {
	e := &c[l.Region()]
	e.live++
	e.liveB += uint64(l.Size())
}

// checkCkCounts refuses a checkpoint whose regions' counts differ from
// what its entries hold (c).
func (lg *Log) checkCkCounts(c ckCounts, regs []regionState) error {
	for r := range regs {
		if uint64(regs[r].live) != c[r].live || uint64(regs[r].liveB) != c[r].liveB {
			return fmt.Errorf("%w: checkpoint %s counts %d records of %d bytes in region %d, its entries %d of %d",
				ErrFormat, lg.ckpt, regs[r].live, regs[r].liveB, r, c[r].live, c[r].liveB)
		}
	}
	return nil
}

// checkCkLoc refuses a checkpoint entry whose Loc lies outside the log.
func (lg *Log) checkCkLoc(l Loc) error {
	if l.Region() < 0 || l.Region() >= lg.nReg || (l.Ext() && l.ExtOff()+extBytes(l.VLen()) > lg.o.RegionBytes) ||
		(!l.Ext() && l.Off()+l.Size() > lg.o.RegionBytes) { // a tag slot holds offsets in the region only (E8)
		return fmt.Errorf("%w: checkpoint %s has an entry outside the log", ErrFormat, lg.ckpt)
	}
	return nil
}

// checkCkCRC reads the checkpoint's trailing CRC from br and compares it
// with crc, the hash of everything read before it.
func (lg *Log) checkCkCRC(br io.Reader, crc hash.Hash32) error {
	want := crc.Sum32()
	var tail [4]byte
	if _, err := io.ReadFull(br, tail[:]); err != nil {
		return err
	}
	if binary.LittleEndian.Uint32(tail[:]) != want {
		return fmt.Errorf("%w: checkpoint %s CRC mismatch", ErrFormat, lg.ckpt)
	}
	return nil
}

// adoptCheckpoint makes a loaded checkpoint the log's state.
func (lg *Log) adoptCheckpoint(idx *keyIndex, regs []regionState, ck ckHeader, live int64) {
	lg.idx, lg.regs, lg.cur, lg.nextSeq, lg.liveBytes = idx, regs, int(ck.cur), ck.nextSeq, live
	lg.curEnd = int(min(ck.curEnd, uint64(lg.o.RegionBytes)))
	lg.curLow = int(min(ck.curLow, uint64(lg.o.RegionBytes)))
}

// saveClean writes the checkpoint (if configured) and marks the
// superblock clean. Called by Close after every write is durable.
func (lg *Log) saveClean() error {
	lg.mu.Lock()
	defer lg.mu.Unlock()
	gen := lg.sb.cleanGen + 1
	if lg.ckpt != "" {
		if err := lg.writeCheckpoint(gen); err != nil {
			return err
		}
	}
	sbuf, err := dev.MapBuffer(blockBytes)
	if err != nil {
		return err
	}
	defer dev.UnmapBuffer(sbuf)
	lg.sb.clean, lg.sb.cleanGen = lg.ckpt != "", gen
	return lg.writeSuperblock(sbuf)
}

func (lg *Log) writeCheckpoint(gen uint64) error {
	tmp := lg.ckpt + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("%w: %w", errCheckpoint, err)
	}
	crc := crc32.New(castagnoli)
	w := bufio.NewWriterSize(io.MultiWriter(f, crc), 1<<20)
	curEnd, curLow := uint64(0), uint64(lg.o.RegionBytes)
	if lg.act != nil && lg.act.region == lg.cur {
		curEnd, curLow = uint64(lg.act.fill), uint64(lg.act.low)
	}
	var err2 error
	switch ckWriteFormat {
	case 3, 4:
		err2 = lg.writeKeyedLocked(w, gen, curEnd, curLow)
	default:
		lg.writeTagsLocked(w, gen, curEnd, curLow)
	}
	err = errors.Join(err2, w.Flush())
	if err == nil {
		var tail [4]byte
		binary.LittleEndian.PutUint32(tail[:], crc.Sum32())
		_, err = f.Write(tail[:])
	}
	if err == nil {
		err = f.Sync()
	}
	err = errors.Join(err, f.Close())
	if err == nil {
		err = os.Rename(tmp, lg.ckpt)
	}
	if err == nil {
		if d, derr := os.Open(filepath.Dir(lg.ckpt)); derr == nil {
			err = d.Sync()
			d.Close()
		}
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%w: %s: %w", errCheckpoint, lg.ckpt, err)
	}
	return nil
}

// putCkHeader fills the header fields every format shares.
func (lg *Log) putCkHeader(h []byte, magic, gen, curEnd, curLow uint64) {
	for i, v := range []uint64{magic, lg.sb.storeID, gen, uint64(lg.nReg), lg.sb.regionBytes, uint64(lg.cur), lg.nextSeq, uint64(lg.idx.len()), curEnd, curLow} {
		binary.LittleEndian.PutUint64(h[8*i:], v)
	}
}

// writeRegions writes the region states.
func (lg *Log) writeRegions(w io.Writer) {
	var rb [16]byte
	for _, r := range lg.regs {
		binary.LittleEndian.PutUint64(rb[0:], r.seq)
		binary.LittleEndian.PutUint32(rb[8:], r.live)
		binary.LittleEndian.PutUint32(rb[12:], r.liveB)
		w.Write(rb[:])
	}
}

// readRegions reads the checkpoint's region states.
func (lg *Log) readRegions(r io.Reader) ([]regionState, error) {
	le := binary.LittleEndian
	regs := make([]regionState, lg.nReg)
	var rb [16]byte
	for i := range regs {
		if _, err := io.ReadFull(r, rb[:]); err != nil {
			return nil, err
		}
		regs[i] = regionState{seq: le.Uint64(rb[0:]), live: le.Uint32(rb[8:]), liveB: le.Uint32(rb[12:])}
	}
	return regs, nil
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(b []byte) (int, error) { return f(b) }

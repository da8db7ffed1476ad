package logstore

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash"
	"io"
)

// The checkpoint of the key index ("CEMU_CK5", see checkpoint.go): the
// CK3 header, a u64 count of extent entries, the regions, then the
// inline entries (u32 tag, u64 Loc) and the extent entries (16-byte key,
// u64 Loc). Open inserts each entry: an inline one under its tag, as
// written, with no key to hash, in the order written (tagIndex.load,
// E29).
const (
	ckMagicTags    = 0x354b435f554d4543 // bytes "CEMU_CK5"
	ckTagsHdrBytes = ckHdrBytes + 8     // the CK3 header, then u64 extent entries
	ckTagEntry     = 12
	ckExtEntry     = 24
)

// ckWriteFormat is the checkpoint format Close writes: 5; a test seam
// writes 3 or 4 (formats of earlier builds, with full keys) to check that
// they still load.
var ckWriteFormat = 5

// writeTagsLocked writes a CK5 checkpoint after its file's start, up to
// its CRC.
func (lg *Log) writeTagsLocked(w io.Writer, gen, curEnd, curLow uint64) {
	var h [ckTagsHdrBytes]byte
	lg.putCkHeader(h[:], ckMagicTags, gen, curEnd, curLow)
	binary.LittleEndian.PutUint64(h[ckHdrBytes:], uint64(lg.idx.ext.len()))
	w.Write(h[:])
	lg.writeRegions(w)
	var eb [ckExtEntry]byte
	lg.idx.tags.each(func(tag uint32, l Loc) {
		binary.LittleEndian.PutUint32(eb[0:], tag)
		binary.LittleEndian.PutUint64(eb[4:], uint64(l))
		w.Write(eb[:ckTagEntry])
	})
	lg.idx.ext.each(func(a, b uint64, l Loc) {
		binary.LittleEndian.PutUint64(eb[0:], a)
		binary.LittleEndian.PutUint64(eb[8:], b)
		binary.LittleEndian.PutUint64(eb[16:], uint64(l))
		w.Write(eb[:])
	})
}

// loadTags reads a CK5 checkpoint after its first ckHdrBytes (h), whose
// magic it has checked.
func (lg *Log) loadTags(h [ckHdrBytes]byte, r io.Reader, br *bufio.Reader, crc hash.Hash32, total int64) error {
	le := binary.LittleEndian
	var nb [8]byte
	if _, err := io.ReadFull(r, nb[:]); err != nil {
		return err
	}
	ck, err := lg.parseCkHeader(h)
	if err != nil {
		return err
	}
	exts := le.Uint64(nb[:])
	if exts > ck.count {
		return fmt.Errorf("%w: checkpoint %s header is inconsistent", ErrFormat, lg.ckpt)
	}
	inline := ck.count - exts
	if err := lg.checkCkSize(ckTagsHdrBytes, ckTagEntry*int64(inline)+ckExtEntry*int64(exts), total); err != nil {
		return err
	}
	regs, err := lg.readRegions(r)
	if err != nil {
		return err
	}
	idx := &keyIndex{tags: newTagIndex(max(int(inline)+int(inline)/32, lg.expected()), &lg.lay, lg.bindIdx),
		ext: newExtIndex(int(exts)+int(exts)/32, lg.bindIdx)}
	var live int64
	counts := make(ckCounts, lg.nReg)
	buf := make([]byte, ckExtEntry*checkpointChunk)
	done := int64(ckTagsHdrBytes + 16*len(regs))
	lg.prog.report("checkpoint", done, total, 0)
	for left := ck.count; left > 0; {
		size := ckTagEntry
		n := min(left, checkpointChunk)
		if left > exts {
			n = min(n, left-exts) // inline entries first
		} else {
			size = ckExtEntry
		}
		if _, err := io.ReadFull(r, buf[:size*int(n)]); err != nil {
			return err
		}
		for j := 0; j < int(n); j++ {
			b := buf[size*j:]
			var l Loc
			if size == ckTagEntry {
				l = Loc(le.Uint64(b[4:]))
			} else {
				l = Loc(le.Uint64(b[16:]))
			}
			if l == 0 || l.Ext() != (size == ckExtEntry) {
				return fmt.Errorf("%w: checkpoint %s has an entry of the wrong kind", ErrFormat, lg.ckpt)
			}
			if err := lg.checkCkLoc(l); err != nil {
				return err
			}
			if size == ckTagEntry {
				idx.tags.load(le.Uint32(b), l)
			} else {
				idx.ext.load(le.Uint64(b[0:]), le.Uint64(b[8:]), l)
			}
			idx.full += fullOf(l)
			live += int64(l.Size())
			counts.add(l)
		}
		left -= n
		done += int64(size) * int64(n)
		lg.prog.report("checkpoint", min(done, total), total, idx.len())
	}
	if err := lg.checkCkCRC(br, crc); err != nil {
		return err
	}
	if err := lg.checkCkCounts(counts, regs); err != nil {
		return err
	}
	idx.tags.finishLoad()
	lg.adoptCheckpoint(idx, regs, ck, live)
	return nil
}

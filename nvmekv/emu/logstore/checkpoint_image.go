package logstore

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash"
	"io"
	"unsafe"
)

// The image checkpoint ("CEMU_CK4", see checkpoint.go), written by
// earlier builds whose index was one keyed table: that table as it lay in
// memory. The slots of a table of n slots are where home() puts them for
// that n, so an image is only valid with the same home function: a
// change to home() or to the keyed slot layout must change ckMagicImage.
// This build reads it into a keyed table and builds its key index from
// that (keyIndexFrom); it writes one only as a test seam (ckWriteFormat).
const (
	ckMagicImage    = 0x344b435f554d4543 // bytes "CEMU_CK4"
	ckImageHdrBytes = ckHdrBytes + 8     // the CK3 header, then u64 n
	// imageChunk is how many bytes of the image are read (and reported,
	// E27) at a time.
	imageChunk = 4 << 20
)

// hostLittleEndian reports whether slots lie in memory as the image
// format stores them (little-endian u64s).
func hostLittleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

// image is the table's slots as bytes (n × 24), to write as they are.
func (x *table) image() []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(x.slots))), len(x.slots)*int(unsafe.Sizeof(slot{})))
}

// loadImage reads a CK4 checkpoint after its first ckHdrBytes (h), which
// it has checked the magic of: the rest of the header, the regions, and
// the table image straight into a table of n slots, then checks every
// entry's Loc and the count, and sums the live bytes.
func (lg *Log) loadImage(h [ckHdrBytes]byte, r io.Reader, br *bufio.Reader, crc hash.Hash32, total int64) error {
	le := binary.LittleEndian
	if !hostLittleEndian() {
		return fmt.Errorf("%w: checkpoint %s is a little-endian table image", ErrFormat, lg.ckpt)
	}
	var nb [8]byte
	if _, err := io.ReadFull(r, nb[:]); err != nil {
		return err
	}
	n := le.Uint64(nb[:])
	ck, err := lg.parseCkHeader(h)
	if err != nil {
		return err
	}
	if n < ck.count || n < 64 || n > 2*lg.maxCkKeys()+64 || int64(n)*24 > total {
		return fmt.Errorf("%w: checkpoint %s header is inconsistent", ErrFormat, lg.ckpt)
	}
	regs, err := lg.readRegions(r)
	if err != nil {
		return err
	}
	slots, off := newSlots[slot](int(n), lg.bindIdx)
	t := &table{slots: slots, n: int(n), off: off}
	img := t.image()
	done := int64(ckImageHdrBytes + 16*len(regs))
	lg.prog.report("checkpoint", done, total, 0)
	for len(img) > 0 {
		k := min(len(img), imageChunk)
		if _, err := io.ReadFull(r, img[:k]); err != nil {
			return err
		}
		img = img[k:]
		done += int64(k)
		lg.prog.report("checkpoint", min(done, total), total, 0)
	}
	if err := lg.checkCkCRC(br, crc); err != nil {
		return err
	}
	var live int64
	counts := make(ckCounts, lg.nReg)
	for i := range t.slots {
		l := t.slots[i].l
		if l == 0 {
			continue
		}
		if err := lg.checkCkLoc(l); err != nil {
			return err
		}
		t.count++
		live += int64(l.Size())
		counts.add(l)
	}
	if uint64(t.count) != ck.count {
		return fmt.Errorf("%w: checkpoint %s holds %d entries, its header says %d", ErrFormat, lg.ckpt, t.count, ck.count)
	}
	if err := lg.checkCkCounts(counts, regs); err != nil {
		return err
	}
	lg.adoptCheckpoint(keyIndexFrom(indexOf(t, nil), &lg.lay, lg.bindIdx), regs, ck, live)
	return nil
}

// writeKeyedLocked writes a checkpoint of an earlier build's format
// (ckWriteFormat 3: entries, 4: a keyed table's image) after its file's
// start, up to its CRC: the inline keys come from their records
// (eachKeyLocked). A test seam.
func (lg *Log) writeKeyedLocked(w io.Writer, gen, curEnd, curLow uint64) error {
	keyed := newIndex(lg.idx.len(), nil)
	if err := lg.eachKeyLocked(func(k *[16]byte, l Loc) { keyed.put(k, l) }); err != nil {
		return err
	}
	keyed.drain()
	var h [ckImageHdrBytes]byte
	hdr, magic := h[:ckHdrBytes], uint64(ckMagic)
	if ckWriteFormat == 4 {
		hdr, magic = h[:], ckMagicImage
		binary.LittleEndian.PutUint64(h[ckHdrBytes:], uint64(keyed.cur.n))
	}
	lg.putCkHeader(h[:], magic, gen, curEnd, curLow)
	w.Write(hdr)
	lg.writeRegions(w)
	if ckWriteFormat == 4 {
		w.Write(keyed.cur.image())
		return nil
	}
	var eb [24]byte
	keyed.each(func(a, b uint64, l Loc) {
		binary.LittleEndian.PutUint64(eb[0:], a)
		binary.LittleEndian.PutUint64(eb[8:], b)
		binary.LittleEndian.PutUint64(eb[16:], uint64(l))
		w.Write(eb[:])
	})
	return nil
}

package logstore

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash"
	"io"
	"unsafe"
)

// The image checkpoint ("CEMU_CK4", see checkpoint.go): the index's table
// as it lies in memory. The slots of a table of n slots are where home()
// puts them for that n, so an image is only valid with the same home
// function: a change to home() or to the slot layout must change
// ckMagicImage.
const (
	ckMagicImage    = 0x344b435f554d4543 // bytes "CEMU_CK4"
	ckImageHdrBytes = ckHdrBytes + 8     // the CK3 header, then u64 n
	// imageChunk is how many bytes of the image are read (and reported,
	// E27) at a time.
	imageChunk = 4 << 20
)

// writeImages selects the image format where the host allows it (a test
// seam: false writes CK3, to check that CK3 files still load).
var writeImages = true

// imageMinLoad is the least load of a table written as an image: at it
// the image takes 24/0.75 = 32 B a key, a CK3 rebuild (sized for a
// quarter more keys at 90% load) 33.3.
const imageMinLoad = 0.75

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
	if le.Uint64(h[8:]) != lg.sb.storeID || le.Uint64(h[16:]) != lg.sb.cleanGen ||
		le.Uint64(h[24:]) != uint64(lg.nReg) || le.Uint64(h[32:]) != lg.sb.regionBytes {
		return fmt.Errorf("%w: checkpoint %s does not belong to this clean close of %s", ErrFormat, lg.ckpt, lg.o.Path)
	}
	cur, nextSeq, count, curEnd, curLow := le.Uint64(h[40:]), le.Uint64(h[48:]), le.Uint64(h[56:]), le.Uint64(h[64:]), le.Uint64(h[72:])
	maxKeys := uint64(lg.nReg) * uint64(lg.o.RegionBytes) / recHdrBytes
	if cur >= uint64(lg.nReg) || count > maxKeys || n < count || n < 64 || n > 2*maxKeys+64 ||
		int64(n)*24 > total {
		return fmt.Errorf("%w: checkpoint %s header is inconsistent", ErrFormat, lg.ckpt)
	}
	regs, err := lg.readRegions(r)
	if err != nil {
		return err
	}
	slots, off := newTable(int(n), lg.bindIdx)
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
	var tail [4]byte
	want := crc.Sum32()
	if _, err := io.ReadFull(br, tail[:]); err != nil {
		return err
	}
	if le.Uint32(tail[:]) != want {
		return fmt.Errorf("%w: checkpoint %s CRC mismatch", ErrFormat, lg.ckpt)
	}
	var live int64
	for i := range t.slots {
		l := t.slots[i].l
		if l == 0 {
			continue
		}
		if l.Region() < 0 || l.Region() >= lg.nReg || (l.Ext() && l.ExtOff()+extBytes(l.VLen()) > lg.o.RegionBytes) {
			return fmt.Errorf("%w: checkpoint %s has an entry outside the log", ErrFormat, lg.ckpt)
		}
		t.count++
		live += int64(l.Size())
	}
	if uint64(t.count) != count {
		return fmt.Errorf("%w: checkpoint %s holds %d entries, its header says %d", ErrFormat, lg.ckpt, t.count, count)
	}
	lg.idx = &index{cur: t, bind: lg.bindIdx}
	lg.regs, lg.cur, lg.nextSeq, lg.liveBytes = regs, int(cur), nextSeq, live
	lg.curEnd = int(min(curEnd, uint64(lg.o.RegionBytes)))
	lg.curLow = int(min(curLow, uint64(lg.o.RegionBytes)))
	return nil
}

package logstore

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// A tag slot (E8) is 10 bytes, 80 bits: an inline record's Loc packed in
// its low L bits, as (region+1, klen-1, offset/16, size/16) in the least
// bits the store's region count and region size need, and above them the
// tag's low 32-d0 bits, S = 80-L at most: its top d0 = max(0, 32-S) bits
// are the prefix of the segment that holds it, since every segment's
// prefix is at least d0 bits long (the directory starts at depth d0).
// So every tag is kept whole. A store of 4 MiB regions has d0 = 0 up to
// 256 regions (1 GiB), 7 at 2^15 regions (128 GiB), and the largest a
// Loc names (2^19-2 regions of 64 MiB) 15: at least 2^15 segments of 64
// slots (21 MB). Bytes 0..7 hold the low 64 bits, little-endian; a slot
// whose first 8 bytes are zero is empty (a Loc's region+1 is never 0).
type tslot [10]byte

// tslotBytes is a tag slot's size.
const tslotBytes = 10

// slotLayout is how a store's tag slots pack a Loc and a tag.
type slotLayout struct {
	rBits, oBits uint   // region+1, offset/16
	locBits      uint   // L: rBits + 4 (klen-1) + oBits + 18 (size/16)
	d0           uint   // the tag bits the segment's prefix holds
	low          uint32 // the tag bits the slot holds: the low 32-d0
}

// sizeBits holds an inline record's size/16 (records under 4 MiB, as in
// a Loc).
const sizeBits = 18

// newSlotLayout is the layout of a store of regions regions of
// regionBytes bytes. It fails for a store a Loc cannot name.
func newSlotLayout(regions, regionBytes int) (slotLayout, error) {
	if regions < 1 || regions > maxRegions || regionBytes < 16 || regionBytes > MaxRegionBytes {
		return slotLayout{}, fmt.Errorf("%w: %d regions of %d bytes: a tag slot packs at most %d regions of %d bytes",
			ErrBadOptions, regions, regionBytes, maxRegions, MaxRegionBytes)
	}
	y := slotLayout{rBits: uint(bits.Len(uint(regions))), oBits: uint(bits.Len(uint(regionBytes-1) >> 4))}
	y.locBits = y.rBits + 4 + y.oBits + sizeBits
	y.d0 = uint(max(0, 32-(80-int(y.locBits))))
	if y.d0 > maxDirDepth {
		return slotLayout{}, fmt.Errorf("%w: %d regions of %d bytes need a tag index of depth %d, at most %d", ErrBadOptions,
			regions, regionBytes, y.d0, maxDirDepth)
	}
	y.low = uint32(1<<(32-y.d0) - 1)
	return y, nil
}

// pack is the slot of tag → l (an inline Loc). A Loc the layout cannot
// hold panics: Open made the layout for the store's regions, and a Loc
// names one of them.
func (y *slotLayout) pack(tag uint32, l Loc) tslot {
	r1, k, o, z := uint64(l>>44&(1<<19-1)), uint64(l>>40&0xf), uint64(l>>18&(1<<22-1)), uint64(l&(1<<18-1))
	if l.Ext() || r1 == 0 || r1>>y.rBits != 0 || o>>y.oBits != 0 {
		panic(fmt.Sprintf("logstore: Loc %#x does not fit a tag slot of %d region and %d offset bits", uint64(l), y.rBits, y.oBits))
	}
	p := r1<<(4+y.oBits+sizeBits) | k<<(y.oBits+sizeBits) | o<<sizeBits | z
	t := uint64(tag & y.low)
	var s tslot
	binary.LittleEndian.PutUint64(s[0:], p|t<<y.locBits)
	binary.LittleEndian.PutUint16(s[8:], uint16(t>>(64-y.locBits)))
	return s
}

// empty reports whether s holds no entry.
func (s *tslot) empty() bool { return binary.LittleEndian.Uint64(s[0:]) == 0 }

// tag is the tag of s, held in a segment whose first tag is lo.
func (y *slotLayout) tag(s *tslot, lo uint32) uint32 {
	t := binary.LittleEndian.Uint64(s[0:])>>y.locBits | uint64(binary.LittleEndian.Uint16(s[8:]))<<(64-y.locBits)
	return lo&^y.low | uint32(t)&y.low
}

// loc is s's Loc.
func (y *slotLayout) loc(s *tslot) Loc {
	p := binary.LittleEndian.Uint64(s[0:]) & (1<<y.locBits - 1)
	r1 := p >> (4 + y.oBits + sizeBits)
	k := p >> (y.oBits + sizeBits) & 0xf
	o := p >> sizeBits & (1<<y.oBits - 1)
	return Loc(r1<<44 | k<<40 | o<<18 | p&(1<<sizeBits-1))
}

// tent is an inline entry outside a table (lists being sorted, loaded
// or removed): the tag and the Loc, 12 bytes.
type tent struct {
	tag, lo, hi uint32
}

func mkTent(tag uint32, l Loc) tent { return tent{tag, uint32(l), uint32(l >> 32)} }

func (e *tent) loc() Loc { return Loc(e.hi)<<32 | Loc(e.lo) }

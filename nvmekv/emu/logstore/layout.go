package logstore

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// On-disk layout (all little-endian):
//
//	[0, 4096)            superblock
//	[4096 + r*R, +R)     region r (R = RegionBytes), r = 0..nRegions-1
//
// Superblock (first 64 bytes of block 0):
//
//	0 u64 magic "CEMU_SB1"   8 u32 version (3 or 4; 2 is read)   12 u32 block bytes (4096)
//	16 u64 region bytes      24 u64 regions      32 u64 store id (random at format)
//	40 u32 clean (1 = closed cleanly, checkpoint valid)  44 u32 max value bytes
//	48 u64 clean generation (matches the checkpoint)     56 u32 CRC32C of 0..56
//
// Version 4 is version 3 with a clear record after it (Log.Clear, E34):
//
//	64 u64 clear seq S: every region incarnation with a seq below S is
//	   empty (its records were cleared)           72 u32 CRC32C of 64..72
//
// A store is formatted as version 3 and written as version 4 by its first
// Clear, so a build that predates Clear still opens a store never cleared
// and refuses (version 4) one that was, whose cleared records it would
// serve again; a version-3 or version-2 superblock reads as S = 0. The
// superblock, clear record included, lies in the block's first 512-byte
// sector and is written whole, as one write followed by a sync. Version 1
// (before extents) is refused with ErrFormat.
//
// Region header (first 64 bytes of a region): u32 magic "TCRG", u32 version
// (3), u64 seq (unique, increasing per region incarnation), u64 store id
// (the superblock's), u32 CRC32C of 0..24. A scan takes only regions of its
// own store: a device formatted again still holds the regions of the store
// it held before, and they must not come back (E22). Seqs start at a base
// drawn from the store id, not at 1, so a record left past the written end
// of a region by an earlier store does not carry the seq of the region
// that now lies there. A version-2 superblock (before store ids in region
// headers) keeps version-2 region headers: u64 seq, u32 CRC32C of 0..16.
//
// A region fills from both ends: records grow forward from offset 64, value
// extents (whole 4096-byte blocks) grow downward from the region's end.
// Record (at 16-byte aligned offsets from 64):
//
//	0 u32 magic "TCR1"  4 u8 kind (1 store, 2 delete, 3 store-extent)  5 u8 key length
//	6 u16 extent block (kind 3: the value's first block within the region; else 0)
//	8 u32 value length  12 u32 CRC32C of bytes 0..12 ‖ 16..40 ‖ value
//	16 u64 region seq   24 [16]byte key (zero padded)  40 value (kinds 1 and 2)
//
// Kinds 1 and 2 occupy align16(40+vlen) bytes with the value inline. Kind 3
// occupies 48 bytes; its value lies at extent block*4096 of the region (the
// CRC covers it there), zero padded to a block end. A Store uses an extent
// when its value read alone, 4096-aligned, is not larger than the inline
// record read at 512-byte alignment (useExtent: a 4 KiB value is then read
// with one aligned 4096-byte read). Extents of later records lie below those
// of earlier ones, and above the forward end's block. A zero magic means
// padding: the scan skips to the next 4096-byte block (Flush pads the
// forward end to a block boundary so that a durable block is never written
// again); the scan stops where the extents begin.
const (
	blockBytes    = 4096
	sbMagic       = 0x3142535f554d4543 // bytes "CEMU_SB1"
	sbVersion     = 3                  // what a new store is formatted as
	sbVersionV2   = 2                  // still read: region headers without the store id
	sbVersionClr  = 4                  // version 3 plus the clear record (written by Clear)
	sbClearOff    = 64                 // the clear record's offset in block 0
	regionMagic   = 0x47524354         // "TCRG"
	regionVersion = 3
	regionHdr     = 64
	recMagic      = 0x31524354 // "TCR1"
	recHdrBytes   = 40
	extRecBytes   = ExtentHeaderBytes
	kindStore     = 1
	kindDelete    = 2
	kindExtent    = 3
)

// ExtentHeaderBytes is the forward space of a record whose value is in an
// extent (align16 of the 40-byte record header): its Loc's Size is this
// plus the extent's whole blocks.
const ExtentHeaderBytes = 48

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type superblock struct {
	version                       uint32
	regionBytes, regions, storeID uint64
	clean                         bool
	maxValue                      uint32
	cleanGen                      uint64
	clearSeq                      uint64 // regions with a lower seq are empty (version 4; else 0)
}

func (s *superblock) put(b []byte) {
	le := binary.LittleEndian
	clear(b[:blockBytes])
	le.PutUint64(b[0:], sbMagic)
	le.PutUint32(b[8:], s.version)
	le.PutUint32(b[12:], blockBytes)
	le.PutUint64(b[16:], s.regionBytes)
	le.PutUint64(b[24:], s.regions)
	le.PutUint64(b[32:], s.storeID)
	if s.clean {
		le.PutUint32(b[40:], 1)
	}
	le.PutUint32(b[44:], s.maxValue)
	le.PutUint64(b[48:], s.cleanGen)
	le.PutUint32(b[56:], crc32.Checksum(b[:56], castagnoli))
	if s.version == sbVersionClr {
		le.PutUint64(b[sbClearOff:], s.clearSeq)
		le.PutUint32(b[sbClearOff+8:], crc32.Checksum(b[sbClearOff:sbClearOff+8], castagnoli))
	}
}

// parseSuperblock returns ok=false for a device that was never formatted
// (no magic); an error for a damaged or incompatible superblock.
func parseSuperblock(b []byte) (s superblock, ok bool, err error) {
	le := binary.LittleEndian
	if le.Uint64(b) != sbMagic {
		return s, false, nil
	}
	if crc32.Checksum(b[:56], castagnoli) != le.Uint32(b[56:]) {
		return s, true, fmt.Errorf("%w: superblock CRC mismatch", ErrFormat)
	}
	if v := le.Uint32(b[8:]); v < sbVersionV2 && le.Uint32(b[12:]) == blockBytes {
		return s, true, fmt.Errorf("%w: written by an older format (version %d, before value extents; this build reads version %d); "+
			"delete the file and its .ckpt checkpoint, or open another path", ErrFormat, v, sbVersion)
	} else if v != sbVersion && v != sbVersionV2 && v != sbVersionClr || le.Uint32(b[12:]) != blockBytes {
		return s, true, fmt.Errorf("%w: superblock version %d block %d, want %d..%d/%d", ErrFormat, v, le.Uint32(b[12:]), sbVersionV2, sbVersionClr, blockBytes)
	}
	s = superblock{version: le.Uint32(b[8:]), regionBytes: le.Uint64(b[16:]), regions: le.Uint64(b[24:]), storeID: le.Uint64(b[32:]),
		clean: le.Uint32(b[40:]) == 1, maxValue: le.Uint32(b[44:]), cleanGen: le.Uint64(b[48:])}
	if s.version == sbVersionClr {
		c := b[sbClearOff:]
		if crc32.Checksum(c[:8], castagnoli) != le.Uint32(c[8:]) || le.Uint64(c) == 0 {
			return s, true, fmt.Errorf("%w: superblock clear record damaged (CRC mismatch or seq 0)", ErrFormat)
		}
		s.clearSeq = le.Uint64(c)
	}
	return s, true, nil
}

// putRegionHdr writes the header of region incarnation seq of store s.
func (s *superblock) putRegionHdr(b []byte, seq uint64) {
	le := binary.LittleEndian
	clear(b[:regionHdr])
	le.PutUint32(b[0:], regionMagic)
	le.PutUint64(b[8:], seq)
	if s.version == sbVersionV2 {
		le.PutUint32(b[4:], sbVersionV2)
		le.PutUint32(b[16:], crc32.Checksum(b[:16], castagnoli))
		return
	}
	le.PutUint32(b[4:], regionVersion)
	le.PutUint64(b[16:], s.storeID)
	le.PutUint32(b[24:], crc32.Checksum(b[:24], castagnoli))
}

// regionSeq returns the seq of a region header of store s, 0 if it is not
// one (not a header, damaged, or another store's: E22).
func (s *superblock) regionSeq(b []byte) uint64 {
	le := binary.LittleEndian
	if le.Uint32(b) != regionMagic {
		return 0
	}
	if s.version == sbVersionV2 {
		if le.Uint32(b[4:]) != sbVersionV2 || crc32.Checksum(b[:16], castagnoli) != le.Uint32(b[16:]) {
			return 0
		}
		return le.Uint64(b[8:])
	}
	if le.Uint32(b[4:]) != regionVersion || le.Uint64(b[16:]) != s.storeID || crc32.Checksum(b[:24], castagnoli) != le.Uint32(b[24:]) {
		return 0
	}
	return le.Uint64(b[8:])
}

// firstSeq is the seq of a fresh store's first region: drawn from the
// store id (in [1, 2^58]), so two stores on one device use different seqs.
func (s *superblock) firstSeq() uint64 { return 1 + s.storeID>>6 }

func recSize(vlen int) int { return (recHdrBytes + vlen + 15) &^ 15 }

func align512(n int) int { return (n + 511) &^ 511 }

// useExtent reports whether a Store of vlen bytes puts its value in an
// extent: when reading the value alone from a 4096-aligned extent is not
// larger than reading the inline record at 512-byte alignment (true for
// 4096, 8000, 8192; false for 4150 or small values).
func useExtent(vlen int) bool {
	return vlen > 0 && alignUp(vlen) <= align512(recHdrBytes+vlen)
}

// extBytes is the region space of an extent of vlen bytes.
func extBytes(vlen int) int { return alignUp(vlen) }

// putRecord writes an inline record at b (len ≥ recSize(len(value))).
func putRecord(b []byte, kind uint8, seq uint64, key []byte, value []byte) {
	le := binary.LittleEndian
	putHdr(b, kind, seq, key, len(value), 0)
	n := copy(b[40:], value)
	clear(b[40+n : recSize(len(value))])
	crc := crc32.Update(crc32.Checksum(b[:12], castagnoli), castagnoli, b[16:40+len(value)])
	le.PutUint32(b[12:], crc)
}

// putExtRecord writes a store-extent record at mem[off:] and its value at
// mem[ext:] (ext a block offset of the same region image; the rest of the
// value's last block must already be zero).
func putExtRecord(mem []byte, off int, seq uint64, key []byte, ext int, value []byte) {
	b := mem[off:]
	putHdr(b, kindExtent, seq, key, len(value), ext/blockBytes)
	clear(b[40:extRecBytes])
	copy(mem[ext:], value)
	crc := crc32.Update(crc32.Checksum(b[:12], castagnoli), castagnoli, b[16:40])
	crc = crc32.Update(crc, castagnoli, value)
	binary.LittleEndian.PutUint32(b[12:], crc)
}

func putHdr(b []byte, kind uint8, seq uint64, key []byte, vlen, blk int) {
	le := binary.LittleEndian
	le.PutUint32(b[0:], recMagic)
	b[4], b[5] = kind, uint8(len(key))
	le.PutUint16(b[6:], uint16(blk))
	le.PutUint32(b[8:], uint32(vlen))
	le.PutUint64(b[16:], seq)
	clear(b[24:40])
	copy(b[24:40], key)
}

// rec is a parsed record header.
type rec struct {
	kind uint8
	klen int
	vlen int
	ext  int // kind 3: offset of the value's extent in the region
	seq  uint64
	key  [16]byte
}

// size is the forward space the record takes.
func (r *rec) Size() int {
	if r.kind == kindExtent {
		return extRecBytes
	}
	return recSize(r.vlen)
}

// locIn is the index Loc of a store record at off of region.
func (r *rec) locIn(region, off int) Loc {
	if r.kind == kindExtent {
		return mkExtLoc(region, r.klen, r.ext, r.vlen)
	}
	return mkLoc(region, r.klen, off, recSize(r.vlen))
}

// value returns the record's value bytes within the region image mem.
func (r *rec) value(mem []byte, off int) []byte {
	if r.kind == kindExtent {
		return mem[r.ext : r.ext+r.vlen]
	}
	return mem[off+recHdrBytes : off+recHdrBytes+r.vlen]
}

// parseRecord checks the record at mem[off:]: magic, sizes (a value of at
// most maxValue and MaxValueBytes, which a Loc holds), seq and CRC (for
// kind 3 over its extent, which must lie in [alignUp(off+48), low)). It
// returns ok=false for anything else (padding is checked by the caller).
func parseRecord(mem []byte, off int, wantSeq uint64, maxValue int, low int) (r rec, ok bool) {
	le := binary.LittleEndian
	b := mem[off:]
	if len(b) < recHdrBytes || le.Uint32(b) != recMagic {
		return r, false
	}
	r.kind, r.klen, r.vlen, r.seq = b[4], int(b[5]), int(le.Uint32(b[8:])), le.Uint64(b[16:])
	if r.kind < kindStore || r.kind > kindExtent || r.klen < 1 || r.klen > 16 || r.vlen > min(maxValue, MaxValueBytes) || r.seq != wantSeq {
		return r, false
	}
	crc := crc32.Update(crc32.Checksum(b[:12], castagnoli), castagnoli, b[16:40])
	if r.kind == kindExtent {
		r.ext = int(le.Uint16(b[6:])) * blockBytes
		if !useExtent(r.vlen) || off+extRecBytes > low || r.ext < alignUp(off+extRecBytes) ||
			r.ext+extBytes(r.vlen) > min(low, len(mem)) {
			return r, false
		}
		crc = crc32.Update(crc, castagnoli, mem[r.ext:r.ext+r.vlen])
	} else {
		if le.Uint16(b[6:]) != 0 || off+recHdrBytes+r.vlen > min(low, len(mem)) {
			return r, false
		}
		crc = crc32.Update(crc, castagnoli, b[40:40+r.vlen])
	}
	if crc != le.Uint32(b[12:]) {
		return r, false
	}
	copy(r.key[:], b[24:40])
	return r, true
}

// Loc packs where a live record is and its key length. Inline records:
// (region+1)<<44 | (klen-1)<<40 | (offset/16)<<18 | size/16. Extent records
// (bit 63 set): 1<<63 | (region+1)<<44 | (klen-1)<<40 | (extent/4096)<<22 |
// value length. 0 means empty. Limits: 2^19-2 regions, 64 MiB regions,
// 4 MiB records, keys 1..16 bytes.
type Loc uint64

const (
	maxRegions = 1<<19 - 2
	locExt     = Loc(1) << 63
)

func mkLoc(region, klen, off, size int) Loc {
	return Loc(uint64(region+1)<<44 | uint64(klen-1)<<40 | uint64(off>>4)<<18 | uint64(size>>4))
}

func mkExtLoc(region, klen, ext, vlen int) Loc {
	return locExt | Loc(uint64(region+1)<<44|uint64(klen-1)<<40|uint64(ext/blockBytes)<<22|uint64(vlen))
}

func (l Loc) Region() int { return int(l>>44&(1<<19-1)) - 1 }
func (l Loc) KLen() int   { return int(l>>40&0xf) + 1 }
func (l Loc) Ext() bool   { return l&locExt != 0 }

// off is the inline record's offset (inline locs only).
func (l Loc) Off() int { return int(l>>18&(1<<22-1)) << 4 }

// extOff and vlen describe an extent Loc.
func (l Loc) ExtOff() int { return int(l>>22&(1<<18-1)) * blockBytes }
func (l Loc) VLen() int   { return int(l & (1<<22 - 1)) }

// size is the region space the record holds (live-byte accounting): the
// inline record, or its 48-byte header plus its extent blocks.
func (l Loc) Size() int {
	if l.Ext() {
		return extRecBytes + extBytes(l.VLen())
	}
	return int(l&(1<<18-1)) << 4
}

// walkRegion calls fn for each valid record of a region image. A zero
// magic is padding: the walk continues at the next block. The walk stops
// where the extents of the records seen so far begin. It returns where
// appending may resume: the offset of the first invalid record (torn tail or
// older data; torn = true), else the block end after the last valid record;
// and low, the lowest extent of a valid record (len(mem) if none): blocks
// from low up are never reused before the region is.
func walkRegion(mem []byte, seq uint64, maxValue int, fn func(off int, r *rec)) (end, low int, torn bool) {
	off, last := regionHdr, regionHdr
	low = len(mem)
	var r rec // fn takes its address: one for the walk, not one a record
	for off+recHdrBytes <= low {
		if mem[off] == 0 && mem[off+1] == 0 && mem[off+2] == 0 && mem[off+3] == 0 {
			next := alignUp(off + 1)
			if next == off {
				next += blockBytes
			}
			off = next
			continue
		}
		var ok bool
		if r, ok = parseRecord(mem, off, seq, maxValue, low); !ok {
			return off, low, true
		}
		if r.kind == kindExtent {
			low = r.ext
		}
		fn(off, &r)
		off += r.Size()
		last = off
	}
	return min(alignUp(last), low), low, false
}

package emu

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
//	0 u64 magic "CEMU_SB1"   8 u32 version (1)   12 u32 block bytes (4096)
//	16 u64 region bytes      24 u64 regions      32 u64 store id (random at format)
//	40 u32 clean (1 = closed cleanly, checkpoint valid)  44 u32 max value bytes
//	48 u64 clean generation (matches the checkpoint)     56 u32 CRC32C of 0..56
//
// Region header (first 64 bytes of a region): u32 magic "TCRG", u32 version,
// u64 seq (unique, increasing per region incarnation), u32 CRC32C of 0..16.
//
// Record (at 16-byte aligned offsets from 64):
//
//	0 u32 magic "TCR1"  4 u8 kind (1 store, 2 delete)  5 u8 key length  6 u16 0
//	8 u32 value length  12 u32 CRC32C of bytes 0..12 ‖ 16..40+vlen
//	16 u64 region seq   24 [16]byte key (zero padded)  40 value
//
// A record occupies align16(40+vlen) bytes. A zero magic means padding: the
// scan skips to the next 4096-byte block (Flush pads the open region to a
// block boundary so that a durable block is never written again).
const (
	sbMagic       = 0x3142535f554d4543 // bytes "CEMU_SB1"
	sbVersion     = 1
	regionMagic   = 0x47524354 // "TCRG"
	regionVersion = 1
	regionHdr     = 64
	recMagic      = 0x31524354 // "TCR1"
	recHdrBytes   = 40
	kindStore     = 1
	kindDelete    = 2
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type superblock struct {
	regionBytes, regions, storeID uint64
	clean                         bool
	maxValue                      uint32
	cleanGen                      uint64
}

func (s *superblock) put(b []byte) {
	le := binary.LittleEndian
	clear(b[:blockBytes])
	le.PutUint64(b[0:], sbMagic)
	le.PutUint32(b[8:], sbVersion)
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
	if v := le.Uint32(b[8:]); v != sbVersion || le.Uint32(b[12:]) != blockBytes {
		return s, true, fmt.Errorf("%w: superblock version %d block %d, want %d/%d", ErrFormat, v, le.Uint32(b[12:]), sbVersion, blockBytes)
	}
	s = superblock{regionBytes: le.Uint64(b[16:]), regions: le.Uint64(b[24:]), storeID: le.Uint64(b[32:]),
		clean: le.Uint32(b[40:]) == 1, maxValue: le.Uint32(b[44:]), cleanGen: le.Uint64(b[48:])}
	return s, true, nil
}

func putRegionHdr(b []byte, seq uint64) {
	le := binary.LittleEndian
	clear(b[:regionHdr])
	le.PutUint32(b[0:], regionMagic)
	le.PutUint32(b[4:], regionVersion)
	le.PutUint64(b[8:], seq)
	le.PutUint32(b[16:], crc32.Checksum(b[:16], castagnoli))
}

// regionSeq returns the seq of a region header, 0 if it is not one.
func regionSeq(b []byte) uint64 {
	le := binary.LittleEndian
	if le.Uint32(b) != regionMagic || le.Uint32(b[4:]) != regionVersion || crc32.Checksum(b[:16], castagnoli) != le.Uint32(b[16:]) {
		return 0
	}
	return le.Uint64(b[8:])
}

func recSize(vlen int) int { return (recHdrBytes + vlen + 15) &^ 15 }

// putRecord writes a record at b (len ≥ recSize(len(value))).
func putRecord(b []byte, kind uint8, seq uint64, key []byte, value []byte) {
	le := binary.LittleEndian
	le.PutUint32(b[0:], recMagic)
	b[4], b[5] = kind, uint8(len(key))
	le.PutUint16(b[6:], 0)
	le.PutUint32(b[8:], uint32(len(value)))
	le.PutUint64(b[16:], seq)
	clear(b[24:40])
	copy(b[24:40], key)
	n := copy(b[40:], value)
	clear(b[40+n : recSize(len(value))])
	crc := crc32.Update(crc32.Checksum(b[:12], castagnoli), castagnoli, b[16:40+len(value)])
	le.PutUint32(b[12:], crc)
}

// rec is a parsed record header.
type rec struct {
	kind uint8
	klen int
	vlen int
	seq  uint64
	key  [16]byte
}

// parseRecord checks the record at b: magic, sizes, seq and CRC. It
// returns ok=false for anything else (padding is checked by the caller).
func parseRecord(b []byte, wantSeq uint64, maxValue int) (r rec, ok bool) {
	le := binary.LittleEndian
	if len(b) < recHdrBytes || le.Uint32(b) != recMagic {
		return r, false
	}
	r.kind, r.klen, r.vlen, r.seq = b[4], int(b[5]), int(le.Uint32(b[8:])), le.Uint64(b[16:])
	if (r.kind != kindStore && r.kind != kindDelete) || r.klen < 1 || r.klen > 16 || r.vlen > maxValue ||
		recHdrBytes+r.vlen > len(b) || r.seq != wantSeq {
		return r, false
	}
	crc := crc32.Update(crc32.Checksum(b[:12], castagnoli), castagnoli, b[16:40+r.vlen])
	if crc != le.Uint32(b[12:]) {
		return r, false
	}
	copy(r.key[:], b[24:40])
	return r, true
}

// loc packs where a live record is and its key length:
// (region+1)<<44 | (klen-1)<<40 | (offset/16)<<18 | size/16. 0 means empty.
// Limits: 2^20-2 regions, 64 MiB regions, 4 MiB records, keys 1..16 bytes.
type loc uint64

const maxRegions = 1<<20 - 2

func mkLoc(region, klen, off, size int) loc {
	return loc(uint64(region+1)<<44 | uint64(klen-1)<<40 | uint64(off>>4)<<18 | uint64(size>>4))
}
func (l loc) region() int { return int(l>>44) - 1 }
func (l loc) klen() int   { return int(l>>40&0xf) + 1 }
func (l loc) off() int    { return int(l>>18&(1<<22-1)) << 4 }
func (l loc) size() int   { return int(l&(1<<18-1)) << 4 }

package nvmekv

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// Record header (what KV stores under a user key's device key), little-endian:
//
//	off size field
//	0   4    magic "TKV1" (0x31564b54)
//	4   1    format version (1)
//	5   1    chunk flags: bit 0 the chunk set (0 or 1: which device keys
//	         hold the chunks, ChunkKeyIn); bit 1 set: the chunks' device
//	         keys are 15 bytes (the first 15 bytes of ChunkKeyIn), so every
//	         16-byte device key holds a header (K16); clear: 16 bytes (a
//	         record written before that format)
//	6   2    user key length
//	8   4    flags (Meta.Flags)
//	12  4    number of chunks (0 = value inline after the key)
//	16  8    value length
//	24  8    expiry (unix ns, 0 = none)
//	32  8    version (Meta.Version)
//	40  8    put ID (unique per Put; every chunk repeats it)
//	48  4    CRC32C (Castagnoli) of header (this field and the next 0) ‖
//	         key ‖ whole value
//	52  4    a pieced record's table CRC32C: of header (both CRC fields 0)
//	         ‖ key ‖ piece table; 0 otherwise (bytes 52-55 were reserved,
//	         0, before pieces)
//	56  …    user key, then the inline value, or a pieced record's piece
//	         table (pieces.go: 12 bytes a piece)
//
// Byte 5 bit 2 set: the record is pieced (K20): its chunks are the pieces
// the writer cut the value into, each with its length, CRC32C and meta in
// the table.
//
// Chunk value: put ID u64, chunk index u32, reserved u32, then payload.
const (
	recordMagic    = 0x31564b54
	recordVersion  = 1
	HeaderBytes    = 56
	ChunkHdrBytes  = 16
	recordCRCOff   = 48
	tableCRCOff    = 52
	maxUserKeyLen  = 1<<16 - 1
	maxChunksLimit = 1<<32 - 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// header is a decoded record header.
type header struct {
	keyLen   int
	flags    uint32
	chunks   uint32
	valueLen uint64
	expiry   int64
	version  uint64
	putID    uint64
	crc      uint32
	set      uint8 // chunk set: 0 or 1 (ChunkKeyIn)
	short    bool  // the chunks' device keys are 15 bytes (byte 5 bit 1, K16)
	pieced   bool  // the chunks are pieces, the table after the key (byte 5 bit 2, K20)
	tableCRC uint32
}

// Header byte 5: the chunk set and the chunk-key flag.
const (
	chunkSetBit   = 1
	shortChunkBit = 2
	piecedBit     = 4
	// ChunkKeyBytes is the length of the device key of a chunk of a
	// record written now (K16): one less than a header's, so a 16-byte
	// device key always holds a header.
	ChunkKeyBytes = 15
)

// chunkKey is the device key of chunk i of the record whose header,
// hd, is at device key h: ChunkKeyIn in hd's set, its first 15 bytes
// when hd says so (K16).
func chunkKey(h [16]byte, hd *header, i uint32) []byte {
	return chunkKeyOf(h, hd.set, hd.short, i)
}

// chunkKeyOf is chunkKey of a record in chunk set set whose chunk keys
// are short (15 bytes) or not.
func chunkKeyOf(h [16]byte, set uint8, short bool, i uint32) []byte {
	ck := ChunkKeyIn(h, set, i)
	if short {
		return ck[:ChunkKeyBytes]
	}
	return ck[:]
}

// putHeader writes the header, key and inline value into b (which must be
// HeaderBytes+len(key)+len(inline) long) and the CRC over header ‖ key ‖ value.
func putHeader(b []byte, h *header, key, value []byte, inline bool) {
	le := binary.LittleEndian
	le.PutUint32(b[0:], recordMagic)
	b[4], b[5] = recordVersion, h.set&chunkSetBit|pick(h.short, uint8(shortChunkBit), 0)|pick(h.pieced, uint8(piecedBit), 0)
	le.PutUint16(b[6:], uint16(len(key)))
	le.PutUint32(b[8:], h.flags)
	le.PutUint32(b[12:], h.chunks)
	le.PutUint64(b[16:], h.valueLen)
	le.PutUint64(b[24:], uint64(h.expiry))
	le.PutUint64(b[32:], h.version)
	le.PutUint64(b[40:], h.putID)
	le.PutUint32(b[48:], 0)
	le.PutUint32(b[52:], 0)
	copy(b[HeaderBytes:], key)
	if inline {
		copy(b[HeaderBytes+len(key):], value)
	}
	crc := crc32.Update(0, castagnoli, b[:HeaderBytes+len(key)])
	crc = crcSteps(crc, value)
	le.PutUint32(b[recordCRCOff:], crc)
}

// parseHeader decodes a header from the first bytes of a retrieved record
// (the caller checks that the key fits: see keyMatches).
func parseHeader(b []byte) (header, error) {
	if len(b) < HeaderBytes {
		return header{}, fmt.Errorf("%w: record is %d bytes, shorter than its %d-byte header", ErrUnrecovered, len(b), HeaderBytes)
	}
	le := binary.LittleEndian
	if m := le.Uint32(b); m != recordMagic || b[4] != recordVersion {
		return header{}, fmt.Errorf("%w: record has magic %#x version %d, want %#x version %d", ErrUnrecovered, m, b[4], recordMagic, recordVersion)
	}
	h := header{
		keyLen: int(le.Uint16(b[6:])), flags: le.Uint32(b[8:]), chunks: le.Uint32(b[12:]),
		valueLen: le.Uint64(b[16:]), expiry: int64(le.Uint64(b[24:])), version: le.Uint64(b[32:]),
		putID: le.Uint64(b[40:]), crc: le.Uint32(b[48:]), set: b[5] & chunkSetBit, short: b[5]&shortChunkBit != 0,
		pieced: b[5]&piecedBit != 0, tableCRC: le.Uint32(b[52:]),
	}
	if !h.pieced && h.tableCRC != 0 || h.pieced && h.chunks == 0 {
		return header{}, fmt.Errorf("%w: record header bytes 52-55 %#x, pieced %v, %d chunks", ErrUnrecovered, h.tableCRC, h.pieced, h.chunks)
	}
	return h, nil
}

// headerCRC starts the record CRC: header (CRC fields zeroed) ‖ key.
func headerCRC(b []byte, keyLen int) uint32 {
	var hb [HeaderBytes]byte
	copy(hb[:], b[:HeaderBytes])
	binary.LittleEndian.PutUint32(hb[recordCRCOff:], 0)
	binary.LittleEndian.PutUint32(hb[tableCRCOff:], 0)
	crc := crc32.Update(0, castagnoli, hb[:])
	return crc32.Update(crc, castagnoli, b[HeaderBytes:HeaderBytes+keyLen])
}

func putChunkHdr(b []byte, putID uint64, i uint32) {
	le := binary.LittleEndian
	le.PutUint64(b[0:], putID)
	le.PutUint32(b[8:], i)
	le.PutUint32(b[12:], 0)
}

func parseChunkHdr(b []byte) (putID uint64, i uint32, ok bool) {
	if len(b) < ChunkHdrBytes {
		return 0, 0, false
	}
	le := binary.LittleEndian
	return le.Uint64(b), le.Uint32(b[8:]), true
}

// keyMatches reports whether record b (header h) holds user key key; a
// record too short for its own key is an error.
func keyMatches(b []byte, h *header, key []byte) (bool, error) {
	if h.keyLen != len(key) {
		return false, nil
	}
	if len(b) < HeaderBytes+h.keyLen {
		return false, fmt.Errorf("%w: record of %d bytes cannot hold its %d-byte key", ErrUnrecovered, len(b), h.keyLen)
	}
	return string(b[HeaderBytes:HeaderBytes+h.keyLen]) == string(key), nil
}

package remote

import (
	"crypto/rand"
	"encoding/binary"
	"hash/crc32"
)

// A value is stored under its data key as a record: a header, then the
// value, or the header alone when the value is chunked (larger than
// Config.ChunkBytes): its pieces then live under chunk keys named by the
// record's put ID, each a chunk header and a piece. The record names no
// key: the data key does (keys.go).
//
// Header, little endian (HeaderBytes):
//
//	 0  4  magic "TCRM"
//	 4  1  format version (1)
//	 5  1  bit 0: chunked
//	 6  2  0
//	 8  4  the writer's flags (the tier's kind of the value)
//	12  4  CRC-32C of the value
//	16  8  value length
//	24  8  0 (the expiry is the key's own, PXAT: EXPIRE changes it alone)
//	32 16  put ID: random, one per put
//	48  4  chunk count (0: inline)
//	52  4  chunk size (the last chunk may be shorter)
//	56  4  CRC-32C of bytes 0..55
//	60  4  0
//
// Chunk record: magic "TCRP", the put ID, the chunk's index (4 bytes),
// then the piece (ChunkHeaderBytes before it).
const (
	HeaderBytes      = 64
	ChunkHeaderBytes = 24
	recordMagic      = "TCRM"
	chunkMagic       = "TCRP"
	recordVersion    = 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// header is a decoded record header.
type header struct {
	chunked    bool
	flags      uint32
	crc        uint32
	length     uint64
	putID      [16]byte
	chunks     uint32
	chunkBytes uint32
}

func newPutID() (id [16]byte) {
	_, _ = rand.Read(id[:]) // crypto/rand.Read never fails (Go 1.24+)
	return id
}

// encode writes h into b[:HeaderBytes].
func (h *header) encode(b []byte) {
	_ = b[HeaderBytes-1]
	copy(b, recordMagic)
	b[4] = recordVersion
	b[5] = 0
	if h.chunked {
		b[5] = 1
	}
	b[6], b[7] = 0, 0
	binary.LittleEndian.PutUint32(b[8:], h.flags)
	binary.LittleEndian.PutUint32(b[12:], h.crc)
	binary.LittleEndian.PutUint64(b[16:], h.length)
	binary.LittleEndian.PutUint64(b[24:], 0)
	copy(b[32:48], h.putID[:])
	binary.LittleEndian.PutUint32(b[48:], h.chunks)
	binary.LittleEndian.PutUint32(b[52:], h.chunkBytes)
	binary.LittleEndian.PutUint32(b[56:], headerCRC(b))
	binary.LittleEndian.PutUint32(b[60:], 0)
}

func headerCRC(b []byte) uint32 { return crc32.Checksum(b[:56], castagnoli) }

// decodeHeader reads the header of record b; ok is false for bytes that
// are not one of ours (a foreign value under our prefix, a torn write of
// another format).
func decodeHeader(b []byte) (h header, ok bool) {
	h, ok = parseHeader(b)
	if ok && !h.chunked && uint64(len(b)-HeaderBytes) != h.length {
		return h, false
	}
	return h, ok
}

// parseHeader reads a header from b's first HeaderBytes alone (the rest
// of the record may be absent: a GETRANGE of the header).
func parseHeader(b []byte) (h header, ok bool) {
	if len(b) < HeaderBytes || string(b[:4]) != recordMagic || b[4] != recordVersion || b[5]&^1 != 0 ||
		binary.LittleEndian.Uint32(b[56:]) != headerCRC(b) {
		return h, false
	}
	h.chunked = b[5]&1 != 0
	h.flags = binary.LittleEndian.Uint32(b[8:])
	h.crc = binary.LittleEndian.Uint32(b[12:])
	h.length = binary.LittleEndian.Uint64(b[16:])
	copy(h.putID[:], b[32:48])
	h.chunks = binary.LittleEndian.Uint32(b[48:])
	h.chunkBytes = binary.LittleEndian.Uint32(b[52:])
	switch {
	case !h.chunked && h.chunks != 0:
		return h, false
	case h.chunked && (h.chunks == 0 || h.chunkBytes == 0 || len(b) != HeaderBytes ||
		(h.length+uint64(h.chunkBytes)-1)/uint64(h.chunkBytes) != uint64(h.chunks)):
		return h, false
	}
	return h, true
}

// inlineRecord is the record of a value stored whole under its data key.
func inlineRecord(value []byte, flags uint32) []byte {
	b := make([]byte, HeaderBytes+len(value))
	h := header{flags: flags, crc: crc32.Checksum(value, castagnoli), length: uint64(len(value)), putID: newPutID()}
	h.encode(b)
	copy(b[HeaderBytes:], value)
	return b
}

// chunkRecord is piece i of a chunked put.
func chunkRecord(putID [16]byte, i uint32, piece []byte) []byte {
	b := make([]byte, ChunkHeaderBytes+len(piece))
	copy(b, chunkMagic)
	copy(b[4:20], putID[:])
	binary.LittleEndian.PutUint32(b[20:], i)
	copy(b[ChunkHeaderBytes:], piece)
	return b
}

// chunkPiece checks that b is piece i of put putID and returns the piece.
func chunkPiece(b []byte, putID [16]byte, i uint32) ([]byte, bool) {
	if len(b) < ChunkHeaderBytes || string(b[:4]) != chunkMagic || [16]byte(b[4:20]) != putID ||
		binary.LittleEndian.Uint32(b[20:]) != i {
		return nil, false
	}
	return b[ChunkHeaderBytes:], true
}

package nvmekv

import (
	"encoding/binary"

	"github.com/zeebo/xxh3"
)

// Hasher maps a user key to its 16-byte device key. It must be
// deterministic across processes (the device key is persistent). Tests
// inject weak hashers to force collisions.
type Hasher func(key []byte) [16]byte

// DefaultHasher is XXH3-128 of the key, big-endian (Hi then Lo).
func DefaultHasher(key []byte) [16]byte { return xxh3.Hash128(key).Bytes() }

// ChunkKey is the device key of chunk i of the record whose header is at
// device key h: XXH3-128 over h ‖ "chunk" ‖ u32 LE i. It depends only on
// h, so two user keys that collide on h also share chunk keys (the later
// Put wins and the record header's put ID exposes stale chunks).
func ChunkKey(h [16]byte, i uint32) [16]byte { return ChunkKeyIn(h, 0, i) }

// ChunkKeyIn is the device key of chunk i in chunk set set (0 or 1) of
// the record whose header is at h. Set 0 is ChunkKey; set 1 hashes one
// more byte (1). A chunked Put writes its chunks in the set the record it
// replaces does not use, so until its header is written the old header's
// chunks are untouched (K11). A record written now keeps its chunks under
// the first ChunkKeyBytes (15) bytes of it, so that no chunk has a
// header's 16-byte device key (K16); one written before, under all 16.
func ChunkKeyIn(h [16]byte, set uint8, i uint32) [16]byte {
	if set != 0 {
		var b [16 + 5 + 4 + 1]byte
		copy(b[:], h[:])
		copy(b[16:], "chunk")
		binary.LittleEndian.PutUint32(b[21:], i)
		b[25] = 1
		return xxh3.Hash128(b[:]).Bytes()
	}
	var b [16 + 5 + 4]byte
	copy(b[:], h[:])
	copy(b[16:], "chunk")
	binary.LittleEndian.PutUint32(b[21:], i)
	return xxh3.Hash128(b[:]).Bytes()
}

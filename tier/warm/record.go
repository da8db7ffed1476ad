package warm

import "encoding/binary"

// Record layout in a segment (all little-endian, 8-byte aligned):
//
//	off  size  field
//	0    8     hash     xxh3 of the key (never 0), to find the index entry on eviction
//	8    8     expiry   unix ns, 0 = none
//	16   8     version
//	24   4     value length
//	28   4     key length (low 24 bits) | flags (high 8 bits), read and
//	           updated atomically: Get sets flagHit under a read lock
//	32   k     key
//	32+k v     value, then padding to a multiple of 8
const (
	hdrSize    = 32
	offHash    = 0
	offExpiry  = 8
	offVersion = 16
	offValLen  = 24
	offKeyWord = 28

	keyLenMask = 1<<24 - 1
	flagHit    = 1 << 24 // read since written (second chance on eviction)

	// MaxKeyLen is the longest key the warm tier stores.
	MaxKeyLen = keyLenMask
)

// recSize is the aligned size of a record.
func recSize(keyLen, valLen int) int {
	return (hdrSize + keyLen + valLen + 7) &^ 7
}

// writeRecord writes a record at b[0:] (b has room for recSize bytes).
func writeRecord(b []byte, h uint64, key, value []byte, m Meta) {
	le := binary.LittleEndian
	le.PutUint64(b[offHash:], h)
	le.PutUint64(b[offExpiry:], uint64(m.Expiry))
	le.PutUint64(b[offVersion:], m.Version)
	le.PutUint32(b[offValLen:], uint32(len(value)))
	le.PutUint32(b[offKeyWord:], uint32(len(key)))
	copy(b[hdrSize:], key)
	copy(b[hdrSize+len(key):], value)
}

// recView is a decoded record header; key/value slices alias the arena.
type recView struct {
	hash    uint64
	meta    Meta
	keyWord uint32
	key     []byte
	value   []byte
}

func (r *recView) size() int { return recSize(len(r.key), len(r.value)) }

// readRecord decodes the record at b[0:]; keyWord is passed in because the
// caller loads it atomically.
func readRecord(b []byte, keyWord uint32) recView {
	le := binary.LittleEndian
	kl := int(keyWord & keyLenMask)
	vl := int(le.Uint32(b[offValLen:]))
	return recView{
		hash:    le.Uint64(b[offHash:]),
		meta:    Meta{Expiry: int64(le.Uint64(b[offExpiry:])), Version: le.Uint64(b[offVersion:])},
		keyWord: keyWord,
		key:     b[hdrSize : hdrSize+kl : hdrSize+kl],
		value:   b[hdrSize+kl : hdrSize+kl+vl : hdrSize+kl+vl],
	}
}

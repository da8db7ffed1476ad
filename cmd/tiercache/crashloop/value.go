package crashloop

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"

	"github.com/zeebo/xxh3"
)

// crashValue is the value of SET number seq of key: size bytes derived
// from (key, seq), so a read names the SET it came from (invariant 4).
func crashValue(key string, seq uint64, size int) []byte {
	v := make([]byte, size)
	var pat [64]byte
	h := xxh3.HashString128(fmt.Sprint(key, "/", seq))
	for i := 0; i < 64; i += 16 {
		binary.LittleEndian.PutUint64(pat[i:], h.Lo+uint64(i))
		binary.LittleEndian.PutUint64(pat[i+8:], h.Hi^uint64(i))
	}
	for i := 0; i < size; i += 64 {
		copy(v[i:], pat[:])
	}
	if size >= 8 {
		binary.LittleEndian.PutUint64(v, seq)
	}
	return v
}

// crashSize draws a value size from 1 B to maxBytes, mostly small.
func crashSize(r *rand.Rand, maxBytes int) int {
	switch p := r.IntN(1000); {
	case p < 750 || maxBytes <= 1024:
		return 1 + r.IntN(min(1024, maxBytes))
	case p < 980 || maxBytes <= 64<<10:
		return 1024 + r.IntN(min(64<<10, maxBytes-1024))
	default:
		return 64<<10 + r.IntN(maxBytes-64<<10+1)
	}
}

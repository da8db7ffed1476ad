package value

import "encoding/binary"

// Uvarint reads a uvarint as binary.Uvarint does, and refuses (w = 0) one
// written with more bytes than it needs ("\x80\x00" for 0), so a record
// that decodes encodes back to the same bytes (V4).
func Uvarint(b []byte) (u uint64, w int) {
	u, w = binary.Uvarint(b)
	if w > 0 && w != UvarintLen64(u) {
		return 0, 0
	}
	return u, w
}

// UvarintLen64 is the length of u as a uvarint.
func UvarintLen64(u uint64) int {
	s := 1
	for u >= 0x80 {
		u >>= 7
		s++
	}
	return s
}

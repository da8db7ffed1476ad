package nvmekv

import (
	"encoding/binary"
	"fmt"
)

// The List host buffer (KV Command Set 1.0, §3.2.2.2, Figures 15–16):
// u32 LE number of keys returned, then per key: u16 LE length L, L bytes,
// and "pad necessary, if any to end the data structure on a 4 byte
// boundary". PutList pads the key to a multiple of 4 ((4-L%4)%4), as
// AirMettle's QEMU nvme_build_kv_list_response does; the parser accepts
// that and padding of the whole entry.

// ListEntryBytes is the size of one List entry for a key of n bytes.
func ListEntryBytes(n int) int { return 2 + n + (4-n%4)%4 }

// PutList writes keys into buf in the List format and returns how many fit
// (entries that do not fit are omitted).
func PutList(buf []byte, keys [][]byte) int {
	if len(buf) < 4 {
		return 0
	}
	off, n := 4, 0
	for _, k := range keys {
		e := ListEntryBytes(len(k))
		if off+e > len(buf) {
			break
		}
		binary.LittleEndian.PutUint16(buf[off:], uint16(len(k)))
		copy(buf[off+2:], k)
		clear(buf[off+2+len(k) : off+e])
		off += e
		n++
	}
	binary.LittleEndian.PutUint32(buf, uint32(n))
	return n
}

// ParseList parses a List host buffer. The returned keys alias buf. It
// first assumes key-only padding; if the entries do not parse (a length
// outside 1..16 or past the end) it retries with whole-entry padding to 4.
// A buffer that parses neither way returns ErrShortBuffer and the keys that
// parsed under the first layout.
func ParseList(buf []byte) ([][]byte, error) {
	if len(buf) < 4 {
		return nil, fmt.Errorf("%w: List buffer is %d bytes, need at least 4", ErrShortBuffer, len(buf))
	}
	n := int(binary.LittleEndian.Uint32(buf))
	keys, err := parseListAs(buf, n, func(l int) int { return 2 + l + (4-l%4)%4 })
	if err == nil {
		return keys, nil
	}
	if alt, err2 := parseListAs(buf, n, func(l int) int { return (2 + l + 3) &^ 3 }); err2 == nil {
		return alt, nil
	}
	return keys, err
}

func parseListAs(buf []byte, n int, entry func(int) int) ([][]byte, error) {
	max := (len(buf) - 4) / 3 // smallest entry is 2+1 bytes
	if n > max {
		return nil, fmt.Errorf("%w: List buffer claims %d keys but %d bytes hold at most %d", ErrShortBuffer, n, len(buf), max)
	}
	keys := make([][]byte, 0, n)
	off := 4
	for i := 0; i < n; i++ {
		if off+2 > len(buf) {
			return keys, fmt.Errorf("%w: List entry %d of %d starts past the %d-byte buffer", ErrShortBuffer, i, n, len(buf))
		}
		l := int(binary.LittleEndian.Uint16(buf[off:]))
		if l < 1 || l > MaxKeyLen || off+2+l > len(buf) {
			return keys, fmt.Errorf("%w: List entry %d of %d at byte %d has key length %d", ErrShortBuffer, i, n, off, l)
		}
		keys = append(keys, buf[off+2:off+2+l])
		off += entry(l)
	}
	return keys, nil
}

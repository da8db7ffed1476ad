package value

import (
	"encoding/binary"
	"strconv"
)

// listpack appends the elements of lp, a listpack (Redis 7.0
// listpack.c), to items: a header of the total size (32 bits) and the
// element count (16 bits), little endian, the entries, then 0xFF. An entry
// is an encoding byte with its data, then its length backwards in 1 to 5
// bytes. The header's size must be lp's and the last byte 0xFF
// (lpValidateIntegrity without deep checks); unlike Redis without
// sanitize-dump-payload, every entry is checked to lie within lp and end
// exactly at the 0xFF.
func (r *rdbReader) listpack(items [][]byte, lp []byte) ([][]byte, error) {
	if len(lp) < 7 || binary.LittleEndian.Uint32(lp) != uint32(len(lp)) || lp[len(lp)-1] != 0xff {
		return nil, ErrDumpFormat
	}
	return r.entries(items, lp[6:len(lp)-1], listpackEntry)
}

// entries appends the elements of b, a listpack's or ziplist's entries
// (without header and end), each read by entry, to items, counted
// against the limits.
func (r *rdbReader) entries(items [][]byte, b []byte, entry func(b []byte) ([]byte, int, error)) ([][]byte, error) {
	for off := 0; off < len(b); {
		it, n, err := entry(b[off:])
		if err != nil {
			return nil, err
		}
		if err := r.addItems(1); err != nil {
			return nil, err
		}
		if err := r.addBytes(uint64(len(it))); err != nil {
			return nil, err
		}
		items = append(items, it)
		off += n
	}
	return items, nil
}

// listpackEntry reads the entry at the start of b (listpack.c's
// LP_ENCODING_* layouts): its element (an integer written in decimal) and
// how many bytes it takes with its back length.
func listpackEntry(b []byte) (it []byte, n int, err error) {
	e := b[0]
	var size, strLen int // size: the encoding byte and its data
	var v int64
	isInt := true
	switch {
	case e&0x80 == 0: // 7-bit unsigned integer
		v, size = int64(e&0x7f), 1
	case e&0xc0 == 0x80: // string of up to 63 bytes
		isInt, size, strLen = false, 1, int(e&0x3f)
	case e&0xe0 == 0xc0: // 13-bit signed integer
		if len(b) < 2 {
			return nil, 0, ErrDumpFormat
		}
		v, size = signed(uint64(e&0x1f)<<8|uint64(b[1]), 13), 2
	case e&0xf0 == 0xe0: // string of up to 4095 bytes
		if len(b) < 2 {
			return nil, 0, ErrDumpFormat
		}
		isInt, size, strLen = false, 2, int(e&0x0f)<<8|int(b[1])
	case e == 0xf0: // string of a 32-bit length
		if len(b) < 5 {
			return nil, 0, ErrDumpFormat
		}
		l := binary.LittleEndian.Uint32(b[1:])
		if uint64(l) > uint64(len(b)) {
			return nil, 0, ErrDumpFormat
		}
		isInt, size, strLen = false, 5, int(l)
	case e >= 0xf1 && e <= 0xf4: // 16, 24, 32 or 64-bit signed integer
		w := [...]int{2, 3, 4, 8}[e-0xf1]
		if len(b) < 1+w {
			return nil, 0, ErrDumpFormat
		}
		var u uint64
		for i := w; i >= 1; i-- {
			u = u<<8 | uint64(b[i])
		}
		v, size = signed(u, uint(8*w)), 1+w
	default: // 0xf5 to 0xfe are no encoding, 0xff ends the listpack
		return nil, 0, ErrDumpFormat
	}
	size += strLen
	n = size + backLenSize(size)
	if n > len(b) {
		return nil, 0, ErrDumpFormat
	}
	if isInt {
		return strconv.AppendInt(nil, v, 10), n, nil
	}
	return b[size-strLen : size : size], n, nil
}

// signed is u, an integer of bits bits in two's complement.
func signed(u uint64, bits uint) int64 {
	if bits < 64 && u >= 1<<(bits-1) {
		return int64(u) - 1<<bits
	}
	return int64(u)
}

// backLenSize is how many bytes an entry of size bytes writes its length
// backwards in (lpEncodeBacklen: 7 bits a byte).
func backLenSize(size int) int {
	switch {
	case size < 1<<7:
		return 1
	case size < 1<<14:
		return 2
	case size < 1<<21:
		return 3
	case size < 1<<28:
		return 4
	}
	return 5
}

// lzfDecompress appends to dst what c decompresses to (liblzf's format,
// lzf_d.c): a control byte under 32 is a run of that many plus one
// literal bytes; else its top 3 bits (7: plus the next byte) plus 2 is
// the length of a copy from as far back as its low 5 bits and the next
// byte, plus one. ok is false for a copy from before the start, a run past
// c's end, or output past cap(dst), which the caller sizes to the length
// it expects.
func lzfDecompress(dst, c []byte) (out []byte, ok bool) {
	for i := 0; i < len(c); {
		ctrl := int(c[i])
		i++
		if ctrl < 32 {
			n := ctrl + 1
			if n > len(c)-i || n > cap(dst)-len(dst) {
				return dst, false
			}
			dst = append(dst, c[i:i+n]...)
			i += n
			continue
		}
		n := ctrl >> 5
		if n == 7 {
			if i >= len(c) {
				return dst, false
			}
			n += int(c[i])
			i++
		}
		if i >= len(c) {
			return dst, false
		}
		back := (ctrl&0x1f)<<8 + int(c[i]) + 1
		i++
		n += 2
		if back > len(dst) || n > cap(dst)-len(dst) {
			return dst, false
		}
		from := len(dst) - back
		for k := range n { // the copy may overlap what it writes
			dst = append(dst, dst[from+k])
		}
	}
	return dst, true
}

package value

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
)

// rdbReader reads an RDB-encoded value from b at off, as rdb.c's loaders
// read it from a payload (Redis 7.0), and counts what it builds against
// lim: items, and bytes (every string's length).
type rdbReader struct {
	b          []byte
	off        int
	lim        DumpLimits
	items, sum int
}

// take is the next n bytes.
func (r *rdbReader) take(n uint64) ([]byte, error) {
	if n > uint64(len(r.b)-r.off) {
		return nil, ErrDumpFormat
	}
	s := r.b[r.off : r.off+int(n) : r.off+int(n)]
	r.off += int(n)
	return s, nil
}

// length reads a length as rdbLoadLenByRef does (rdb.h's RDB_6BITLEN,
// RDB_14BITLEN, RDB_32BITLEN, RDB_64BITLEN); enc: the byte is RDB_ENCVAL,
// and n is its 6-bit special encoding.
func (r *rdbReader) length() (n uint64, enc bool, err error) {
	b, err := r.take(1)
	if err != nil {
		return 0, false, err
	}
	switch b[0] >> 6 {
	case 0:
		return uint64(b[0] & 0x3f), false, nil
	case 1:
		c, err := r.take(1)
		if err != nil {
			return 0, false, err
		}
		return uint64(b[0]&0x3f)<<8 | uint64(c[0]), false, nil
	case 3:
		return uint64(b[0] & 0x3f), true, nil
	}
	switch b[0] {
	case 0x80:
		c, err := r.take(4)
		if err != nil {
			return 0, false, err
		}
		return uint64(binary.BigEndian.Uint32(c)), false, nil
	case 0x81:
		c, err := r.take(8)
		if err != nil {
			return 0, false, err
		}
		return binary.BigEndian.Uint64(c), false, nil
	}
	return 0, false, ErrDumpFormat
}

// count reads an element count of an aggregate whose elements take at
// least one byte each: a count past what the payload holds is bad data, a
// count past lim.MaxItems (after those the value already has) a limit.
func (r *rdbReader) count(per int) (int, error) {
	n, enc, err := r.length()
	switch {
	case err != nil:
		return 0, err
	case enc || n > uint64(len(r.b)-r.off):
		return 0, ErrDumpFormat
	}
	return int(n), r.addItems(int(n) * per)
}

// addItems counts n more items against lim.MaxItems.
func (r *rdbReader) addItems(n int) error {
	r.items += n
	if r.items > r.lim.MaxItems {
		return &DumpLimitError{Items: true, N: r.items, Limit: r.lim.MaxItems}
	}
	return nil
}

// addBytes counts n more bytes against lim.MaxBytes.
func (r *rdbReader) addBytes(n uint64) error {
	if n > uint64(r.lim.MaxBytes-r.sum) {
		return &DumpLimitError{N: r.sum + int(min(n, math.MaxInt32)), Limit: r.lim.MaxBytes}
	}
	r.sum += int(n)
	return nil
}

// The special encodings of a string (rdb.h RDB_ENC_*).
const (
	rdbEncInt8  = 0
	rdbEncInt16 = 1
	rdbEncInt32 = 2
	rdbEncLZF   = 3
)

// str reads a string as rdbGenericLoadStringObject does: plain, an
// integer of 8, 16 or 32 bits (little endian) written in decimal, or LZF
// compressed (its compressed and its real length, then the compressed
// bytes, which must decompress to exactly that length).
func (r *rdbReader) str() ([]byte, error) {
	n, enc, err := r.length()
	if err != nil {
		return nil, err
	}
	if !enc {
		if err := r.addBytes(n); err != nil && n <= uint64(len(r.b)-r.off) {
			return nil, err
		}
		return r.take(n)
	}
	var v int64
	switch n {
	case rdbEncInt8:
		b, err := r.take(1)
		if err != nil {
			return nil, err
		}
		v = int64(int8(b[0]))
	case rdbEncInt16:
		b, err := r.take(2)
		if err != nil {
			return nil, err
		}
		v = int64(int16(binary.LittleEndian.Uint16(b)))
	case rdbEncInt32:
		b, err := r.take(4)
		if err != nil {
			return nil, err
		}
		v = int64(int32(binary.LittleEndian.Uint32(b)))
	case rdbEncLZF:
		return r.lzf()
	default:
		return nil, ErrDumpFormat
	}
	s := strconv.AppendInt(nil, v, 10)
	return s, r.addBytes(uint64(len(s)))
}

// lzf reads an LZF-compressed string (rdbLoadLzfStringObject).
func (r *rdbReader) lzf() ([]byte, error) {
	clen, _, err := r.length()
	if err != nil {
		return nil, err
	}
	ulen, _, err := r.length()
	if err != nil {
		return nil, err
	}
	c, err := r.take(clen)
	if err != nil {
		return nil, err
	}
	if err := r.addBytes(ulen); err != nil {
		return nil, err
	}
	// An LZF back-reference (lzf_d.c: a control byte, a length byte, an
	// offset byte) yields at most 7+255+2 = 264 bytes from 3, a literal
	// run fewer than it takes: a length past 88 times the compressed
	// bytes is a lie, refused before its memory is taken.
	if ulen > 88*uint64(len(c)) {
		return nil, ErrDumpFormat
	}
	out, ok := lzfDecompress(make([]byte, 0, ulen), c)
	if !ok || uint64(len(out)) != ulen {
		return nil, ErrDumpFormat
	}
	return out, nil
}

// plain reads a count of per strings each (a list's or a set's elements,
// a hash's field and value pairs) then the strings.
func (r *rdbReader) plain(d *Dumped, per int) error {
	n, err := r.count(per)
	if err != nil {
		return err
	}
	d.Items = make([][]byte, 0, min(n*per, len(r.b)-r.off))
	for range n * per {
		s, err := r.str()
		if err != nil {
			return err
		}
		d.Items = append(d.Items, s)
	}
	return nil
}

// zset reads a count then members and scores: binary doubles (RDB_TYPE_ZSET_2)
// or strings (rdbLoadDoubleValue: a length byte, 253 NaN, 254 +inf, 255
// -inf); a NaN score is bad data ("Zset with NAN score detected").
func (r *rdbReader) zset(d *Dumped, binaryScores bool) error {
	n, err := r.count(1)
	if err != nil {
		return err
	}
	d.Items = make([][]byte, 0, min(n, len(r.b)-r.off))
	d.Scores = make([]float64, 0, min(n, len(r.b)-r.off))
	for range n {
		m, err := r.str()
		if err != nil {
			return err
		}
		var f float64
		if binaryScores {
			b, err := r.take(8)
			if err != nil {
				return err
			}
			f = math.Float64frombits(binary.LittleEndian.Uint64(b))
		} else if f, err = r.stringDouble(); err != nil {
			return err
		}
		if math.IsNaN(f) {
			return ErrDumpFormat
		}
		d.Items, d.Scores = append(d.Items, m), append(d.Scores, f)
	}
	return nil
}

// stringDouble reads a score of RDB_TYPE_ZSET (rdbLoadDoubleValue).
func (r *rdbReader) stringDouble() (float64, error) {
	b, err := r.take(1)
	if err != nil {
		return 0, err
	}
	switch b[0] {
	case 253:
		return math.NaN(), nil
	case 254:
		return math.Inf(1), nil
	case 255:
		return math.Inf(-1), nil
	}
	s, err := r.take(uint64(b[0]))
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(string(s), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, ErrDumpFormat
	}
	return f, nil
}

// The containers of a quicklist node (quicklist.h QUICKLIST_NODE_CONTAINER_*).
const (
	quicklistPlain  = 1
	quicklistPacked = 2
)

// quicklist reads RDB_TYPE_LIST_QUICKLIST_2: a node count, then each
// node's container and its string: one element (plain) or a listpack of
// elements (packed; an empty one is skipped, as rdbLoadObject does).
func (r *rdbReader) quicklist(d *Dumped) error {
	n, err := r.count(0)
	if err != nil {
		return err
	}
	for range n {
		c, enc, err := r.length()
		switch {
		case err != nil:
			return err
		case enc || c != quicklistPlain && c != quicklistPacked:
			return ErrDumpFormat
		}
		s, err := r.str()
		if err != nil {
			return err
		}
		if c == quicklistPlain {
			if err := r.addItems(1); err != nil {
				return err
			}
			d.Items = append(d.Items, s)
			continue
		}
		if d.Items, err = r.listpack(d.Items, s); err != nil {
			return err
		}
	}
	return nil
}

// intset reads RDB_TYPE_SET_INTSET: a string that is an intset (intset.h:
// its encoding, 2, 4 or 8 bytes an integer, and its length, each 32 bits
// little endian, then the integers, little endian), checked as
// intsetValidateIntegrity checks it: the size is exactly the header and
// the integers.
func (r *rdbReader) intset(d *Dumped) error {
	s, err := r.str()
	if err != nil {
		return err
	}
	if len(s) < 8 {
		return ErrDumpFormat
	}
	w := binary.LittleEndian.Uint32(s)
	n := uint64(binary.LittleEndian.Uint32(s[4:]))
	if w != 2 && w != 4 && w != 8 || 8+n*uint64(w) != uint64(len(s)) {
		return ErrDumpFormat
	}
	if err := r.addItems(int(n)); err != nil {
		return err
	}
	d.Items = make([][]byte, 0, n)
	for i := 8; i < len(s); i += int(w) {
		var v int64
		switch w {
		case 2:
			v = int64(int16(binary.LittleEndian.Uint16(s[i:])))
		case 4:
			v = int64(int32(binary.LittleEndian.Uint32(s[i:])))
		default:
			v = int64(binary.LittleEndian.Uint64(s[i:]))
		}
		it := strconv.AppendInt(nil, v, 10)
		if err := r.addBytes(uint64(len(it))); err != nil {
			return err
		}
		d.Items = append(d.Items, it)
	}
	return nil
}

package value

import (
	"encoding/binary"
	"strconv"
)

// The ziplist encodings of the RDB versions before 7.0's listpacks (rdb.h
// RDB_TYPE_LIST_ZIPLIST 10, ZSET_ZIPLIST 12, HASH_ZIPLIST 13,
// LIST_QUICKLIST 14), which redis-server 7.0's RESTORE still reads
// (converting each ziplist to a listpack): payloads of Redis 3.2 to 6.2.
const (
	rdbListZiplist   = 10
	rdbZSetZiplist   = 12
	rdbHashZiplist   = 13
	rdbListQuicklist = 14
)

// ziplist appends the elements of zl, a ziplist (Redis 6.2 ziplist.c), to
// items: a header of its size and its last entry's offset (32 bits each)
// and its entry count (16 bits), little endian, the entries, then 0xFF.
// An entry is the previous entry's length (one byte under 254, else 254
// and 32 bits), an encoding and the data: a string of a 6-bit, 14-bit
// (big endian) or 32-bit (big endian) length, or an integer of 16, 32,
// 64, 24 or 8 bits (little endian), or 0 to 12 in the encoding byte
// itself (0xF1 to 0xFD). The header's size must be zl's, its tail offset
// within it and the last byte 0xFF (ziplistValidateIntegrity's shallow
// checks); every entry is checked to lie within zl.
func (r *rdbReader) ziplist(items [][]byte, zl []byte) ([][]byte, error) {
	if len(zl) < 11 || binary.LittleEndian.Uint32(zl) != uint32(len(zl)) ||
		binary.LittleEndian.Uint32(zl[4:]) > uint32(len(zl)-1) || zl[len(zl)-1] != 0xff {
		return nil, ErrDumpFormat
	}
	return r.entries(items, zl[10:len(zl)-1], ziplistEntry)
}

// ziplistEntry reads the entry at the start of b: its element (an
// integer written in decimal) and its length.
func ziplistEntry(b []byte) (it []byte, n int, err error) {
	n = 1 // the previous entry's length
	if b[0] == 254 {
		n = 5
	} else if b[0] == 255 {
		return nil, 0, ErrDumpFormat
	}
	if n >= len(b) {
		return nil, 0, ErrDumpFormat
	}
	e := b[n]
	var head, strLen, w int // the encoding's bytes; a string's length; an integer's width
	switch {
	case e>>6 == 0:
		head, strLen = 1, int(e&0x3f)
	case e>>6 == 1:
		if n+2 > len(b) {
			return nil, 0, ErrDumpFormat
		}
		head, strLen = 2, int(e&0x3f)<<8|int(b[n+1])
	case e>>6 == 2:
		if n+5 > len(b) {
			return nil, 0, ErrDumpFormat
		}
		l := binary.BigEndian.Uint32(b[n+1:])
		if uint64(l) > uint64(len(b)) {
			return nil, 0, ErrDumpFormat
		}
		head, strLen = 5, int(l)
	case e == 0xc0:
		head, w = 1, 2
	case e == 0xd0:
		head, w = 1, 4
	case e == 0xe0:
		head, w = 1, 8
	case e == 0xf0:
		head, w = 1, 3
	case e == 0xfe:
		head, w = 1, 1
	case e >= 0xf1 && e <= 0xfd:
		return strconv.AppendInt(nil, int64(e&0x0f)-1, 10), n + 1, nil
	default:
		return nil, 0, ErrDumpFormat
	}
	s := n + head
	if s+strLen+w > len(b) {
		return nil, 0, ErrDumpFormat
	}
	if w == 0 {
		return b[s : s+strLen : s+strLen], s + strLen, nil
	}
	var u uint64
	for i := w - 1; i >= 0; i-- {
		u = u<<8 | uint64(b[s+i])
	}
	return strconv.AppendInt(nil, signed(u, uint(8*w)), 10), s + w, nil
}

// quicklistV1 reads RDB_TYPE_LIST_QUICKLIST: a node count, then each
// node's ziplist (an empty one skipped, as rdbLoadObject skips it).
func (r *rdbReader) quicklistV1(d *Dumped) error {
	n, err := r.count(0)
	if err != nil {
		return err
	}
	for range n {
		s, err := r.str()
		if err != nil {
			return err
		}
		if d.Items, err = r.ziplist(d.Items, s); err != nil {
			return err
		}
	}
	return nil
}

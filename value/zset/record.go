package zset

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/tiercache/tiercache/value"
)

// Version is the first byte of a sorted-set record: a version byte, the
// member count as a uvarint, then the entries in Redis's order, each as
// its score (8 bytes, IEEE 754 little-endian) and the member as a uvarint
// length and its bytes.
const Version = 1

// ErrCorrupt is a record that does not decode (VZ2).
var ErrCorrupt = errors.New("zset: a stored sorted set does not decode")

// Count reads a record's header: its member count and where the entries
// start.
func Count(rec []byte) (n, off int, err error) {
	if len(rec) < 2 || rec[0] != Version {
		return 0, 0, ErrCorrupt
	}
	u, w := value.Uvarint(rec[1:])
	if w <= 0 || u > uint64(len(rec)/9+1) { // every entry takes at least 9 bytes
		return 0, 0, ErrCorrupt
	}
	return int(u), 1 + w, nil
}

// entryAt reads the entry at rec[off:].
func entryAt(rec []byte, off int) (e Entry, next int, err error) {
	if len(rec)-off < 9 {
		return e, 0, ErrCorrupt
	}
	e.Score = math.Float64frombits(binary.LittleEndian.Uint64(rec[off:]))
	if math.IsNaN(e.Score) {
		return e, 0, ErrCorrupt
	}
	off += 8
	u, w := value.Uvarint(rec[off:])
	if w <= 0 || u > uint64(len(rec)-off-w) {
		return e, 0, ErrCorrupt
	}
	s := off + w
	e.Member = rec[s : s+int(u) : s+int(u)]
	return e, s + int(u), nil
}

// Decode reads rec into z, replacing what z held; the members alias rec.
func (z *Entries) Decode(rec []byte) error {
	n, off, err := Count(rec)
	if err != nil {
		return err
	}
	s := z.e[:0]
	if cap(s) < n {
		s = make([]Entry, 0, n)
	}
	for i := range n {
		var e Entry
		if e, off, err = entryAt(rec, off); err != nil {
			return err
		}
		if i > 0 && Compare(s[i-1], e) >= 0 {
			return ErrCorrupt
		}
		s = append(s, e)
	}
	if off != len(rec) {
		return ErrCorrupt
	}
	z.e = s
	return nil
}

// Head appends to dst the first n entries of rec (fewer when it has
// fewer) without decoding the rest, and returns rec's member count.
func Head(dst []Entry, rec []byte, n int) ([]Entry, int, error) {
	total, off, err := Count(rec)
	if err != nil {
		return dst, 0, err
	}
	for i := range min(n, total) {
		var e Entry
		if e, off, err = entryAt(rec, off); err != nil {
			return dst, 0, err
		}
		if i > 0 && Compare(dst[len(dst)-1], e) >= 0 {
			return dst, 0, ErrCorrupt
		}
		dst = append(dst, e)
	}
	return dst, total, nil
}

// Size is the encoded size of the sorted set.
func (z *Entries) Size() int {
	n := 1 + value.UvarintLen64(uint64(len(z.e)))
	for _, e := range z.e {
		n += 8 + value.UvarintLen64(uint64(len(e.Member))) + len(e.Member)
	}
	return n
}

// AppendRecord appends the sorted set's record to dst.
func (z *Entries) AppendRecord(dst []byte) []byte {
	dst = binary.AppendUvarint(append(dst, Version), uint64(len(z.e)))
	for _, e := range z.e {
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(e.Score))
		dst = append(binary.AppendUvarint(dst, uint64(len(e.Member))), e.Member...)
	}
	return dst
}

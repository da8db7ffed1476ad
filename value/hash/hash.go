package hash

import (
	"encoding/binary"
	"errors"
)

// Version is the first byte of a record: a version byte, the field count
// as a uvarint, then for each field in insertion order its length
// (uvarint), its bytes, its value's length (uvarint) and its value.
// Insertion order is kept, as Redis's listpack encoding keeps it; a field
// set again keeps its place.
const Version = 1

// ErrCorrupt is a record that does not decode (VH2).
var ErrCorrupt = errors.New("hash: a stored hash does not decode")

// Field is one field and its value; both alias the record they were
// decoded from.
type Field struct {
	Name, Value []byte
}

// Count reads the header of a record: its field count and the offset of
// the first field.
func Count(rec []byte) (n int, off int, err error) {
	if len(rec) < 2 || rec[0] != Version {
		return 0, 0, ErrCorrupt
	}
	u, w := binary.Uvarint(rec[1:])
	if w <= 0 || u > uint64(len(rec)) { // every field takes at least two bytes
		return 0, 0, ErrCorrupt
	}
	return int(u), 1 + w, nil
}

// chunk reads one length-prefixed item at rec[off:].
func chunk(rec []byte, off int) (item []byte, next int, err error) {
	u, w := binary.Uvarint(rec[off:])
	if w <= 0 || u > uint64(len(rec)-off-w) {
		return nil, 0, ErrCorrupt
	}
	s := off + w
	return rec[s : s+int(u) : s+int(u)], s + int(u), nil
}

// Each calls f for every field of rec in order until f returns false.
func Each(rec []byte, f func(name, value []byte) bool) error {
	n, off, err := Count(rec)
	if err != nil {
		return err
	}
	for range n {
		var fl, v []byte
		if fl, off, err = chunk(rec, off); err != nil {
			return err
		}
		if v, off, err = chunk(rec, off); err != nil {
			return err
		}
		if !f(fl, v) {
			return nil
		}
	}
	if off != len(rec) {
		return ErrCorrupt
	}
	return nil
}

// Check is rec's field count once the whole record decodes.
func Check(rec []byte) (int, error) {
	n, _, err := Count(rec)
	if err == nil {
		err = Each(rec, func([]byte, []byte) bool { return true })
	}
	return n, err
}

// Decode appends rec's fields to dst.
func Decode(dst []Field, rec []byte) ([]Field, error) {
	n, _, err := Count(rec)
	if err != nil {
		return dst, err
	}
	if cap(dst)-len(dst) < n {
		dst = append(make([]Field, 0, len(dst)+n), dst...)
	}
	err = Each(rec, func(f, v []byte) bool {
		dst = append(dst, Field{f, v})
		return true
	})
	return dst, err
}

// Size is the encoded size of fields.
func Size(fields []Field) int {
	n := 1 + uvarintLen(uint64(len(fields)))
	for _, f := range fields {
		n += uvarintLen(uint64(len(f.Name))) + len(f.Name) + uvarintLen(uint64(len(f.Value))) + len(f.Value)
	}
	return n
}

// Encode appends the record of fields to dst.
func Encode(dst []byte, fields []Field) []byte {
	dst = appendHeader(dst, len(fields))
	for _, f := range fields {
		dst = appendChunk(dst, f.Name)
		dst = appendChunk(dst, f.Value)
	}
	return dst
}

// appendHeader appends a record's header for n fields.
func appendHeader(dst []byte, n int) []byte {
	return binary.AppendUvarint(append(dst, Version), uint64(n))
}

// appendChunk appends b with its length.
func appendChunk(dst, b []byte) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(b))), b...)
}

// uvarintLen is the length of u as a uvarint.
func uvarintLen(u uint64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], u)
}

// Limits are the bounds a write is checked against before its new record
// is allocated (VH4).
type Limits struct {
	MaxFields int // fields in one hash
	MaxBytes  int // record size; 0: no bound
}

// LimitError is a write Limits refuse: the hash would have N fields (when
// Fields), or take N bytes, past Limit.
type LimitError struct {
	Fields   bool
	N, Limit int
}

func (e *LimitError) Error() string {
	if e.Fields {
		return "hash: too many fields"
	}
	return "hash: too large"
}

// Check refuses a hash of n fields and size bytes.
func (l Limits) Check(n, size int) error {
	if n > l.MaxFields {
		return &LimitError{Fields: true, N: n, Limit: l.MaxFields}
	}
	if l.MaxBytes > 0 && size > l.MaxBytes {
		return &LimitError{N: size, Limit: l.MaxBytes}
	}
	return nil
}

// Empty reports whether rec has no field.
func Empty(rec []byte) bool {
	n, _, err := Count(rec)
	return err == nil && n == 0
}

package hash

import (
	"encoding/binary"
	"errors"
)

// Version is the first byte of a record of a hash none of whose fields
// has an expiry: a version byte, the field count as a uvarint, then for
// each field in insertion order its length (uvarint), its bytes, its
// value's length (uvarint) and its value. Insertion order is kept, as
// Redis's listpack encoding keeps it; a field set again keeps its place.
//
// VersionTTL is the first byte of a record of a hash with at least one
// field expiry (Redis 7.4's HEXPIRE): the same, each field followed by its
// expiry as a uvarint, unix milliseconds, 0 for none. Encode writes the
// first version whenever no field has an expiry, so a hash that never had
// one is byte for byte what it always was, and every reader reads both.
const (
	Version    = 1
	VersionTTL = 2
)

// ErrCorrupt is a record that does not decode (VH2).
var ErrCorrupt = errors.New("hash: a stored hash does not decode")

// Field is one field, its value and its expiry (unix milliseconds, 0 for
// none); Name and Value alias the record they were decoded from.
type Field struct {
	Name, Value []byte
	Expiry      int64
}

// Count reads the header of a record: its field count and the offset of
// the first field.
func Count(rec []byte) (n int, off int, err error) {
	if len(rec) < 2 || rec[0] != Version && rec[0] != VersionTTL {
		return 0, 0, ErrCorrupt
	}
	u, w := binary.Uvarint(rec[1:])
	if w <= 0 || u > uint64(len(rec)) { // every field takes at least two bytes
		return 0, 0, ErrCorrupt
	}
	return int(u), 1 + w, nil
}

// HasTTL reports whether rec is a record of the second version: some
// field of it has, or had, an expiry.
func HasTTL(rec []byte) bool { return len(rec) > 0 && rec[0] == VersionTTL }

// chunk reads one length-prefixed item at rec[off:].
func chunk(rec []byte, off int) (item []byte, next int, err error) {
	u, w := binary.Uvarint(rec[off:])
	if w <= 0 || u > uint64(len(rec)-off-w) {
		return nil, 0, ErrCorrupt
	}
	s := off + w
	return rec[s : s+int(u) : s+int(u)], s + int(u), nil
}

// expiry reads a field's expiry at rec[off:] in a record of the second
// version (ttl), none in one of the first.
func expiry(rec []byte, off int, ttl bool) (exp int64, next int, err error) {
	if !ttl {
		return 0, off, nil
	}
	u, w := binary.Uvarint(rec[off:])
	if w <= 0 || u > maxExpiry {
		return 0, 0, ErrCorrupt
	}
	return int64(u), off + w, nil
}

// maxExpiry bounds a stored expiry (unix milliseconds): anything larger is
// corrupt. Commands accept less (Redis 7.4's 2^46 - 1).
const maxExpiry = 1<<62 - 1

// field reads the field at rec[off:]: its name, value and expiry, and
// where the next one starts.
func field(rec []byte, off int, ttl bool) (name, value []byte, exp int64, next int, err error) {
	if name, off, err = chunk(rec, off); err != nil {
		return
	}
	if value, off, err = chunk(rec, off); err != nil {
		return
	}
	exp, next, err = expiry(rec, off, ttl)
	return
}

// Each calls f for every field of rec in order until f returns false,
// expired fields included (Live drops them).
func Each(rec []byte, f func(name, value []byte) bool) error {
	return EachTTL(rec, func(name, value []byte, _ int64) bool { return f(name, value) })
}

// EachTTL is Each with each field's expiry (0 for none).
func EachTTL(rec []byte, f func(name, value []byte, exp int64) bool) error {
	n, off, err := Count(rec)
	if err != nil {
		return err
	}
	ttl := rec[0] == VersionTTL
	for range n {
		var fl, v []byte
		var exp int64
		if fl, v, exp, off, err = field(rec, off, ttl); err != nil {
			return err
		}
		if !f(fl, v, exp) {
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
	err = EachTTL(rec, func(f, v []byte, exp int64) bool {
		dst = append(dst, Field{Name: f, Value: v, Expiry: exp})
		return true
	})
	return dst, err
}

// anyTTL reports whether some field has an expiry.
func anyTTL(fields []Field) bool {
	for _, f := range fields {
		if f.Expiry != 0 {
			return true
		}
	}
	return false
}

// Size is the encoded size of fields.
func Size(fields []Field) int {
	ttl := anyTTL(fields)
	n := 1 + uvarintLen(uint64(len(fields)))
	for _, f := range fields {
		n += uvarintLen(uint64(len(f.Name))) + len(f.Name) + uvarintLen(uint64(len(f.Value))) + len(f.Value)
		if ttl {
			n += uvarintLen(uint64(f.Expiry))
		}
	}
	return n
}

// Encode appends the record of fields to dst: of the first version unless
// some field has an expiry.
func Encode(dst []byte, fields []Field) []byte {
	ttl := anyTTL(fields)
	dst = appendHeaderV(dst, len(fields), ttl)
	for _, f := range fields {
		dst = appendChunk(dst, f.Name)
		dst = appendChunk(dst, f.Value)
		if ttl {
			dst = binary.AppendUvarint(dst, uint64(f.Expiry))
		}
	}
	return dst
}

// appendHeader appends a record's header for n fields (the first version).
func appendHeader(dst []byte, n int) []byte { return appendHeaderV(dst, n, false) }

// appendHeaderV appends a record's header for n fields, of the second
// version with ttl.
func appendHeaderV(dst []byte, n int, ttl bool) []byte {
	v := byte(Version)
	if ttl {
		v = VersionTTL
	}
	return binary.AppendUvarint(append(dst, v), uint64(n))
}

// appendChunk appends b with its length.
func appendChunk(dst, b []byte) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(b))), b...)
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

// appendUvarint appends u as a uvarint.
func appendUvarint(dst []byte, u uint64) []byte { return binary.AppendUvarint(dst, u) }

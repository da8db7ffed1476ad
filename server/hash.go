package server

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// A hash is stored as one value of kind kindHash (docs/DESIGN.md, "Data
// types"): a version byte, the field count as a uvarint, then for each
// field in insertion order its length (uvarint), its bytes, its value's
// length (uvarint) and its value. Insertion order is kept, as Redis's
// listpack encoding keeps it; a field set again keeps its place.
const hashVersion = 1

// errCorruptHash is a stored hash that does not decode (S19: never a
// panic, nothing changed).
var errCorruptHash = errors.New("server: a stored hash does not decode")

// hashField is one field and its value; both alias the record they were
// decoded from.
type hashField struct {
	field, value []byte
}

// hashCount reads the header of a hash record: its field count and the
// offset of the first field.
func hashCount(rec []byte) (n int, off int, err error) {
	if len(rec) < 2 || rec[0] != hashVersion {
		return 0, 0, errCorruptHash
	}
	u, w := binary.Uvarint(rec[1:])
	if w <= 0 || u > uint64(len(rec)) { // every field takes at least two bytes
		return 0, 0, errCorruptHash
	}
	return int(u), 1 + w, nil
}

// hashChunk reads one length-prefixed item at rec[off:].
func hashChunk(rec []byte, off int) (item []byte, next int, err error) {
	u, w := binary.Uvarint(rec[off:])
	if w <= 0 || u > uint64(len(rec)-off-w) {
		return nil, 0, errCorruptHash
	}
	s := off + w
	return rec[s : s+int(u) : s+int(u)], s + int(u), nil
}

// hashEach calls f for every field of rec in order until f returns false.
func hashEach(rec []byte, f func(field, value []byte) bool) error {
	n, off, err := hashCount(rec)
	if err != nil {
		return err
	}
	for range n {
		var fl, v []byte
		if fl, off, err = hashChunk(rec, off); err != nil {
			return err
		}
		if v, off, err = hashChunk(rec, off); err != nil {
			return err
		}
		if !f(fl, v) {
			return nil
		}
	}
	if off != len(rec) {
		return errCorruptHash
	}
	return nil
}

// hashCheck is rec's field count once the whole record decodes.
func hashCheck(rec []byte) (int, error) {
	n, _, err := hashCount(rec)
	if err == nil {
		err = hashEach(rec, func([]byte, []byte) bool { return true })
	}
	return n, err
}

// hashDecode appends rec's fields to dst.
func hashDecode(dst []hashField, rec []byte) ([]hashField, error) {
	n, _, err := hashCount(rec)
	if err != nil {
		return dst, err
	}
	dst = growFields(dst, n)
	err = hashEach(rec, func(f, v []byte) bool {
		dst = append(dst, hashField{f, v})
		return true
	})
	return dst, err
}

// growFields makes room for n more fields.
func growFields(dst []hashField, n int) []hashField {
	if cap(dst)-len(dst) < n {
		dst = append(make([]hashField, 0, len(dst)+n), dst...)
	}
	return dst
}

// hashSize is the encoded size of fields.
func hashSize(fields []hashField) int {
	n := 1 + uvarintLen(uint64(len(fields)))
	for _, f := range fields {
		n += uvarintLen(uint64(len(f.field))) + len(f.field) + uvarintLen(uint64(len(f.value))) + len(f.value)
	}
	return n
}

// hashEncode appends the encoding of fields to dst.
func hashEncode(dst []byte, fields []hashField) []byte {
	dst = append(dst, hashVersion)
	dst = binary.AppendUvarint(dst, uint64(len(fields)))
	for _, f := range fields {
		dst = binary.AppendUvarint(dst, uint64(len(f.field)))
		dst = append(dst, f.field...)
		dst = binary.AppendUvarint(dst, uint64(len(f.value)))
		dst = append(dst, f.value...)
	}
	return dst
}

func uvarintLen(u uint64) int {
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}

// hashFind is the index of field in fields, -1 if absent.
func hashFind(fields []hashField, field []byte) int {
	for i, f := range fields {
		if string(f.field) == string(field) {
			return i
		}
	}
	return -1
}

// hashLimits are the bounds a hash write is checked against before its
// new encoding is allocated (S20).
type hashLimits struct {
	maxFields int // fields in one hash
	maxBytes  int // encoded size; 0 = only the cache's own limit
}

// check refuses a hash of n fields and size bytes.
func (l hashLimits) check(n, size int) error {
	if n > l.maxFields {
		return replyError(fmt.Sprintf("ERR hash would have %d fields, the limit (server.max_hash_fields) is %d", n, l.maxFields))
	}
	if l.maxBytes > 0 && size > l.maxBytes {
		return replyError(fmt.Sprintf("ERR hash would take %d bytes, the limit (max_value) is %d", size, l.maxBytes))
	}
	return nil
}

// replyError is an error a command's Update function returns to be
// answered as it is (cacheError): a RESP error line.
type replyError string

func (e replyError) Error() string { return string(e) }

// wrongType is errWrongType as an Update function's error.
const wrongType = replyError(errWrongType)

// The record edits below change one field of an encoded hash without
// decoding it into fields: a scan for the field, then the bytes around it
// copied once. HSET, HSETNX, HINCRBY, HINCRBYFLOAT and HDEL of a few fields
// use them (hashEditMax); more fields go through hashDecode.

// hashEditMax is the most fields a command edits in the record directly.
const hashEditMax = 8

// hashLocate finds field in rec (nil: an empty hash): the field count,
// where the fields start, and when found the offsets of its entry and of
// its value's length prefix.
func hashLocate(rec, field []byte) (n, body, start, vp, end int, found bool, err error) {
	if rec == nil {
		return 0, 0, 0, 0, 0, false, nil
	}
	if n, body, err = hashCount(rec); err != nil {
		return
	}
	off := body
	for range n {
		var f []byte
		start = off
		if f, vp, err = hashChunk(rec, off); err != nil {
			return
		}
		if _, end, err = hashChunk(rec, vp); err != nil {
			return
		}
		if string(f) == string(field) {
			return n, body, start, vp, end, true, nil
		}
		off = end
	}
	if off != len(rec) {
		err = errCorruptHash
	}
	return n, body, 0, 0, 0, false, err
}

// appendHeader appends a hash record's header for n fields.
func appendHeader(dst []byte, n int) []byte {
	return binary.AppendUvarint(append(dst, hashVersion), uint64(n))
}

// hashPut appends to dst (which must not overlap rec) rec with field set
// to value, added when the field is new; the limits are checked before dst
// grows.
func hashPut(dst, rec, field, value []byte, lim hashLimits) (out []byte, added bool, err error) {
	n, body, start, vp, end, found, err := hashLocate(rec, field)
	if err != nil {
		return dst, false, err
	}
	_ = start
	vlen := uvarintLen(uint64(len(value))) + len(value)
	if found {
		size := len(rec) - (end - vp) + vlen
		if err := lim.check(n, size); err != nil {
			return dst, false, err
		}
		out = append(dst, rec[:vp]...)
		out = binary.AppendUvarint(out, uint64(len(value)))
		out = append(out, value...)
		return append(out, rec[end:]...), false, nil
	}
	size := 1 + uvarintLen(uint64(n+1)) + len(rec) - min(body, len(rec)) + uvarintLen(uint64(len(field))) + len(field) + vlen
	if err := lim.check(n+1, size); err != nil {
		return dst, false, err
	}
	out = appendHeader(dst, n+1)
	if rec != nil {
		out = append(out, rec[body:]...)
	}
	out = binary.AppendUvarint(out, uint64(len(field)))
	out = append(out, field...)
	out = binary.AppendUvarint(out, uint64(len(value)))
	return append(out, value...), true, nil
}

// hashRemove appends to dst (not overlapping rec) rec without field;
// removed says it was there. A hash left empty is a header of 0 fields.
func hashRemove(dst, rec, field []byte) (out []byte, removed bool, err error) {
	n, body, start, _, end, found, err := hashLocate(rec, field)
	if err != nil || !found {
		return dst, false, err
	}
	out = appendHeader(dst, n-1)
	out = append(out, rec[body:start]...)
	return append(out, rec[end:]...), true, nil
}

// hashEmpty reports whether rec has no field.
func hashEmpty(rec []byte) bool {
	n, _, err := hashCount(rec)
	return err == nil && n == 0
}

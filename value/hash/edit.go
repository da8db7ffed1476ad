package hash

import "encoding/binary"

// The edits below change one field of a record without decoding it into
// fields: a scan for the field, then the bytes around it copied once
// (VH3). A command that changes a few fields uses them; more fields go
// through Decode, Set or Delete, and Encode.

// locate finds field in rec (nil: an empty hash): the field count, where
// the fields start, and when found the offsets of its entry and of its
// value's length prefix.
func locate(rec, field []byte) (n, body, start, vp, end int, found bool, err error) {
	if rec == nil {
		return 0, 0, 0, 0, 0, false, nil
	}
	if n, body, err = Count(rec); err != nil {
		return
	}
	off := body
	for range n {
		var f []byte
		start = off
		if f, vp, err = chunk(rec, off); err != nil {
			return
		}
		if _, end, err = chunk(rec, vp); err != nil {
			return
		}
		if string(f) == string(field) {
			return n, body, start, vp, end, true, nil
		}
		off = end
	}
	if off != len(rec) {
		err = ErrCorrupt
	}
	return n, body, 0, 0, 0, false, err
}

// Get is field's value in rec (nil: an empty hash).
func Get(rec, field []byte) (value []byte, found bool, err error) {
	_, _, _, vp, end, found, err := locate(rec, field)
	if !found || err != nil {
		return nil, false, err
	}
	value, _, err = chunk(rec[:end], vp)
	return value, true, err
}

// Put appends to dst (which must not overlap rec) rec with field set to
// value, added at the end when the field is new; lim is checked before
// dst grows (VH4).
func Put(dst, rec, field, value []byte, lim Limits) (out []byte, added bool, err error) {
	n, body, _, vp, end, found, err := locate(rec, field)
	if err != nil {
		return dst, false, err
	}
	vlen := uvarintLen(uint64(len(value))) + len(value)
	if found {
		if err := lim.Check(n, len(rec)-(end-vp)+vlen); err != nil {
			return dst, false, err
		}
		out = append(dst, rec[:vp]...)
		out = appendChunk(out, value)
		return append(out, rec[end:]...), false, nil
	}
	size := 1 + uvarintLen(uint64(n+1)) + len(rec) - min(body, len(rec)) + uvarintLen(uint64(len(field))) + len(field) + vlen
	if err := lim.Check(n+1, size); err != nil {
		return dst, false, err
	}
	out = appendHeader(dst, n+1)
	if rec != nil {
		out = append(out, rec[body:]...)
	}
	out = binary.AppendUvarint(out, uint64(len(field)))
	out = append(out, field...)
	return appendChunk(out, value), true, nil
}

// Remove appends to dst (not overlapping rec) rec without field; removed
// says it was there. A hash left empty is a header of 0 fields (Empty).
func Remove(dst, rec, field []byte) (out []byte, removed bool, err error) {
	n, body, start, _, end, found, err := locate(rec, field)
	if err != nil || !found {
		return dst, false, err
	}
	out = appendHeader(dst, n-1)
	out = append(out, rec[body:start]...)
	return append(out, rec[end:]...), true, nil
}

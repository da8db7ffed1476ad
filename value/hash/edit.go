package hash

import "encoding/binary"

// The edits below change one field of a record without decoding it into
// fields: a scan for the field, then the bytes around it copied once
// (VH3). A command that changes a few fields uses them; more fields go
// through Decode, Set or Delete, and Encode. They read both versions and
// keep the record's version; they do not look at expiries (Live first
// drops the expired fields).

// spot is where locate found a field: its entry starts at start, its
// value's length prefix at vp, its expiry (second version) at ep, and the
// next entry at end.
type spot struct {
	n, body            int // the field count, where the fields start
	start, vp, ep, end int
	ttl                bool // the record is of the second version
}

// locate finds field in rec (nil: an empty hash).
func locate(rec, field []byte) (s spot, found bool, err error) {
	if rec == nil {
		return s, false, nil
	}
	if s.n, s.body, err = Count(rec); err != nil {
		return
	}
	s.ttl = rec[0] == VersionTTL
	off := s.body
	for range s.n {
		var f []byte
		s.start = off
		if f, s.vp, err = chunk(rec, off); err != nil {
			return
		}
		if _, s.ep, err = chunk(rec, s.vp); err != nil {
			return
		}
		if _, s.end, err = expiry(rec, s.ep, s.ttl); err != nil {
			return
		}
		if string(f) == string(field) {
			return s, true, nil
		}
		off = s.end
	}
	if off != len(rec) {
		err = ErrCorrupt
	}
	s.start, s.vp, s.ep, s.end = 0, 0, 0, 0
	return s, false, err
}

// Get is field's value in rec (nil: an empty hash).
func Get(rec, field []byte) (value []byte, found bool, err error) {
	s, found, err := locate(rec, field)
	if !found || err != nil {
		return nil, false, err
	}
	value, _, err = chunk(rec[:s.ep], s.vp)
	return value, true, err
}

// Put appends to dst (which must not overlap rec) rec with field set to
// value, added at the end when the field is new; a field set again loses
// its expiry, as HSET's does. lim is checked before dst grows (VH4).
func Put(dst, rec, field, value []byte, lim Limits) (out []byte, added bool, err error) {
	return put(dst, rec, field, value, false, lim)
}

// PutKeepTTL is Put keeping the field's expiry, as HINCRBY's change does.
func PutKeepTTL(dst, rec, field, value []byte, lim Limits) (out []byte, added bool, err error) {
	return put(dst, rec, field, value, true, lim)
}

func put(dst, rec, field, value []byte, keep bool, lim Limits) (out []byte, added bool, err error) {
	s, found, err := locate(rec, field)
	if err != nil {
		return dst, false, err
	}
	vlen := uvarintLen(uint64(len(value))) + len(value)
	if found {
		tail := rec[s.end:]
		exp := rec[s.ep:s.end] // the expiry as stored (empty in the first version)
		if s.ttl && !keep {
			exp = []byte{0}
		}
		if err := lim.Check(s.n, len(rec)-(s.end-s.vp)+vlen+len(exp)); err != nil {
			return dst, false, err
		}
		out = append(dst, rec[:s.vp]...)
		out = appendChunk(out, value)
		out = append(out, exp...)
		return append(out, tail...), false, nil
	}
	newExp := 0
	if s.ttl {
		newExp = 1
	}
	size := 1 + uvarintLen(uint64(s.n+1)) + len(rec) - min(s.body, len(rec)) + uvarintLen(uint64(len(field))) + len(field) + vlen + newExp
	if err := lim.Check(s.n+1, size); err != nil {
		return dst, false, err
	}
	out = appendHeaderV(dst, s.n+1, s.ttl)
	if rec != nil {
		out = append(out, rec[s.body:]...)
	}
	out = binary.AppendUvarint(out, uint64(len(field)))
	out = append(out, field...)
	out = appendChunk(out, value)
	if s.ttl {
		out = append(out, 0)
	}
	return out, true, nil
}

// Remove appends to dst (not overlapping rec) rec without field; removed
// says it was there. A hash left empty is a header of 0 fields (Empty).
func Remove(dst, rec, field []byte) (out []byte, removed bool, err error) {
	s, found, err := locate(rec, field)
	if err != nil || !found {
		return dst, false, err
	}
	out = appendHeaderV(dst, s.n-1, s.ttl)
	out = append(out, rec[s.body:s.start]...)
	return append(out, rec[s.end:]...), true, nil
}

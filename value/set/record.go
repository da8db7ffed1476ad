package set

import (
	"bytes"
	"encoding/binary"
	"errors"

	"github.com/tiercache/tiercache/value"
)

// Version is the first byte of a set record: a version byte, the member
// count as a uvarint, then the members in ascending byte order, each as a
// uvarint length and its bytes.
const Version = 1

// ErrCorrupt is a record that does not decode (VS2).
var ErrCorrupt = errors.New("set: a stored set does not decode")

// Count reads a record's header: its member count and where the members
// start.
func Count(rec []byte) (n, off int, err error) {
	if len(rec) < 2 || rec[0] != Version {
		return 0, 0, ErrCorrupt
	}
	u, w := value.Uvarint(rec[1:])
	if w <= 0 || u > uint64(len(rec)) { // every member takes at least a byte
		return 0, 0, ErrCorrupt
	}
	return int(u), 1 + w, nil
}

// chunk reads one length-prefixed item at rec[off:].
func chunk(rec []byte, off int) (item []byte, next int, err error) {
	u, w := value.Uvarint(rec[off:])
	if w <= 0 || u > uint64(len(rec)-off-w) {
		return nil, 0, ErrCorrupt
	}
	s := off + w
	return rec[s : s+int(u) : s+int(u)], s + int(u), nil
}

// Decode reads rec into m, replacing what m held; the members alias rec.
func (m *Members) Decode(rec []byte) error {
	n, off, err := Count(rec)
	if err != nil {
		return err
	}
	s := m.m[:0]
	if cap(s) < n {
		s = make([][]byte, 0, n)
	}
	for i := range n {
		var it []byte
		if it, off, err = chunk(rec, off); err != nil {
			return err
		}
		if i > 0 && bytes.Compare(s[i-1], it) >= 0 {
			return ErrCorrupt
		}
		s = append(s, it)
	}
	if off != len(rec) {
		return ErrCorrupt
	}
	m.m = s
	return nil
}

// Size is the encoded size of the set.
func (m *Members) Size() int {
	n := 1 + value.UvarintLen64(uint64(len(m.m)))
	for _, b := range m.m {
		n += value.UvarintLen64(uint64(len(b))) + len(b)
	}
	return n
}

// AppendRecord appends the set's record to dst.
func (m *Members) AppendRecord(dst []byte) []byte {
	dst = binary.AppendUvarint(append(dst, Version), uint64(len(m.m)))
	for _, b := range m.m {
		dst = append(binary.AppendUvarint(dst, uint64(len(b))), b...)
	}
	return dst
}

// Limits are the bounds a set is checked against before its record is
// built (VS6).
type Limits struct {
	MaxMembers int // members in one set
	MaxBytes   int // record size; 0: no bound
}

// LimitError is a set Limits refuse: it would have N members (when
// Members), or take N bytes, past Limit.
type LimitError struct {
	Members  bool
	N, Limit int
}

func (e *LimitError) Error() string {
	if e.Members {
		return "set: too many members"
	}
	return "set: too large"
}

// Check refuses a set of n members and size bytes.
func (l Limits) Check(n, size int) error {
	if n > l.MaxMembers {
		return &LimitError{Members: true, N: n, Limit: l.MaxMembers}
	}
	if l.MaxBytes > 0 && size > l.MaxBytes {
		return &LimitError{N: size, Limit: l.MaxBytes}
	}
	return nil
}

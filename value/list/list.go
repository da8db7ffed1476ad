package list

import (
	"encoding/binary"
	"errors"

	"github.com/tiercache/tiercache/value"
)

// Version is the first byte of a list value: a version byte, the element
// count as a uvarint, then each element, head first, as a uvarint length
// and its bytes. The count makes a length one header read, and an end is
// reached without decoding the rest: a pop from the head keeps the
// remaining bytes as they are, a pop from the tail and an index step over
// lengths without copying elements. Every write still builds the whole
// new value, so it costs O(list bytes).
const Version = 1

// ErrCorrupt is a list value that does not decode (VL2).
var ErrCorrupt = errors.New("list: a stored list does not decode")

// Header returns a list's element count and its elements' bytes.
func Header(v []byte) (n int, body []byte, err error) {
	if len(v) < 2 || v[0] != Version {
		return 0, nil, ErrCorrupt
	}
	c, k := binary.Uvarint(v[1:])
	if k <= 0 || c > uint64(len(v)) {
		return 0, nil, ErrCorrupt
	}
	return int(c), v[1+k:], nil
}

// Next splits the first element off body.
func Next(body []byte) (item, rest []byte, err error) {
	l, k := binary.Uvarint(body)
	if k <= 0 || l > uint64(len(body)-k) {
		return nil, nil, ErrCorrupt
	}
	end := k + int(l)
	return body[k:end], body[end:], nil
}

// Items appends the elements of a list value to dst; they alias v.
func Items(dst [][]byte, v []byte) ([][]byte, error) {
	n, body, err := Header(v)
	if err != nil {
		return dst, err
	}
	return BodyItems(dst, n, body)
}

// BodyItems appends the n elements of a list's body to dst.
func BodyItems(dst [][]byte, n int, body []byte) ([][]byte, error) {
	var err error
	for i := 0; i < n; i++ {
		var it []byte
		if it, body, err = Next(body); err != nil {
			return dst, err
		}
		dst = append(dst, it)
	}
	if len(body) != 0 {
		return dst, ErrCorrupt
	}
	return dst, nil
}

// ItemSize is the encoded size of one element.
func ItemSize(b []byte) int { return value.UvarintLen64(uint64(len(b))) + len(b) }

// Size is the encoded size of a list of n elements whose encoded elements
// take body bytes.
func Size(n, body int) int { return 1 + value.UvarintLen64(uint64(n)) + body }

// AppendHeader starts a list value of n elements.
func AppendHeader(dst []byte, n int) []byte {
	return binary.AppendUvarint(append(dst, Version), uint64(n))
}

// AppendItem appends one element.
func AppendItem(dst, it []byte) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(it))), it...)
}

// Encode builds the value of items in dst, with one allocation at most.
func Encode(dst []byte, items [][]byte) []byte {
	body := 0
	for _, it := range items {
		body += ItemSize(it)
	}
	dst = growTo(AppendHeader(dst[:0], len(items)), Size(len(items), body))
	for _, it := range items {
		dst = AppendItem(dst, it)
	}
	return dst
}

// growTo makes room for n bytes in all, so a value is built with one
// allocation at most.
func growTo(b []byte, n int) []byte {
	if cap(b) >= n {
		return b
	}
	nb := make([]byte, len(b), n)
	copy(nb, b)
	return nb
}

// Limits are the bounds a list write is checked against before the new
// value is built (VL4).
type Limits struct{ MaxElements, MaxBytes int }

// LimitError is a write Limits refuse: the list would have N elements
// (when Elements), or take N bytes, past Limit.
type LimitError struct {
	Elements bool
	N, Limit int
}

func (e *LimitError) Error() string {
	if e.Elements {
		return "list: too many elements"
	}
	return "list: too large"
}

// Check refuses a list of n elements and size bytes.
func (l Limits) Check(n, size int) error {
	if n > l.MaxElements {
		return &LimitError{Elements: true, N: n, Limit: l.MaxElements}
	}
	if size > l.MaxBytes {
		return &LimitError{N: size, Limit: l.MaxBytes}
	}
	return nil
}

package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
)

// A list is one value of kind kindList (the "Data types" section of
// docs/DESIGN.md): a version byte, the element count as a uvarint, then
// each element, head first, as a uvarint length and its bytes. The count
// makes LLEN one header read, and an end is reached without decoding the
// rest: LPOP takes the first elements and keeps the remaining bytes as
// they are, RPOP and LINDEX step over lengths without copying elements.
// Every write still builds the whole new value (the record is the unit
// the tiers store), so a write costs O(list bytes).
const listVersion = 1

// errCorruptList answers a list value that does not decode: it is left
// as it is.
var errCorruptList = errors.New("corrupt list value")

// listHeader returns a list's element count and its elements' bytes.
func listHeader(v []byte) (n int, body []byte, err error) {
	if len(v) < 2 || v[0] != listVersion {
		return 0, nil, errCorruptList
	}
	c, k := binary.Uvarint(v[1:])
	if k <= 0 || c > uint64(len(v)) {
		return 0, nil, errCorruptList
	}
	return int(c), v[1+k:], nil
}

// nextItem splits the first element off body.
func nextItem(body []byte) (item, rest []byte, err error) {
	l, k := binary.Uvarint(body)
	if k <= 0 || l > uint64(len(body)-k) {
		return nil, nil, errCorruptList
	}
	end := k + int(l)
	return body[k:end], body[end:], nil
}

// listItems appends the elements of a list value to dst; they alias v.
func listItems(dst [][]byte, v []byte) ([][]byte, error) {
	n, body, err := listHeader(v)
	if err != nil {
		return dst, err
	}
	return bodyItems(dst, n, body)
}

// bodyItems appends the n elements of a list's body to dst.
func bodyItems(dst [][]byte, n int, body []byte) ([][]byte, error) {
	var err error
	for i := 0; i < n; i++ {
		var it []byte
		if it, body, err = nextItem(body); err != nil {
			return dst, err
		}
		dst = append(dst, it)
	}
	if len(body) != 0 {
		return dst, errCorruptList
	}
	return dst, nil
}

// itemSize is the encoded size of one element.
func itemSize(b []byte) int { return uvarintLen(uint64(len(b))) + len(b) } // uvarintLen: hash.go

// listSize is the encoded size of a list of n elements whose encoded
// elements take body bytes.
func listSize(n, body int) int { return 1 + uvarintLen(uint64(n)) + body }

// appendListHeader starts a list value of n elements.
func appendListHeader(dst []byte, n int) []byte {
	return binary.AppendUvarint(append(dst, listVersion), uint64(n))
}

func appendItem(dst, it []byte) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(it))), it...)
}

// encodeList builds the value of items.
func encodeList(dst []byte, items [][]byte) []byte {
	body := 0
	for _, it := range items {
		body += itemSize(it)
	}
	dst = appendListHeader(dst[:0], len(items))
	dst = growTo(dst, listSize(len(items), body))
	for _, it := range items {
		dst = appendItem(dst, it)
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

// listLimits are the bounds a list write is checked against before the
// new value is built.
type listLimits struct{ elements, bytes int }

func (l listLimits) check(n, size int) error {
	if n > l.elements {
		return fmt.Errorf("list would have %d elements, the limit (server.max_list_elements) is %d", n, l.elements)
	}
	if size > l.bytes {
		return fmt.Errorf("list would take %d bytes, the limit (max_value) is %d", size, l.bytes)
	}
	return nil
}

// redisInt parses an integer argument as redis-server's string2ll does:
// no sign but '-', no leading zeros, no spaces, within int64.
func redisInt(b []byte) (int64, bool) {
	d := b
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || d[0] < '0' || d[0] > '9' || d[0] == '0' && (len(d) > 1 || len(b) > 1) {
		return 0, false // no digits, a sign but '-', a leading zero, "-0"
	}
	v, err := strconv.ParseInt(string(b), 10, 64)
	return v, err == nil
}

// listRange turns Redis's start and stop (negative from the end) into a
// slice [lo, hi) of a list of n elements; lo == hi when it is empty.
func listRange(start, stop int64, n int) (lo, hi int) {
	ln := int64(n)
	if start < 0 {
		start += ln
	}
	if stop < 0 {
		stop += ln
	}
	if start < 0 {
		start = 0
	}
	if start > stop || start >= ln {
		return 0, 0
	}
	if stop >= ln {
		stop = ln - 1
	}
	return int(start), int(stop) + 1
}

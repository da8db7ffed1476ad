package list

import (
	"bytes"
	"math"
)

// The operations of the list commands, as redis-server 7.0 defines them
// (t_list.c), on a value's count and body or on its decoded elements.
// They compute only: the caller reads the value and stores what they
// build.

// Push builds in dst the value of the list of n elements body with vals
// pushed at the head (left; each in turn, so the last ends up first) or
// at the tail, and returns it with its length; lim is checked before dst
// grows (VL4).
func Push(dst []byte, n int, body []byte, vals [][]byte, left bool, lim Limits) (out []byte, length int, err error) {
	add := 0
	for _, v := range vals {
		add += ItemSize(v)
	}
	total := n + len(vals)
	size := Size(total, len(body)+add)
	if err := lim.Check(total, size); err != nil {
		return dst, 0, err
	}
	b := growTo(AppendHeader(dst[:0], total), size)
	if left {
		for i := len(vals) - 1; i >= 0; i-- {
			b = AppendItem(b, vals[i])
		}
		b = append(b, body...)
	} else {
		b = append(b, body...)
		for _, v := range vals {
			b = AppendItem(b, v)
		}
	}
	return b, total, nil
}

// Pop takes k elements (0 < k <= n) off the head (left) or the tail of
// the list of n elements body: popped gets them in the order popped,
// aliasing body (appended to items), and out, built in dst, is the value
// left, nil when none is.
func Pop(dst []byte, items [][]byte, n int, body []byte, k int, left bool) (out []byte, popped [][]byte, err error) {
	// Split the elements at the cut: the first k (left) or n-k.
	cut := k
	if !left {
		cut = n - k
	}
	popped = items[:0]
	rest := body
	for i := 0; i < cut; i++ {
		var it []byte
		if it, rest, err = Next(rest); err != nil {
			return nil, nil, err
		}
		if left {
			popped = append(popped, it)
		}
	}
	head := body[:len(body)-len(rest)]
	if !left {
		for r := rest; len(r) > 0; {
			var it []byte
			if it, r, err = Next(r); err != nil {
				return nil, nil, err
			}
			popped = append(popped, it)
		}
		for i, j := 0, len(popped)-1; i < j; i, j = i+1, j-1 {
			popped[i], popped[j] = popped[j], popped[i]
		}
	}
	if k == n {
		return nil, popped, nil
	}
	keep := rest
	if !left {
		keep = head
	}
	return append(AppendHeader(dst[:0], n-k), keep...), popped, nil
}

// End is the element at the head (left) or the tail of the list of n
// elements body, nil when it has none.
func End(n int, body []byte, left bool) ([]byte, error) {
	var item []byte
	var err error
	for i := 0; i < n && (i == 0 || !left); i++ {
		if item, body, err = Next(body); err != nil {
			return nil, err
		}
	}
	return item, nil
}

// Rotate moves the head (fromLeft) or the tail of items to the head
// (toLeft) or the tail: the new items and the element moved.
func Rotate(items [][]byte, fromLeft, toLeft bool) ([][]byte, []byte, error) {
	if len(items) == 0 {
		return items, nil, ErrCorrupt // a stored list is never empty
	}
	var v []byte
	if fromLeft {
		v, items = items[0], items[1:]
	} else {
		v, items = items[len(items)-1], items[:len(items)-1]
	}
	if toLeft {
		items = append([][]byte{v}, items...)
	} else {
		items = append(items, v)
	}
	return items, v, nil
}

// Insert puts elem before (or after) the first element equal to pivot:
// the new items and their count, or items and -1 without pivot.
func Insert(items [][]byte, pivot, elem []byte, after bool) ([][]byte, int) {
	for i, it := range items {
		if bytes.Equal(it, pivot) {
			if after {
				i++
			}
			items = append(items[:i], append([][]byte{elem}, items[i:]...)...)
			return items, len(items)
		}
	}
	return items, -1
}

// Remove removes the elements equal to elem: the first count of them from
// the head (count > 0), from the tail (count < 0), or all (0). It returns
// the elements kept (in items' array) and how many were removed.
func Remove(items [][]byte, count int64, elem []byte) ([][]byte, int) {
	removed := 0
	limit := count
	if limit < 0 {
		limit = -limit
	}
	drop := make([]bool, len(items))
	for k := 0; k < len(items); k++ {
		i := k
		if count < 0 {
			i = len(items) - 1 - k
		}
		if bytes.Equal(items[i], elem) {
			drop[i] = true
			if removed++; limit > 0 && int64(removed) == limit {
				break
			}
		}
	}
	kept := items[:0]
	for i, it := range items {
		if !drop[i] {
			kept = append(kept, it)
		}
	}
	return kept, removed
}

// Positions is LPOS's search, appended to dst: the indexes of the
// elements equal to elem from the rank-th match on (rank > 0 counts from
// the head, < 0 from the tail; math.MinInt64 reads as -1, as Redis 7.0
// reads it), at most count of them (0: all; < 0: the first one), looking
// at most at maxlen elements (0: all).
func Positions(dst []int, items [][]byte, elem []byte, rank, count, maxlen int64) []int {
	n := len(items)
	skip := max(rank, -rank) - 1 // the matches to pass over
	if rank == math.MinInt64 {
		skip = 0
	}
	found := 0
	for k := 0; k < n && (maxlen == 0 || int64(k) < maxlen); k++ {
		i := k
		if rank < 0 {
			i = n - 1 - k
		}
		if !bytes.Equal(items[i], elem) {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		dst = append(dst, i)
		if found++; count < 0 || count > 0 && int64(found) == count {
			break
		}
	}
	return dst
}

// Range turns Redis's start and stop (negative from the end) into a slice
// [lo, hi) of a list of n elements; lo == hi when it is empty.
func Range(start, stop int64, n int) (lo, hi int) {
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

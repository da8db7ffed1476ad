package set

import (
	"cmp"
	"hash/fnv"
	"slices"
)

// ScanWhole is the member count up to which SSCAN and ZSCAN answer a
// whole set in one call with cursor 0, as Redis does for a small (intset
// or listpack) one.
const ScanWhole = 128

// ScanStep is one step of a scan (SSCAN, ZSCAN) over items larger than a
// call returns: the items whose name's hash (MemberHash) is at least
// cursor, in hash order, count of them (more when the next ones share the
// last one's hash), appended to dst, and the cursor after them (0 when
// none is left). An item present for the whole scan comes out exactly once
// whatever is added or removed meanwhile (VS5).
func ScanStep[T any](dst, items []T, name func(T) []byte, cursor uint64, count int) ([]T, uint64) {
	type hashed struct {
		h  uint64
		it T
	}
	all := make([]hashed, 0, len(items))
	for _, it := range items {
		if h := MemberHash(name(it)); h >= cursor {
			all = append(all, hashed{h, it})
		}
	}
	slices.SortFunc(all, func(a, b hashed) int { return cmp.Compare(a.h, b.h) })
	n := min(count, len(all))
	for n < len(all) && n > 0 && all[n].h == all[n-1].h {
		n++
	}
	for _, x := range all[:n] {
		dst = append(dst, x.it)
	}
	if n == len(all) {
		return dst, 0
	}
	return dst, all[n].h
}

// MemberHash orders a large set's members for ScanStep's cursor.
func MemberHash(m []byte) uint64 {
	h := fnv.New64a()
	h.Write(m)
	return h.Sum64()
}

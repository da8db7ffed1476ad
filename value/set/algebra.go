package set

import (
	"bytes"
	"slices"
)

// The algebra of SINTER, SUNION and SDIFF (VS4): the members of sets
// combined, appended to dst in ascending order when every input is a
// *Members (any order otherwise). A nil Set is an empty one, as a missing
// key is.

// Inter appends the members in every one of sets.
func Inter(dst [][]byte, sets []Set) [][]byte {
	if len(sets) == 0 {
		return dst
	}
	small := 0
	for i, s := range sets {
		if s == nil || s.Len() == 0 {
			return dst
		}
		if s.Len() < sets[small].Len() {
			small = i
		}
	}
	sets[small].Each(func(b []byte) bool {
		for i, s := range sets {
			if i != small && !s.Has(b) {
				return true
			}
		}
		dst = append(dst, b)
		return true
	})
	return dst
}

// InterCard counts the members in every one of sets, stopping at limit
// (0: no limit), as SINTERCARD does.
func InterCard(sets []Set, limit int) int {
	n := 0
	if len(sets) == 0 {
		return 0
	}
	small := 0
	for i, s := range sets {
		if s == nil || s.Len() == 0 {
			return 0
		}
		if s.Len() < sets[small].Len() {
			small = i
		}
	}
	sets[small].Each(func(b []byte) bool {
		for i, s := range sets {
			if i != small && !s.Has(b) {
				return true
			}
		}
		n++
		return limit == 0 || n < limit
	})
	return n
}

// Union puts the members of any of sets into out (cleared first).
func Union(out *Members, sets []Set) {
	out.Reset()
	for _, s := range sets {
		if s == nil {
			continue
		}
		s.Each(func(b []byte) bool {
			out.m = append(out.m, b)
			return true
		})
	}
	slices.SortFunc(out.m, bytes.Compare)
	out.m = slices.CompactFunc(out.m, bytes.Equal)
}

// Diff appends the members of sets[0] in none of the others.
func Diff(dst [][]byte, sets []Set) [][]byte {
	if len(sets) == 0 || sets[0] == nil {
		return dst
	}
	sets[0].Each(func(b []byte) bool {
		for _, s := range sets[1:] {
			if s != nil && s.Has(b) {
				return true
			}
		}
		dst = append(dst, b)
		return true
	})
	return dst
}

// FromSorted makes a Members of members already in ascending order with
// no repeats (what Inter and Diff build from *Members inputs).
func FromSorted(members [][]byte) *Members { return &Members{m: members} }

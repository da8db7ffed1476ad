package geo

// PartialSort orders s by cmp so that the elements at indexes lo..hi
// (inclusive) are those a full sort puts there, in that order, as Redis's
// pqsort orders a search's points when COUNT keeps fewer than it found:
// the quicksort of J. L. Bentley and M. D. McIlroy ("Engineering a Sort
// Function", Software: Practice and Experience 23(11), 1993: a pivot
// from the median of three, or of three medians of three past 40
// elements, equal keys gathered at both ends and swapped to the middle,
// insertion sort below 7 elements), which skips the parts that hold no
// index of lo..hi. It is not stable: elements that compare equal end in
// the order this partitioning leaves them, the same order as Redis's.
func PartialSort[T any](s []T, cmp func(a, b T) int, lo, hi int) {
	pqsort(s, 0, len(s), cmp, lo, hi)
}

func pqsort[T any](s []T, a, n int, cmp func(a, b T) int, lo, hi int) {
	for {
		if n < 7 {
			for m := a + 1; m < a+n; m++ {
				for l := m; l > a && cmp(s[l-1], s[l]) > 0; l-- {
					s[l], s[l-1] = s[l-1], s[l]
				}
			}
			return
		}
		m := a + n/2
		if n > 7 {
			l, r := a, a+n-1
			if n > 40 {
				d := n / 8
				l = med3(s, l, l+d, l+2*d, cmp)
				m = med3(s, m-d, m, m+d, cmp)
				r = med3(s, r-2*d, r-d, r, cmp)
			}
			m = med3(s, l, m, r, cmp)
		}
		s[a], s[m] = s[m], s[a]
		pa, pb := a+1, a+1
		pc, pd := a+n-1, a+n-1
		for {
			for pb <= pc {
				c := cmp(s[pb], s[a])
				if c > 0 {
					break
				}
				if c == 0 {
					s[pa], s[pb] = s[pb], s[pa]
					pa++
				}
				pb++
			}
			for pb <= pc {
				c := cmp(s[pc], s[a])
				if c < 0 {
					break
				}
				if c == 0 {
					s[pc], s[pd] = s[pd], s[pc]
					pd--
				}
				pc--
			}
			if pb > pc {
				break
			}
			s[pb], s[pc] = s[pc], s[pb]
			pb++
			pc--
		}
		pn := a + n
		r := min(pa-a, pb-pa)
		vecswap(s, a, pb-r, r)
		r = min(pd-pc, pn-pd-1)
		vecswap(s, pb, pn-r, r)
		// The smaller keys, then the larger ones, each only if it holds an
		// index of lo..hi.
		if r = pb - pa; r > 1 && !outside(a, a+r-1, lo, hi) {
			pqsort(s, a, r, cmp, lo, hi)
		}
		r = pd - pc
		if r <= 1 {
			return
		}
		a, n = pn-r, r
		if outside(a, a+n-1, lo, hi) {
			return
		}
	}
}

// outside reports whether lo and hi are both before first or both after
// last.
func outside(first, last, lo, hi int) bool {
	return lo < first && hi < first || lo > last && hi > last
}

// med3 is the index of the median of s[i], s[j], s[k].
func med3[T any](s []T, i, j, k int, cmp func(a, b T) int) int {
	if cmp(s[i], s[j]) < 0 {
		switch {
		case cmp(s[j], s[k]) < 0:
			return j
		case cmp(s[i], s[k]) < 0:
			return k
		}
		return i
	}
	switch {
	case cmp(s[j], s[k]) > 0:
		return j
	case cmp(s[i], s[k]) < 0:
		return i
	}
	return k
}

// vecswap swaps the n elements from i with the n from j.
func vecswap[T any](s []T, i, j, n int) {
	for ; n > 0; n-- {
		s[i], s[j] = s[j], s[i]
		i++
		j++
	}
}

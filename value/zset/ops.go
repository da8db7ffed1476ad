package zset

import (
	"bytes"
	"math"
	"slices"

	"github.com/tiercache/tiercache/value/set"
)

// ScoreRange is a range of scores (ZRANGEBYSCORE's min and max): an
// exclusive end when MinEx or MaxEx.
type ScoreRange struct {
	Min, Max     float64
	MinEx, MaxEx bool
}

// Empty reports a range no score is in, as Redis decides it before
// looking (zslParseRange's callers).
func (r ScoreRange) Empty() bool {
	return r.Min > r.Max || r.Min == r.Max && (r.MinEx || r.MaxEx)
}

func (r ScoreRange) aboveMin(s float64) bool {
	if r.MinEx {
		return s > r.Min
	}
	return s >= r.Min
}

func (r ScoreRange) belowMax(s float64) bool {
	if r.MaxEx {
		return s < r.Max
	}
	return s <= r.Max
}

// ScoreSpan is the ranks [lo, hi) of z's entries whose score is in r.
func ScoreSpan(z Reader, r ScoreRange) (lo, hi int) {
	if r.Empty() {
		return 0, 0
	}
	n := z.Len()
	lo = searchRank(n, func(i int) bool { return r.aboveMin(z.At(i).Score) })
	hi = searchRank(n, func(i int) bool { return !r.belowMax(z.At(i).Score) })
	return lo, max(lo, hi)
}

// searchRank is the first i in [0, n) for which f holds (f false then
// true over the ranks), n if none.
func searchRank(n int, f func(int) bool) int {
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if f(m) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// LexBound is one end of a lexicographic range: -inf ("-"), +inf ("+")
// or a member, inclusive ("[m") or exclusive ("(m").
type LexBound struct {
	Inf   int // -1: "-", +1: "+", 0: Value
	Ex    bool
	Value []byte
}

// LexRange is a range of members (ZRANGEBYLEX's min and max). Redis
// defines it for a sorted set whose scores are all equal.
type LexRange struct{ Min, Max LexBound }

// Empty reports a range no member is in.
func (r LexRange) Empty() bool {
	switch {
	case r.Min.Inf == 1 || r.Max.Inf == -1:
		return true
	case r.Min.Inf == -1 || r.Max.Inf == 1:
		return false
	}
	c := bytes.Compare(r.Min.Value, r.Max.Value)
	return c > 0 || c == 0 && (r.Min.Ex || r.Max.Ex)
}

func (r LexRange) aboveMin(m []byte) bool {
	switch r.Min.Inf {
	case -1:
		return true
	case 1:
		return false
	}
	c := bytes.Compare(m, r.Min.Value)
	return c > 0 || c == 0 && !r.Min.Ex
}

func (r LexRange) belowMax(m []byte) bool {
	switch r.Max.Inf {
	case 1:
		return true
	case -1:
		return false
	}
	c := bytes.Compare(m, r.Max.Value)
	return c < 0 || c == 0 && !r.Max.Ex
}

// LexSpan is the ranks [lo, hi) of the members in r, found as Redis's
// walk finds them: from the head, the first member at or above the
// minimum, then those up to the maximum (from the tail when rev: the last
// member at or below the maximum, then back to the minimum).
func LexSpan(z Reader, r LexRange, rev bool) (lo, hi int) {
	n := z.Len()
	if r.Empty() || n == 0 {
		return 0, 0
	}
	if !rev {
		lo = 0
		for lo < n && !r.aboveMin(z.At(lo).Member) {
			lo++
		}
		hi = lo
		for hi < n && r.belowMax(z.At(hi).Member) {
			hi++
		}
		return lo, hi
	}
	hi = n
	for hi > 0 && !r.belowMax(z.At(hi-1).Member) {
		hi--
	}
	lo = hi
	for lo > 0 && r.aboveMin(z.At(lo-1).Member) {
		lo--
	}
	return lo, hi
}

// RankSpan is the ranks [lo, hi) of ZRANGE's start and stop (negative
// from the end) over n entries.
func RankSpan(n int, start, stop int64) (lo, hi int) {
	ln := int64(n)
	if start < 0 {
		start += ln
	}
	if stop < 0 {
		stop += ln
	}
	start = max(start, 0)
	if start > stop || start >= ln {
		return 0, 0
	}
	stop = min(stop, ln-1)
	return int(start), int(stop + 1)
}

// Aggregate is how Combine merges one member's weighted scores.
type Aggregate uint8

// ZUNIONSTORE's and ZINTERSTORE's AGGREGATE.
const (
	Sum Aggregate = iota
	Min
	Max
)

// apply merges v into t as redis-server's zunionInterAggregate does: a
// NaN sum (inf + -inf) is 0, and a NaN v (0 × inf) never wins MIN or MAX.
func (a Aggregate) apply(t, v float64) float64 {
	switch a {
	case Min:
		if v < t {
			return v
		}
		return t
	case Max:
		if v > t {
			return v
		}
		return t
	}
	s := t + v
	if math.IsNaN(s) {
		return 0
	}
	return s
}

// Op is Combine's operation.
type Op uint8

// The operations of ZUNION, ZINTER and ZDIFF.
const (
	Union Op = iota
	Inter
	Diff
)

// Source is one input of Combine: a sorted set (or a plain set through
// FromSet; nil: a missing key) and its weight.
type Source struct {
	Z      Reader
	Weight float64
}

func (s Source) len() int {
	if s.Z == nil {
		return 0
	}
	return s.Z.Len()
}

// weighted is score × weight, a NaN product (0 × inf) as 0.
func weighted(score, weight float64) float64 {
	if p := score * weight; !math.IsNaN(p) {
		return p
	}
	return 0
}

// Combine puts into out (emptied first) the result of op over srcs as
// redis-server 7.0 computes it (VZ4): for a union and an intersection the
// inputs are taken from the smallest to the largest (ties in the given
// order), each member's weighted scores merged by agg in that order; an
// intersection stops counting at limit (0: none) and Combine returns the
// count; a difference keeps the first input's members and scores.
func Combine(out *Entries, srcs []Source, op Op, agg Aggregate, limit int) int {
	out.Reset()
	if op != Diff {
		srcs = slices.Clone(srcs)
		slices.SortStableFunc(srcs, func(a, b Source) int { return a.len() - b.len() })
	}
	if len(srcs) == 0 || srcs[0].len() == 0 && op != Union {
		return 0
	}
	switch op {
	case Inter:
		lookups := make([]func([]byte) (float64, bool), len(srcs))
		for j := 1; j < len(srcs); j++ {
			lookups[j] = lookup(srcs[j].Z)
		}
		first := srcs[0]
		for i := range first.Z.Len() {
			e := first.Z.At(i)
			score := weighted(e.Score, first.Weight)
			ok := true
			for j := 1; j < len(srcs) && ok; j++ {
				var v float64
				if v, ok = lookups[j](e.Member); ok {
					score = agg.apply(score, v*srcs[j].Weight)
				}
			}
			if ok {
				out.e = append(out.e, Entry{e.Member, score})
				if limit > 0 && len(out.e) >= limit {
					break
				}
			}
		}
	case Union:
		at := map[string]int{}
		for _, s := range srcs {
			for i := range s.len() {
				e := s.Z.At(i)
				score := weighted(e.Score, s.Weight)
				if j, ok := at[string(e.Member)]; ok {
					out.e[j].Score = agg.apply(out.e[j].Score, score)
					continue
				}
				at[string(e.Member)] = len(out.e)
				out.e = append(out.e, Entry{e.Member, score})
			}
		}
	case Diff:
		lookups := make([]func([]byte) (float64, bool), len(srcs))
		for j := 1; j < len(srcs); j++ {
			lookups[j] = lookup(srcs[j].Z)
		}
		first := srcs[0].Z
		for i := range first.Len() {
			e := first.At(i)
			in := false
			for j := 1; j < len(srcs) && !in; j++ {
				_, in = lookups[j](e.Member)
			}
			if !in {
				out.e = append(out.e, e)
			}
		}
	}
	slices.SortFunc(out.e, Compare)
	return len(out.e)
}

// lookup is a member → score lookup of z: a map for a sorted set of more
// than a few entries (its Score scans), z's own for the rest.
func lookup(z Reader) func([]byte) (float64, bool) {
	if z == nil {
		return func([]byte) (float64, bool) { return 0, false }
	}
	if e, ok := z.(*Entries); ok && e.Len() > 16 {
		m := make(map[string]float64, e.Len())
		for _, x := range e.e {
			m[string(x.Member)] = x.Score
		}
		return func(b []byte) (float64, bool) {
			v, ok := m[string(b)]
			return v, ok
		}
	}
	return z.Score
}

// setReader reads a plain set as a sorted set whose scores are all 1, as
// Redis's sorted-set algebra reads a set.
type setReader struct{ s set.Set }

// FromSet is s read as a sorted set of scores 1.
func FromSet(s set.Set) Reader { return setReader{s} }

func (r setReader) Len() int       { return r.s.Len() }
func (r setReader) At(i int) Entry { return Entry{r.s.At(i), 1} }
func (r setReader) Score(m []byte) (float64, bool) {
	if r.s.Has(m) {
		return 1, true
	}
	return 0, false
}

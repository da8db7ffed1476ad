package flusher

import (
	"cmp"
	"slices"
)

// maxClasses is how many classes Item.Class names; maxWeight bounds a
// class's weight so that sums of weights never overflow.
const (
	maxClasses = 256
	maxWeight  = 1 << 20
)

// class is what the queue holds of one class of items (Options.Weights).
type class struct {
	n        int   // items queued
	bytes    int64 // their key and value bytes
	dropFrom int   // slots of q before it hold no droppable item of this class
}

// shares keeps the weighted shares (F14): nil when Options.Weights is.
type shares struct {
	w   []int64 // weight of each class
	cls []class
}

func newShares(weights []int) *shares {
	if weights == nil {
		return nil
	}
	s := &shares{w: make([]int64, maxClasses), cls: make([]class, maxClasses)}
	for i := range s.w {
		s.w[i] = 1
		if i < len(weights) && weights[i] > 0 {
			s.w[i] = int64(weights[i])
		}
	}
	return s
}

func (s *shares) add(it *Item, sign int) {
	if s == nil {
		return
	}
	c := &s.cls[it.class]
	c.n += sign
	c.bytes += int64(sign) * it.size()
}

// pastShare returns the classes holding more of the queue (the larger
// of their fractions of its items and of its bytes, with the incoming
// item counted to class in) than their weight's share of the weights of
// the classes queued, furthest past it first.
func (s *shares) pastShare(in uint8, items int, bytes int64) []uint8 {
	used := func(c int) float64 {
		n, b := float64(s.cls[c].n), float64(s.cls[c].bytes)
		if c == int(in) {
			n++
		}
		return max(n/float64(items), b/float64(bytes))
	}
	var sum int64
	for i := range s.cls {
		if s.cls[i].n > 0 || i == int(in) {
			sum += s.w[i]
		}
	}
	var out []uint8
	var past []float64 // used/share of out[i]
	for i := range s.cls {
		if s.cls[i].n == 0 && i != int(in) {
			continue
		}
		if r := used(i) * float64(sum) / float64(s.w[i]); r > 1 {
			j, _ := slices.BinarySearchFunc(past, r, func(a, b float64) int { return cmp.Compare(b, a) })
			out, past = slices.Insert(out, j, uint8(i)), slices.Insert(past, j, r)
		}
	}
	return out
}

// quotas are each class's items in a batch of n while the classes with
// items queued share it by weight (at least one each); false when only
// one class has items queued.
func (s *shares) quotas(n int) ([]int, bool) {
	var sum int64
	k := 0
	for i := range s.cls {
		if s.cls[i].n > 0 {
			sum += s.w[i]
			k++
		}
	}
	if k < 2 {
		return nil, false
	}
	q := make([]int, maxClasses)
	for i := range s.cls {
		if s.cls[i].n > 0 {
			q[i] = max(1, int(int64(n)*s.w[i]/sum))
		}
	}
	return q, true
}

// resetDrops forgets every class's dropFrom (the queue was compacted):
// the next drop of a class scans from the head again, at most once per
// compaction, which itself follows as many removals as slots it drops.
func (s *shares) resetDrops() {
	if s == nil {
		return
	}
	for i := range s.cls {
		s.cls[i].dropFrom = 0
	}
}

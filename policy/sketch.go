package policy

import (
	"math/bits"
	"sync"
	"sync/atomic"
)

// sketch is a count-min sketch of 4-bit saturating counters (depth 4), packed
// sixteen to a uint64, updated with atomic compare-and-swap so any number of
// goroutines may record at once. After sampleSize increments every counter is
// halved (the "reset" of TinyLFU, Einziger et al. 2015), so old popularity
// decays.
type sketch struct {
	rows       [4][]atomic.Uint64
	mask       uint64 // counters per row - 1 (a power of two minus one)
	additions  atomic.Int64
	sampleSize int64
	resetMu    sync.Mutex
	door       *doorkeeper
}

func newSketch(counters int) *sketch {
	n := uint64(1) << bits.Len64(uint64(counters-1)) // round up to a power of two
	if n < 16 {
		n = 16
	}
	s := &sketch{mask: n - 1, sampleSize: int64(n) * 10, door: newDoorkeeper(int(n))}
	for i := range s.rows {
		s.rows[i] = make([]atomic.Uint64, n/16)
	}
	return s
}

// seeds decorrelate the four rows (odd 64-bit constants).
var seeds = [4]uint64{0x9e3779b97f4a7c15, 0xbf58476d1ce4e5b9, 0x94d049bb133111eb, 0xd6e8feb86659fd93}

func (s *sketch) index(h uint64, row int) uint64 {
	x := (h ^ seeds[row]) * seeds[(row+1)&3]
	return (x >> 32) & s.mask
}

// increment counts one access of h. The first access of a key only sets its
// doorkeeper bit; the sketch counts from the second one on.
func (s *sketch) increment(h uint64) { s.add(h, 1) }

// add counts n accesses of h (n ≥ 1): the doorkeeper bit takes the first if
// it was clear, each counter takes the rest, saturating at 15.
func (s *sketch) add(h uint64, n uint64) {
	accesses := int64(n)
	if !s.door.testAndSet(h) {
		n--
	}
	for r := 0; r < 4 && n > 0; r++ {
		i := s.index(h, r)
		w := &s.rows[r][i/16]
		shift := (i % 16) * 4
		for {
			old := w.Load()
			c := (old >> shift) & 0xf
			if c == 0xf {
				break
			}
			if w.CompareAndSwap(old, old+(min(n, 0xf-c)<<shift)) {
				break
			}
		}
	}
	s.tick(accesses)
}

func (s *sketch) tick(n int64) {
	if s.additions.Add(n) >= s.sampleSize {
		s.reset()
	}
}

// estimate is the access count of h: the doorkeeper bit plus the smallest of
// its four counters (0 for a key never seen).
func (s *sketch) estimate(h uint64) int {
	if !s.door.test(h) {
		return 0
	}
	min := uint64(15)
	for r := 0; r < 4; r++ {
		i := s.index(h, r)
		c := (s.rows[r][i/16].Load() >> ((i % 16) * 4)) & 0xf
		if c < min {
			min = c
		}
	}
	return int(min) + 1
}

// reset halves every counter and clears the doorkeeper.
func (s *sketch) reset() {
	if !s.resetMu.TryLock() {
		return
	}
	defer s.resetMu.Unlock()
	if s.additions.Load() < s.sampleSize {
		return
	}
	for r := range s.rows {
		for i := range s.rows[r] {
			w := &s.rows[r][i]
			for {
				old := w.Load()
				if w.CompareAndSwap(old, (old>>1)&0x7777777777777777) {
					break
				}
			}
		}
	}
	s.door.clear()
	s.additions.Store(0)
}

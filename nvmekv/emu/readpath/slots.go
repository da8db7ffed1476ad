package readpath

import "sync"

// slots hands out read slots (indexes into the read slab) n at a time, all
// or nothing, first come first served. A caller never holds slots while it
// waits for more (Reader.Read returns a wave's slots before taking the next
// wave's), so there is no hold-and-wait and no deadlock between concurrent
// batches; FIFO order keeps a large request from starving behind small ones.
type slots struct {
	mu    sync.Mutex
	total int
	free  []int
	waits []*slotWait
}

type slotWait struct {
	n     int
	got   []int
	ready chan struct{}
}

func newSlots(n int) *slots {
	s := &slots{total: n, free: make([]int, n)}
	for i := range s.free {
		s.free[i] = n - 1 - i
	}
	return s
}

// get appends n slots to dst, waiting until n are free and every earlier
// waiter has been served. n must be in 0..total.
func (s *slots) get(dst []int, n int) []int {
	if n <= 0 {
		return dst
	}
	s.mu.Lock()
	if len(s.waits) == 0 && len(s.free) >= n {
		dst = s.takeLocked(dst, n)
		s.mu.Unlock()
		return dst
	}
	w := &slotWait{n: n, got: dst, ready: make(chan struct{})}
	s.waits = append(s.waits, w)
	s.mu.Unlock()
	<-w.ready
	return w.got
}

func (s *slots) takeLocked(dst []int, n int) []int {
	dst = append(dst, s.free[len(s.free)-n:]...)
	s.free = s.free[:len(s.free)-n]
	return dst
}

// put returns slots and serves waiters in order while their n fits.
func (s *slots) put(idx []int) {
	if len(idx) == 0 {
		return
	}
	s.mu.Lock()
	s.free = append(s.free, idx...)
	for len(s.waits) > 0 && len(s.free) >= s.waits[0].n {
		w := s.waits[0]
		s.waits[0] = nil
		s.waits = s.waits[1:]
		w.got = s.takeLocked(w.got, w.n)
		close(w.ready)
	}
	s.mu.Unlock()
}

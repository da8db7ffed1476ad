package readpath

import (
	"runtime"
	"testing"
	"time"
)

// TestSlotsAllOrNothing: a request for every slot waits for all of them
// while others hold some, then is served before later small requests.
func TestSlotsAllOrNothing(t *testing.T) {
	s := newSlots(4)
	a := s.get(nil, 3)
	got := make(chan []int)
	go func() { got <- s.get(nil, 4) }()
	for {
		s.mu.Lock()
		n := len(s.waits)
		s.mu.Unlock()
		if n == 1 {
			break
		}
		runtime.Gosched()
	}
	small := make(chan []int)
	go func() { small <- s.get(nil, 1) }() // one is free, but the big waiter is first
	select {
	case <-got:
		t.Fatal("get(4) returned with 3 of 4 slots taken")
	case <-small:
		t.Fatal("get(1) overtook an earlier waiter")
	case <-time.After(20 * time.Millisecond):
	}
	s.put(a)
	all := <-got
	if len(all) != 4 {
		t.Fatalf("get(4) = %v", all)
	}
	s.put(all)
	if one := <-small; len(one) != 1 {
		t.Fatalf("get(1) = %v", one)
	}
}

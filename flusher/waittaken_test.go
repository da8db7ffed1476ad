package flusher

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestWaitTaken (F12): WaitTaken waits for a batch held in flight when it
// was called, returns once that batch's OnDone returned, and is not held
// by batches taken after the call; a context that ends makes it return
// false.
func TestWaitTaken(t *testing.T) {
	s := newRecStore()
	s.gate = make(chan struct{})
	var done atomic.Int64
	f := newFlusher(t, Options{Store: s, BatchItems: 1, InFlight: 2, BatchDelay: time.Microsecond,
		OnDone: func(*Item, error) { done.Add(1) }})
	t.Cleanup(func() {
		select {
		case <-s.gate:
		default:
			close(s.gate)
		}
	})
	if !f.WaitTaken(context.Background()) {
		t.Fatal("WaitTaken with nothing in flight returned false")
	}
	f.Enqueue(item("first", "x"))
	for f.Stats().InFlight == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if f.WaitTaken(ctx) {
		t.Fatal("WaitTaken returned true while the batch taken before it is held in flight")
	}
	got := make(chan int64, 1)
	go func() {
		f.WaitTaken(context.Background())
		got <- done.Load()
	}()
	time.Sleep(10 * time.Millisecond)
	select {
	case <-got:
		t.Fatal("WaitTaken returned while its batch is in flight")
	default:
	}
	// A second gate holds the batch taken after the call: it must not
	// hold WaitTaken once the first batch is through.
	s.mu.Lock()
	first := s.gate
	s.gate = make(chan struct{})
	s.mu.Unlock()
	f.Enqueue(item("second", "y"))
	for f.Stats().InFlight < 2 {
		time.Sleep(time.Millisecond)
	}
	close(first)
	if n := <-got; n < 1 {
		t.Fatalf("WaitTaken returned before the first batch's OnDone (%d done)", n)
	}
	if f.Stats().InFlight != 1 {
		t.Fatalf("in flight %d, want the second batch still held", f.Stats().InFlight)
	}
	close(s.gate)
}

package flusher

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestWaitRoom checks F10: WaitRoom returns at once while the flusher holds
// at most the limit (queued and in flight), waits while it holds more until
// the store completes enough, gives up when its context ends, and counts the
// waits.
func TestWaitRoom(t *testing.T) {
	s := newRecStore()
	s.gate = make(chan struct{})
	f := newFlusher(t, Options{Store: s, BatchItems: 2, BatchDelay: time.Millisecond, InFlight: 1})
	if !f.WaitRoom(context.Background(), 0) {
		t.Fatal("WaitRoom on an empty flusher waited")
	}
	for i := 0; i < 6; i++ {
		if err := f.Enqueue(item(fmt.Sprintf("k%d", i), "0123456789")); err != nil {
			t.Fatal(err)
		}
	}
	if h := f.Held(); h != 6*12 {
		t.Fatalf("Held = %d, want %d (6 items of 12 bytes, queued or in flight)", h, 6*12)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if f.WaitRoom(ctx, 24) {
		t.Fatal("WaitRoom returned true while the store held every batch back")
	}
	done := make(chan bool)
	go func() { done <- f.WaitRoom(context.Background(), 24) }()
	select {
	case <-done:
		t.Fatal("WaitRoom returned before the store completed anything")
	case <-time.After(20 * time.Millisecond):
	}
	close(s.gate) // the store completes every batch
	if !<-done {
		t.Fatal("WaitRoom gave up although the flusher drained")
	}
	if h := f.Held(); h > 24 {
		t.Fatalf("WaitRoom returned with %d bytes held, above its limit 24", h)
	}
	if st := f.Stats(); st.Throttled != 2 || st.ThrottleWait <= 0 {
		t.Fatalf("Throttled %d, ThrottleWait %v: want the 2 waits counted", st.Throttled, st.ThrottleWait)
	}
	if err := f.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if h := f.Held(); h != 0 {
		t.Fatalf("Held = %d after Drain", h)
	}
}

// TestHeapHeld (F10): HeapHeld counts the keys of every item and the values
// of those not marked OffHeap, queued, in flight or dropped, and is back at
// 0 once every item completed.
func TestHeapHeld(t *testing.T) {
	s := newRecStore()
	s.gate = make(chan struct{})
	f := newFlusher(t, Options{Store: s, BatchItems: 2, BatchDelay: time.Millisecond, InFlight: 1, QueueBytes: 60, Overload: Shed})
	// Cleanups run last first: a failed check opens the gate before
	// f.Close waits for the batch held at it.
	gateOpen := false
	t.Cleanup(func() {
		if !gateOpen {
			close(s.gate)
		}
	})
	for i := range 4 {
		it := item(fmt.Sprintf("k%d", i), "0123456789") // 2 + 10 bytes
		it.OffHeap = i%2 == 1
		if err := f.Enqueue(it); err != nil {
			t.Fatal(err)
		}
	}
	if h, held := f.HeapHeld(), f.Held(); h != 2*12+2*2 || held != 4*12 {
		t.Fatalf("HeapHeld %d, Held %d: want %d (two copies and two keys) and %d", h, held, 2*12+2*2, 4*12)
	}
	// Past QueueBytes an Enqueue drops the oldest item not yet taken (Shed); the
	// batches the dispatcher took (in flight, or waiting for the one
	// in-flight slot) are held on top of the pending bytes.
	for i := 4; i < 8; i++ {
		if err := f.Enqueue(item(fmt.Sprintf("k%d", i), "0123456789")); err != nil {
			t.Fatal(err)
		}
	}
	h, held, st := f.HeapHeld(), f.Held(), f.Stats()
	if h > held || st.QueueBytes > 60 || held < st.QueueBytes {
		t.Fatalf("HeapHeld %d, Held %d, pending %d after drops: want HeapHeld <= Held, pending <= 60 and Held >= pending", h, held, st.QueueBytes)
	}
	close(s.gate)
	gateOpen = true
	if err := f.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if h := f.HeapHeld(); h != 0 {
		t.Fatalf("HeapHeld = %d after Drain, want 0", h)
	}
}

// TestWaitQueue checks F11: WaitQueue returns at once while few enough
// items are queued, waits while more are (deletes past QueueItems
// included) until the store takes them, gives up when its context ends,
// and is not counted as a writer's wait.
func TestWaitQueue(t *testing.T) {
	s := newRecStore()
	s.gate = make(chan struct{})
	f := newFlusher(t, Options{Store: s, BatchItems: 2, BatchDelay: time.Millisecond, InFlight: 1, QueueItems: 4})
	if !f.WaitQueue(context.Background(), 0, 0) {
		t.Fatal("WaitQueue on an empty flusher waited")
	}
	// A put whose batch the store holds back, then deletes behind it.
	if err := f.Enqueue(item("p", "v")); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		if err := f.Enqueue(&Item{Key: []byte(fmt.Sprintf("d%d", i)), Delete: true}); err != nil {
			t.Fatal(err)
		}
	}
	if q := f.Stats().Queue; q < 8 {
		t.Fatalf("%d items queued, want the deletes past QueueItems (4) kept", q)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if f.WaitQueue(ctx, 2, 1<<20) {
		t.Fatal("WaitQueue returned true while the store held every batch back")
	}
	done := make(chan bool)
	go func() { done <- f.WaitQueue(context.Background(), 2, 1<<20) }()
	close(s.gate)
	if !<-done {
		t.Fatal("WaitQueue gave up although the flusher drained")
	}
	if q := f.Stats().Queue; q > 2 {
		t.Fatalf("WaitQueue returned with %d items queued, above its limit 2", q)
	}
	if st := f.Stats(); st.Throttled != 0 {
		t.Fatalf("Throttled %d: WaitQueue's waits were counted as writers'", st.Throttled)
	}
}

package flusher

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

// goroutineStore records the goroutine each PutMany runs on.
type goroutineStore struct {
	mu  sync.Mutex
	ids map[uint64]int // goroutine id → batches it ran
	n   int
}

// goid parses the current goroutine's id from the first line of its
// stack trace ("goroutine 123 [running]:"), for this test only.
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	id, _ := strconv.ParseUint(string(b[:bytes.IndexByte(b, ' ')]), 10, 64)
	return id
}

func (s *goroutineStore) PutMany(ctx context.Context, items []*Item) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids[goid()]++
	s.n++
	return nil
}

func (s *goroutineStore) Delete(ctx context.Context, key []byte) error { return nil }

// TestBatchesRunOnFixedRunners: F16, every batch runs on one of at most
// InFlight goroutines for the flusher's life, however many batches there
// are (a goroutine a batch gave each batch a new id).
func TestBatchesRunOnFixedRunners(t *testing.T) {
	s := &goroutineStore{ids: map[uint64]int{}}
	const inFlight, batches = 3, 200
	f := newFlusher(t, Options{Store: s, BatchItems: 2, BatchDelay: time.Hour, InFlight: inFlight})
	for i := range batches * 2 {
		if err := f.Enqueue(item(fmt.Sprint("k", i), "v")); err != nil {
			t.Fatal(err)
		}
		if i%50 == 49 { // some batches closed by Drain, some with others in flight
			if err := f.Drain(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := f.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n < batches || len(s.ids) > inFlight {
		t.Fatalf("%d batches ran on %d goroutines, want >= %d batches on at most %d", s.n, len(s.ids), batches, inFlight)
	}
	if st := f.Stats(); st.Written != batches*2 {
		t.Fatalf("written %d, want %d", st.Written, batches*2)
	}
	f.Close()
	// Close stopped the runners: a closed flusher refuses, and Close again returns.
	if err := f.Enqueue(item("late", "v")); err == nil {
		t.Fatal("Enqueue after Close succeeded")
	}
	f.Close()
}

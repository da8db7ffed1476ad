package flusher

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestSharesKeepAClassFromStarving (F14): with weighted shares in Shed
// mode, a class flooding the queue past its bound drops its own items, not another
// class's, and while two classes have items queued each batch carries
// each one's share: the quiet class's items all reach the store in the
// first batches after the device frees up. The control, one FIFO, drops
// the quiet class's items too, so the test tells shares from none.
func TestSharesKeepAClassFromStarving(t *testing.T) {
	run := func(weights []int) (drops map[byte]int, aBatches []int, aWritten int) {
		st := newRecStore()
		st.gate = make(chan struct{})
		var mu sync.Mutex
		drops = map[byte]int{}
		f := newFlusher(t, Options{Store: st, QueueItems: 64, BatchItems: 8, InFlight: 1, BatchDelay: time.Millisecond, Overload: Shed,
			Weights: weights, ClassOf: func(k []byte) uint8 { return map[byte]uint8{'a': 1, 'b': 2}[k[0]] },
			OnDrop: func(it *Item, why Reason) { mu.Lock(); drops[it.Key[0]]++; mu.Unlock() }})
		if err := f.Enqueue(&Item{Key: []byte("x0"), Value: []byte("v")}); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			st.mu.Lock()
			n := len(st.batches)
			st.mu.Unlock()
			if n == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the first batch never reached the store")
			}
		}
		for i := range 1000 { // b's flood, 20 times a's writes, a's among them
			if i%100 == 50 {
				f.Enqueue(&Item{Key: fmt.Appendf(nil, "a%d", i), Value: []byte("v")})
			}
			f.Enqueue(&Item{Key: fmt.Appendf(nil, "b%d", i), Value: []byte("v")})
		}
		close(st.gate)
		f.Close()
		for i, b := range st.batches {
			for _, k := range b {
				if k[0] == 'a' {
					aBatches = append(aBatches, i)
					aWritten++
				}
			}
		}
		mu.Lock()
		defer mu.Unlock()
		return drops, aBatches, aWritten
	}
	drops, aBatches, aWritten := run([]int{1, 1, 1})
	if drops['a'] != 0 || aWritten != 10 || drops['b'] == 0 {
		t.Fatalf("with shares: drops %v, a's writes %d of 10", drops, aWritten)
	}
	// a's quota is half of each batch of 8 while b has items queued.
	if last := aBatches[len(aBatches)-1]; last > 3 {
		t.Fatalf("with shares a's writes were in batches %v (batch 0 was held), not the first three after it", aBatches)
	}
	t.Logf("with shares: drops %v, a written in batches %v", drops, aBatches)
	drops, aBatches, aWritten = run(nil)
	if drops['a'] == 0 || aWritten+drops['a'] != 10 {
		t.Fatalf("one FIFO: drops %v, a's writes %d: the control dropped none of a's", drops, aWritten)
	}
	t.Logf("one FIFO: drops %v, a written in batches %v", drops, aBatches)
}

package server

import (
	"testing"
)

// TestLMoveIsOneStep checks S23: LMOVE and RPOPLPUSH move an element as
// one step for every other connection. A single element goes back and
// forth between two keys; a reader asking EXISTS of both keys at once,
// with no transaction, always finds one of them.
func TestLMoveIsOneStep(t *testing.T) {
	tc := newTierCache(t)
	_, path := startServerWith(t, tc, nil)
	m := dialRaw(t, path)
	m.expect([]step{{[]string{"RPUSH", "a", "x"}, ":1"}})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 2000; i++ {
			if i%2 == 0 {
				m.cmd("LMOVE", "a", "b", "LEFT", "RIGHT")
			} else {
				m.cmd("RPOPLPUSH", "b", "a")
			}
			if got := m.reply(); got != "$x" {
				t.Errorf("move %d: %q", i, got)
				return
			}
		}
	}()
	r := dialRaw(t, path)
	for n := 0; ; n++ {
		select {
		case <-done:
			if n == 0 {
				t.Fatal("the reader never ran during the moves")
			}
			return
		default:
		}
		r.cmd("EXISTS", "a", "b")
		if got := r.reply(); got != ":1" {
			t.Fatalf("EXISTS a b = %s during the moves: the element was on neither list (or both)", got)
		}
	}
}

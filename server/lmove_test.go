package server

import (
	"strings"
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

// TestLMoveRefusedChangesNothing: an LMOVE (or RPOPLPUSH) refused because
// dst is at max_list_elements leaves src as it was, element and TTL.
func TestLMoveRefusedChangesNothing(t *testing.T) {
	_, path := startServerWith(t, newTierCache(t), func(o *Options) { o.MaxListElements = 2 })
	r := dialRaw(t, path)
	r.expect([]step{
		{[]string{"RPUSH", "src", "only"}, ":1"},
		{[]string{"EXPIRE", "src", "100"}, ":1"},
		{[]string{"RPUSH", "dst", "a", "b"}, ":2"},
	})
	r.cmd("LMOVE", "src", "dst", "LEFT", "RIGHT")
	if got := r.reply(); !strings.HasPrefix(got, "-ERR") {
		t.Fatalf("LMOVE onto a full list = %q, want an error", got)
	}
	r.cmd("RPOPLPUSH", "src", "dst")
	if got := r.reply(); !strings.HasPrefix(got, "-ERR") {
		t.Fatalf("RPOPLPUSH onto a full list = %q, want an error", got)
	}
	r.expect([]step{
		{[]string{"LRANGE", "src", "0", "-1"}, "*[$only]"},
		{[]string{"LLEN", "dst"}, ":2"},
	})
	r.cmd("TTL", "src")
	if got := r.reply(); got == ":-1" || got == ":-2" {
		t.Fatalf("TTL src after the refused moves = %s: the refusal changed src", got)
	}
}

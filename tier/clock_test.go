package tier

import (
	"testing"
	"time"
)

// TestWallClockFollowsTheWallClock (T34): the default clock reads what
// time.Now reads, within the drift a second of monotonic time allows, and a
// base older than a second (or one the wall clock stepped away from) is
// replaced by a fresh reading at the next call.
func TestWallClockFollowsTheWallClock(t *testing.T) {
	w := newWallClock()
	for range 1000 {
		before := time.Now().UnixNano()
		got := w.now()
		after := time.Now().UnixNano()
		if got < before-int64(time.Millisecond) || got > after+int64(time.Millisecond) {
			t.Fatalf("now() = %d, outside [%d, %d] by more than 1 ms", got, before, after)
		}
	}
	// A sync a minute in the past, as if the wall clock had stepped: the
	// next call takes the wall clock again.
	stale := time.Now().Add(-time.Minute)
	w.base.Store(&stale)
	if got, want := w.now(), time.Now().UnixNano(); got < want-int64(time.Second) {
		t.Fatalf("after a stale base now() = %d, %v behind the wall clock", got, time.Duration(want-got))
	}
	if b := w.base.Load(); time.Since(*b) > time.Second {
		t.Fatalf("the stale base was kept: %v old", time.Since(*b))
	}
}

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

// TestNowOfIsNowAtTheReading (T34): NowOf of a time.Now reading lies
// between the cache's Now before and after it; a reading derived by Add
// keeps its offset; a reading from before the last sync, and any reading
// with a Clock given in Options, answer the clock's time.
func TestNowOfIsNowAtTheReading(t *testing.T) {
	c, err := Open(Options{HotBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for range 1000 {
		before := c.Now()
		got := c.NowOf(time.Now())
		after := c.Now()
		if got < before || got > after {
			t.Fatalf("NowOf(time.Now()) = %d, outside [%d, %d]", got, before, after)
		}
	}
	for try := 0; ; try++ { // again if the sweeper's clock read synced meanwhile
		b := c.o.wall.base.Load()
		got, want := c.NowOf(b.Add(300*time.Millisecond)), b.UnixNano()+int64(300*time.Millisecond)
		if got == want {
			break
		}
		if c.o.wall.base.Load() == b || try == 10 {
			t.Fatalf("NowOf(sync + 300ms) = %d, want %d", got, want)
		}
	}
	before := c.Now()
	if got := c.NowOf(time.Now().Add(-time.Hour)); got < before {
		t.Fatalf("a reading an hour old answered %d, before Now %d", got, before)
	}
	fixed := int64(42 * time.Second)
	f, err := Open(Options{HotBytes: 1 << 20, Clock: func() int64 { return fixed }})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := f.NowOf(time.Now()); got != fixed {
		t.Fatalf("with a test Clock NowOf = %d, want the clock's %d", got, fixed)
	}
}

// TestReadsAndWritesAtTheCallersTime: ViewBigAt decides a key's expiry by
// the caller's time, and a Set with SetOptions.Now counts its TTL from
// it (T53); 0 takes the cache's clock.
func TestReadsAndWritesAtTheCallersTime(t *testing.T) {
	clock := int64(1000 * time.Second)
	c, err := Open(Options{HotBytes: 1 << 20, Clock: func() int64 { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	at := int64(2000 * time.Second) // not the cache's clock
	if _, err := c.Set([]byte("k"), []byte("v"), SetOptions{TTL: 10 * time.Second, Now: at}); err != nil {
		t.Fatal(err)
	}
	exp, ok := c.ExpireTime([]byte("k"))
	if !ok || exp.UnixNano() != at+int64(10*time.Second) {
		t.Fatalf("Set at %d with TTL 10s: expiry %v (%v), want %d", at, exp.UnixNano(), ok, at+int64(10*time.Second))
	}
	for _, tc := range []struct {
		now  int64
		want bool
	}{{at + int64(9*time.Second), true}, {at + int64(10*time.Second), false}, {0, true}} {
		_, _, ok, _, err := c.ViewBigAt(nil, []byte("k"), tc.now, nil, nil)
		if err != nil || ok != tc.want {
			t.Fatalf("ViewBigAt(now %d) found %v (%v), want %v", tc.now, ok, err, tc.want)
		}
	}
	if _, err := c.Set([]byte("j"), []byte("v"), SetOptions{TTL: time.Second}); err != nil {
		t.Fatal(err)
	}
	if exp, _ := c.ExpireTime([]byte("j")); exp.UnixNano() != clock+int64(time.Second) {
		t.Fatalf("Set without Now: expiry %d, want the cache's clock + 1s = %d", exp.UnixNano(), clock+int64(time.Second))
	}
}

package tier

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestFarExpiriesAcrossColdAndRestart (T43): expiries past 2262 (every
// int64 millisecond Redis accepts) are kept exactly, order as their times
// under EXPIREAT's GT and LT, and survive demotion to cold, adoption back
// and a restart, checked against a model.
func TestFarExpiriesAcrossColdAndRestart(t *testing.T) {
	c, o := openTrimming(t, 200)
	defer func() { c.Close() }()
	r := rand.New(rand.NewPCG(7, 43))
	now := time.Now().UnixMilli()
	randMs := func() int64 {
		switch r.IntN(4) {
		case 0:
			return now + 3_600_000 + r.Int64N(1e9) // before 2262
		case 1:
			return 9223372036854 + r.Int64N(1e6) // around the end of int64 nanoseconds
		case 2:
			return math.MaxInt64 - r.Int64N(1e6) // the last milliseconds
		}
		return 1e13 + r.Int64N(math.MaxInt64-1e13) // anywhere past 2262
	}
	const n = 1000
	model := make([]int64, n)
	for i := range n {
		model[i] = randMs()
		if _, err := c.Set(trimKey(i), trimValue(i, 0), SetOptions{ExpireAt: time.UnixMilli(model[i])}); err != nil {
			t.Fatal(err)
		}
		ms := randMs()
		cond := []ExpireCond{ExpireGT, ExpireLT, 0}[r.IntN(3)]
		want := cond == 0 || cond == ExpireGT && ms > model[i] || cond == ExpireLT && ms < model[i]
		got, err := c.ExpireAtIf(trimKey(i), time.UnixMilli(ms), cond)
		if err != nil || got != want {
			t.Fatalf("key %d: EXPIREAT %d (cond %d) over %d: %v, %v; want %v", i, ms, cond, model[i], got, err, want)
		}
		if want {
			model[i] = ms
		}
	}
	settle(t, c)
	waitTrimmed(t, c, n/2) // most forgotten, their value in cold alone (a key retimed keeps its entry until its cold copy is rewritten, T17)
	check := func(when string) {
		t.Helper()
		for i := range n {
			at, ok := c.ExpireTime(trimKey(i))
			if !ok || at.UnixMilli() != model[i] {
				t.Fatalf("%s: key %d expires at %d (%v), want %d", when, i, at.UnixMilli(), ok, model[i])
			}
			if ttl, ok := c.TTL(trimKey(i)); !ok || ttl <= 0 {
				t.Fatalf("%s: key %d: TTL %v, %v", when, i, ttl, ok)
			}
		}
	}
	check("demoted and adopted back")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	var err error
	if c, err = Open(o); err != nil {
		t.Fatal(err)
	}
	check("after a restart")
}

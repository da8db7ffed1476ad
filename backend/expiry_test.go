package backend

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestExpiryEncoding (B3): every unix millisecond Redis accepts
// round-trips, expiries order as their times, one past 2262 never
// expires, and one before keeps its nanoseconds.
func TestExpiryEncoding(t *testing.T) {
	now := time.Now().UnixNano()
	ms := []int64{1, 1000, time.Now().UnixMilli(), farFrom - 1, farFrom, farFrom + 1, 9999999999000, math.MaxInt64 / 1000 * 1000, math.MaxInt64 - 1, math.MaxInt64}
	for range 1000 {
		ms = append(ms, 1+rand.Int64N(math.MaxInt64-1), 1+rand.Int64N(farFrom*2))
	}
	for i, a := range ms {
		ea := ExpiryFromMillis(a)
		if ea == 0 {
			t.Fatalf("ms %d encodes as 0, which means none", a)
		}
		if got := ExpiryMillis(ea); got != a {
			t.Fatalf("ms %d → %d → %d", a, ea, got)
		}
		if got := ExpiryTime(ea).UnixMilli(); got != a {
			t.Fatalf("ms %d: ExpiryTime %d", a, got)
		}
		if got := ExpiryAt(time.UnixMilli(a)); got != ea {
			t.Fatalf("ms %d: ExpiryAt %d, ExpiryFromMillis %d", a, got, ea)
		}
		if a >= farFrom && (Expired(ea, now) || ExpiryUntil(ea, now) != math.MaxInt64) {
			t.Fatalf("ms %d past 2262 expired or has a finite TTL", a)
		}
		if a < farFrom && ea != a*int64(time.Millisecond) {
			t.Fatalf("ms %d before 2262 is %d, not its nanoseconds", a, ea)
		}
		b := ms[(i*7+3)%len(ms)]
		want := 0
		if a < b {
			want = -1
		} else if a > b {
			want = 1
		}
		if got := ExpiryCompare(ea, ExpiryFromMillis(b)); got != want {
			t.Fatalf("compare %d, %d: %d, want %d", a, b, got, want)
		}
	}
	if ExpiryAt(time.Unix(-5, 0)) != 1 || !Expired(ExpiryAt(time.Unix(-5, 0)), now) {
		t.Fatal("a time before 1970 is not a passed expiry")
	}
	if got := ExpiryAfter(now, math.MaxInt64); got >= 0 || ExpiryMillis(got) < now/1e6+int64(math.MaxInt64/int64(time.Millisecond)) {
		t.Fatalf("ExpiryAfter a huge TTL: %d", got)
	}
}

package backend

import (
	"math"
	"time"
)

// An expiry (Meta.Expiry, flusher.Item.Expiry, the tier's directory) is a
// unix time in nanoseconds, 0 meaning none, as far as int64 nanoseconds
// reach (the year 2262). A later time, which Redis accepts (its expiries
// are int64 milliseconds), is math.MinInt64 plus its unix milliseconds: a
// negative number, which no expiry was before, so a record written by an
// older tiercache reads the same, and every time before 2262 is stored
// exactly as it was (B3).

// farFrom is the first unix millisecond whose nanoseconds overflow int64.
const farFrom = math.MaxInt64/int64(time.Millisecond) + 1

// ExpiryFromMillis is the expiry at unix millisecond ms (ms > 0).
func ExpiryFromMillis(ms int64) int64 {
	if ms < farFrom {
		return ms * int64(time.Millisecond)
	}
	return math.MinInt64 + ms
}

// ExpiryAt is the expiry at t (not zero); a time before 1970 is the
// earliest expiry, 1 ns, which has passed.
func ExpiryAt(t time.Time) int64 {
	switch {
	case t.Unix() <= 0 && t.UnixNano() <= 0:
		return 1
	case t.Unix() < math.MaxInt64/int64(time.Second):
		if ns := t.UnixNano(); ns > 0 && t.UnixMilli() < farFrom {
			return ns
		}
	}
	return ExpiryFromMillis(t.UnixMilli())
}

// ExpiryMillis is expiry exp's unix millisecond, rounded up (exp ≠ 0).
func ExpiryMillis(exp int64) int64 {
	if exp < 0 {
		return exp - math.MinInt64
	}
	ms := exp / int64(time.Millisecond)
	if exp%int64(time.Millisecond) != 0 {
		ms++
	}
	return ms
}

// ExpiryTime is the time of expiry exp (exp ≠ 0).
func ExpiryTime(exp int64) time.Time {
	if exp < 0 {
		return time.UnixMilli(exp - math.MinInt64)
	}
	return time.Unix(0, exp)
}

// ExpiryAfter is the expiry ttl (> 0) after now (unix ns).
func ExpiryAfter(now int64, ttl time.Duration) int64 {
	if int64(ttl) <= math.MaxInt64-now {
		return now + int64(ttl)
	}
	return ExpiryFromMillis(ExpiryMillis(now) + ExpiryMillis(int64(ttl)))
}

// Expired reports whether expiry exp (0: none) has passed at now (unix
// ns): a time past 2262 has not.
func Expired(exp, now int64) bool { return exp > 0 && exp <= now }

// ExpiryCompare orders two expiries (neither 0) by time.
func ExpiryCompare(a, b int64) int {
	switch {
	case (a < 0) != (b < 0):
		if a < 0 {
			return 1
		}
		return -1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ExpiryUntil is the time from now (unix ns) to expiry exp (≠ 0),
// saturated at the largest Duration.
func ExpiryUntil(exp, now int64) time.Duration {
	if exp < 0 {
		return math.MaxInt64
	}
	return time.Duration(exp - now)
}

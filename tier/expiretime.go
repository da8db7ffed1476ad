package tier

import (
	"math"
	"time"

	"github.com/tiercache/tiercache/backend"
)

// ExpireAtIf is ExpireIf with an absolute expiry (EXPIREAT, PEXPIREAT):
// an at at or before now deletes the key when cond holds. cond compares
// at with the key's current expiry, as Redis does: a past at is earlier
// than the expiry of any live key.
func (c *Cache) ExpireAtIf(key []byte, at time.Time, cond ExpireCond) (bool, error) {
	return c.retime(key, func(now int64, e *entry) (int64, bool) {
		exp := backend.ExpiryAt(at)
		past := backend.Expired(exp, now)
		if past {
			exp = now // deletes (never 0, which means no expiry)
		}
		return exp, cond.allows(e.exp, exp, past)
	})
}

// expiryMillis is expiry exp's millisecond (exp ≠ 0), rounded down, as
// Redis keeps an expiry and as PEXPIRETIME shows it.
func expiryMillis(exp int64) int64 {
	if exp < 0 {
		return exp - math.MinInt64
	}
	return exp / int64(time.Millisecond)
}

// ExpireTime returns key's expiry (the zero Time: none) and whether the
// key exists (EXPIRETIME, PEXPIRETIME).
func (c *Cache) ExpireTime(key []byte) (at time.Time, exists bool) {
	exists = c.withLive(key, func(e *entry, _ int64) {
		if e.exp != 0 {
			at = backend.ExpiryTime(e.exp)
		}
	})
	return at, exists
}

package tier

import (
	"time"

	"github.com/tiercache/tiercache/backend"
)

// ExpireAtIf is ExpireIf with an absolute expiry (EXPIREAT, PEXPIREAT):
// an at at or before now deletes the key when cond holds. cond compares
// at with the key's current expiry, as Redis does; a past at compares as
// now, which orders the same against the expiry of a live key.
func (c *Cache) ExpireAtIf(key []byte, at time.Time, cond ExpireCond) (bool, error) {
	return c.retime(key, func(now int64, e *entry) (int64, bool) {
		exp := backend.ExpiryAt(at)
		if backend.Expired(exp, now) {
			exp = now // a past time compares as now (never 0, which means no expiry)
		}
		return exp, cond.allows(e.exp, exp)
	})
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

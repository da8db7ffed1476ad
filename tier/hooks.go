package tier

// Removal says why a key left the cache without a caller asking: what a
// server tells clients that track keys or listen for keyspace events
// (T46).
type Removal uint8

const (
	// Expired: its expiry passed and the sweep removed it.
	Expired Removal = iota + 1
	// Evicted: no tier holds it any more (lost, dropped, reclaimed: T7).
	// A move between tiers is not a removal.
	Evicted
	// RemoteChanged: another sidecar changed it, and its local copies
	// were dropped (T39).
	RemoteChanged
	// Flushed: every local copy was dropped at once (another sidecar's
	// Clear), or became suspect (invalidations may have been lost, T42);
	// the key is nil.
	Flushed
)

// OnRemoval sets the function told of each removal (nil: none). It runs
// with the key's shard lock held: it must not block nor call the Cache,
// and key is valid only during the call.
func (c *Cache) OnRemoval(fn func(key []byte, why Removal)) {
	if fn == nil {
		c.onRemoval.Store(nil)
		return
	}
	c.onRemoval.Store(&fn)
}

// removed tells the OnRemoval function of a removal.
func (c *Cache) removed(key []byte, why Removal) {
	if fn := c.onRemoval.Load(); fn != nil {
		(*fn)(key, why)
	}
}

// HoldSweep sets the function that holds the background expiry sweep
// while it reports true (nil: never held), as redis-server 7.0 stops
// active expiry while clients are paused (expire.c activeExpireCycle).
// An expired key the sweep leaves is still read as gone; the first sweep
// after the hold purges it (T62). It must not block nor call the Cache.
// Close's drain sweeps regardless.
func (c *Cache) HoldSweep(held func() bool) {
	if held == nil {
		c.sweepHeld.Store(nil)
		return
	}
	c.sweepHeld.Store(&held)
}

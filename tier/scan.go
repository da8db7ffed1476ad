package tier

// Scan returns live keys of the directory from cursor on, whole shards at
// a time in shard order, until at least count keys were taken or every
// shard was visited; next is the cursor to continue from, 0 once the scan
// is complete (Redis's SCAN contract). A key live from a scan's first call
// to its last is returned by exactly one call; a key added or removed
// meanwhile may or may not be. count is a hint: a shard is never split,
// so a call may return more. match, when not nil, keeps only the keys it
// accepts, given each key's kind (SCAN ... TYPE); it runs under a shard's read lock and must not call the cache.
// A cursor past the last shard ends the scan at once, as does a closed
// cache. Keys a cold store holds from an earlier run that this process
// has not touched are not in the directory and are not returned (see
// Caveats).
func (c *Cache) Scan(cursor uint64, count int, match func(key string, kind Kind) bool) (next uint64, keys [][]byte) {
	if cursor >= shardCount || !c.enter() {
		return 0, nil
	}
	defer c.exit()
	now := c.now()
	i := int(cursor)
	for ; i < shardCount && len(keys) < max(count, 1); i++ {
		sh := &c.dir.shards[i]
		sh.mu.RLock()
		for k, e := range sh.m {
			if e.live(now) && (match == nil || match(k, e.kind)) {
				keys = append(keys, []byte(k))
			}
		}
		sh.mu.RUnlock()
	}
	if i == shardCount {
		return 0, keys
	}
	return uint64(i), keys
}

// Frequency is the promotion policy's estimate of how often key was read
// lately (policy.Promotion.Estimate: a count-min sketch of saturating
// counters, 0 to 16, halved as it ages, fed one in policy.SampleEvery hot
// hits), and whether the key exists (OBJECT FREQ).
func (c *Cache) Frequency(key []byte) (int, bool) {
	if _, ok := c.KindOf(key); !ok {
		return 0, false
	}
	lo, _ := hashKey(key)
	return c.pro.Estimate(lo), true
}

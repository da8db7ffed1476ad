package tier

import (
	"context"
	"slices"

	"github.com/tiercache/tiercache/backend"
)

// scanEnd is the end of the cursor space: a cursor is the first cold index
// tag (hashKey) the next call looks at; tags are 32 bits.
const scanEnd = 1 << 32

// scanMinBatch is the fewest cold keys a call asks the store for: each
// call walks its shard's whole map, so a COUNT of 10 would walk it for
// every 10 cold keys.
const scanMinBatch = 64

// scanLockTries is how many times a range's cold keys are read without
// the shard's lock before it is held across the read: a removal from the
// shard's map while they are read (a key forgotten, T15) could hide a
// key from both halves.
const scanLockTries = 3

// Scan returns live keys from cursor on, in the order of their tags
// (hashKey), until at least count keys were taken or the tags ran out;
// next is the cursor to continue from, 0 once the scan is complete
// (Redis's SCAN contract). With a cold keyspace (T37) a call takes a
// range of tags within one shard: the keys cold holds there (from the
// store's index) and the directory's, under the shard's read lock, each
// key once; without one, whole shards. So a key live from a scan's first
// call to its last is returned by exactly one call, whichever tier holds
// it and however it moves between them, and a key added or removed
// meanwhile may or may not be (T13). count is a hint: a call may return
// more. match, when not nil, keeps only the keys it accepts, given each
// key's kind (SCAN ... TYPE); it runs under a shard's read lock and must
// not call the cache. A cursor past the last tag ends the scan at once,
// as does a closed cache.
func (c *Cache) Scan(cursor uint64, count int, match func(key string, kind Kind) bool) (next uint64, keys [][]byte) {
	if cursor >= scanEnd || !c.enter() {
		return 0, nil
	}
	defer c.exit()
	now := c.now()
	from := cursor
	for from < scanEnd && len(keys) < max(count, 1) {
		from, keys = c.scanRange(from, max(count-len(keys), scanMinBatch), now, match, keys)
	}
	if from >= scanEnd {
		return 0, keys
	}
	return from, keys
}

// scanRange appends the live keys whose tags lie in [from, next) to keys
// and returns next: the rest of from's shard without a cold keyspace, else
// about n of the cold keys from there on, within the shard.
func (c *Cache) scanRange(from uint64, n int, now int64, match func(string, Kind) bool, keys [][]byte) (uint64, [][]byte) {
	s := shardOfTag(uint32(from))
	end := uint64(s+1) << 24
	sh := &c.dir.shards[s]
	if c.ks == nil {
		sh.mu.RLock()
		keys = c.scanShardLocked(sh, from, end, now, match, keys)
		sh.mu.RUnlock()
		return end, keys
	}
	// The store's walk knows no end: ask it for about what the shard
	// holds at most, so that it does not read the next shards' records
	// only for them to be dropped here (KEYS, SCAN with a huge COUNT).
	if u, _ := c.ks.UserKeys(); n > int(u/shardCount)*2+scanMinBatch {
		n = int(u/shardCount)*2 + scanMinBatch
	}
	var cold []scanned
	next := end
	for try := 0; ; try++ {
		locked := try == scanLockTries
		sh.mu.RLock()
		epoch := sh.epoch
		if !locked {
			sh.mu.RUnlock()
		}
		cold, next = c.scanCold(from, end, n, cold[:0])
		if !locked {
			sh.mu.RLock()
		}
		if locked || sh.epoch == epoch {
			break
		}
		sh.mu.RUnlock()
	}
	for _, k := range cold {
		if sh.m[string(k.key)] != nil || c.flushedCopy(k.m.Version) || backend.Expired(k.m.Expiry, now) {
			continue // the directory's entry decides (below); flushed (T14); expired
		}
		if match == nil || match(string(k.key), kindOfFlags(k.m.Flags)) {
			keys = append(keys, k.key)
		}
	}
	keys = c.scanShardLocked(sh, from, next, now, match, keys)
	sh.mu.RUnlock()
	return next, keys
}

// scanned is a key a cold scan found.
type scanned struct {
	key []byte
	m   backend.Meta
}

// scanCold appends the user keys cold holds whose tags lie in [from,
// next), about n of them, next ≤ end, and returns next. A cold error is
// logged and counted, and the range's cold keys are left out.
func (c *Cache) scanCold(from, end uint64, n int, out []scanned) ([]scanned, uint64) {
	next, err := c.ks.ScanUserKeys(context.Background(), from, n, func(key []byte, m backend.Meta) {
		out = append(out, scanned{key: slices.Clone(key), m: m})
	})
	if err != nil {
		c.coldError("scan", err)
		return out[:0], end
	}
	if next <= from {
		next = end // a store that made no progress: its range ends here
	}
	if next <= end {
		return out, next
	}
	// The store's range passed the shard's end: keep the shard's part.
	kept := out[:0]
	for _, k := range out {
		lo, _ := hashKey(k.key)
		if uint64(tagOfHash(lo)) < end {
			kept = append(kept, k)
		}
	}
	return kept, end
}

// scanShardLocked appends the live keys of sh's map whose tags lie in
// [from, to) (sh.mu held).
func (c *Cache) scanShardLocked(sh *shard, from, to uint64, now int64, match func(string, Kind) bool, keys [][]byte) [][]byte {
	for k, e := range sh.m {
		t := uint64(tagOfHash(e.node.Hash()))
		if t >= from && t < to && e.live(now) && (match == nil || match(k, e.kind)) {
			keys = append(keys, []byte(k))
		}
	}
	return keys
}

// Frequency is how often key was read lately, and whether it exists
// (OBJECT FREQ): the larger of the promotion policy's estimate
// (policy.Promotion.Estimate, 0 to 16, fed by reads from warm and cold)
// and its tenant's DRAM LFU's (policy.LFU.Frequency, 0 to 15, fed by every
// DRAM hit), both count-min sketches of saturating counters halved as
// they age. A key read from hot is counted only by the second (T71).
func (c *Cache) Frequency(key []byte) (int, bool) {
	if _, ok := c.KindOf(key); !ok {
		return 0, false
	}
	lo, _ := hashKey(key)
	f := c.pro.Estimate(lo)
	if m := c.mem; m != nil {
		m.mu.Lock()
		f = max(f, m.lfus[c.ten.of(key)].Frequency(lo))
		m.mu.Unlock()
	}
	return f, true
}

package tier

import (
	"time"

	"github.com/tiercache/tiercache/flusher"
)

// The directory trim (T15). MaxKeys bounds the directory: above it, the
// background goroutine forgets keys whose only copy is in cold, down to
// 90% of MaxKeys. A forgotten key is still in cold; with coldUnknown set,
// a read that does not find a key in the directory looks it up in cold and
// adopts it, exactly as for a key an earlier run left there.

const (
	// trimEvery is how often the directory's size is checked while passes
	// make progress; trimIdle while they find nothing to forget (every key
	// is in a memory tier or on its way to cold).
	trimEvery = 100 * time.Millisecond
	trimIdle  = time.Second
)

// trim runs one pass if the directory is above MaxKeys. It reports stuck
// when the directory is above MaxKeys and the pass forgot nothing. It never
// waits for the life lock: Flush and Close hold it while they may wait for
// work this goroutine would do.
func (c *Cache) trim() (stuck bool) {
	n, bound := c.dir.keyCount(), c.maxKeys()
	if bound <= 0 || n <= bound || c.pg.flushes.Load() != 0 || !c.life.TryRLock() {
		return false
	}
	defer c.life.RUnlock()
	if c.closed {
		return false
	}
	excess := n - trimTarget(bound)
	// From here on a key missing from the directory may be in cold; set
	// before the first one goes, so a reader that finds it gone asks cold.
	c.coldUnknown.Store(true)
	per := excess/shardCount + 1
	// A pass visits a bounded number of entries per shard lock hold: most
	// may be in memory tiers and not forgettable.
	visits := 4*per + 256
	now := c.now()
	var forgot int64
	for i := 0; i < shardCount && forgot < excess; i++ {
		sh := &c.dir.shards[(c.trimNext+i)%shardCount]
		sh.mu.Lock()
		var k, seen int64
		for ks, e := range sh.m {
			if k >= per || seen >= visits {
				break
			}
			seen++
			if !c.forgettable(ks, e, now) {
				continue
			}
			forgetLocked(sh, ks, e)
			k++
		}
		sh.mu.Unlock()
		forgot += k
	}
	c.trimNext = (c.trimNext + 1) % shardCount
	c.st.forgotten.Add(uint64(forgot))
	return forgot == 0
}

// maxKeys is the directory's bound: MaxKeys, or with forgetCold twice the
// keys DRAM holds plus trimSlack (T37): the keys only cold holds that
// were evicted or read last keep their entries (a read of one is sized
// by the directory and takes no adoption), the others are forgotten.
func (c *Cache) maxKeys() int64 {
	if !c.forgetCold {
		return c.o.MaxKeys
	}
	c.mem.mu.Lock()
	n := c.mem.items[memHot] + c.mem.items[memWarm] + c.mem.items[memLive]
	c.mem.mu.Unlock()
	return 2*int64(n) + c.trimSlack
}

// trimSlack is how many keys more than twice those DRAM holds the
// directory may keep with forgetCold (Cache.trimSlack; tests lower it).
const trimSlack = 4096

// forgetColdOnlyLocked forgets e, whose DRAM record just went (sh.mu held
// for writing), if the directory forgets cold-only keys, is above the
// trim pass's target (trimTarget: 90% of its bound), and e may go
// (forgettable: T15's conditions, T37). Down to the target, not the
// bound (T65): forgetting here stops where a trim pass would stop, so a
// load that evicts keys to cold keeps the directory under its bound by
// these forgets alone, the entry in hand, and trim passes find nothing to
// do; forgetting only above the bound let the directory reach it, and a
// pass then walked the shards' maps for a tenth of it at a time, a cache
// miss an entry visited, most of them entries in DRAM it could not forget
// (2.6-4% of the server's CPU in a bulk load beyond DRAM).
func (c *Cache) forgetColdOnlyLocked(sh *shard, e *entry) {
	if c.forgetCold && c.pg.flushes.Load() == 0 && c.overBound() && c.forgettable(e.key, e, c.now()) {
		forgetLocked(sh, e.key, e)
		c.st.forgotten.Add(1)
	}
}

// overBound reports whether the directory holds more keys than the trim
// target of maxKeys (T65), as found by one call in overBoundEvery: the
// count sums every shard's and the bound takes mem.mu, too much for every
// cold write that completes (a bulk load makes 100k a second), and a
// bound a few keys off is no harm.
func (c *Cache) overBound() bool {
	if c.boundChecks.Add(1)%overBoundEvery != 1 {
		return c.over.Load()
	}
	over := c.dir.keyCount() > trimTarget(c.maxKeys())
	c.over.Store(over)
	return over
}

const overBoundEvery = 32

// trimTarget is how far down a trim pass forgets a directory above
// bound: 90% of it, so a pass is not run again at once.
func trimTarget(bound int64) int64 { return bound - bound/10 }

// forgetLocked drops the live entry e of key ks from sh (lock held).
func forgetLocked(sh *shard, ks string, e *entry) {
	sh.removeLocked(ks, e) // epoch: an adopter of another key of this shard retries (T4)
}

// forgettable reports whether e (key ks, shard lock held) may leave the
// directory: live, its newest version durable in cold with the expiry the
// entry has (not moved by Expire/Persist since), no DRAM record,
// and not marked recent since the last pass (a caller may be about
// to act on it; the mark is cleared here, a second chance).
func (c *Cache) forgettable(ks string, e *entry, now int64) bool {
	if !e.live(now) || e.ver == 0 || !e.coldHas(e.ver) || e.expMoved || e.loc != 0 {
		return false
	}
	return !e.unmark(markRecent)
}

// tombColdOnlyLocked deletes key, which the directory does not name and
// cold holds (sh.mu held for writing): a tombstone, counted as holding
// the key's header, stays until the cold delete queued now completed
// (flushDone), so Keys leaves the key out from now on (T37).
func (c *Cache) tombColdOnlyLocked(sh *shard, key []byte) {
	lo, _ := hashKey(key)
	e, ks := newEntry(key, lo, c.ten.of(key))
	tomb := c.nextVersion()
	e.tombstone(tomb)
	sh.m[ks] = e
	sh.setHeader(e, true)
	it := &flusher.Item{Key: append([]byte(nil), key...), Delete: true, Version: tomb}
	if err := c.fl.Enqueue(it); err != nil {
		sh.removeLocked(ks, e)
		c.coldError("delete", err)
		return
	}
	c.st.coldDeletes.Add(1)
	c.st.tombstones.Add(1)
}

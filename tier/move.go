package tier

import (
	"time"

	"github.com/tiercache/tiercache/flusher"
	"github.com/tiercache/tiercache/policy"
)

// hotEvicted runs on ristretto's goroutine for every evicted or rejected hot
// item: the copy goes to transit and the demotion queue. A full queue makes
// it wait for the background goroutine rather than drop a victim a lower
// tier could take (T6): that stalls only ristretto's goroutine, whose full
// set buffer then turns fresh Sets away from hot to warm, so writers slow
// down to what the demotions sustain instead of pushing keys out of the
// cache. Once Close stopped the background goroutine the copy is dropped
// and counted.
func (c *Cache) hotEvicted(he *hotEntry) {
	if he == nil || he.ver == 0 || c.quietHot.Load() { // nothing, a tombstone, or closing
		if he != nil && he.ent != nil {
			he.ent.hot.CompareAndSwap(he, nil)
		}
		return
	}
	// In transit before the entry stops naming it, so that the copy is
	// always visible somewhere (T5).
	c.tr.add(he.key, he.val, he.ver, he.exp, policy.Warm)
	if he.ent != nil {
		he.ent.hot.CompareAndSwap(he, nil) // hot no longer holds it
	}
	c.demoting.Add(he.cost())
	select {
	case c.demoteq <- he:
		return
	default:
	}
	c.st.demoteWaits.Add(1)
	select {
	case c.demoteq <- he:
	case <-c.stop:
		c.demoting.Add(-he.cost())
		c.tr.remove(he.key, he.ver)
		c.st.demoteDrops.Add(1)
		c.noteLost(he.key, he.ver)
	}
}

// hotApplied runs on ristretto's goroutine when it takes up a fresh Set:
// from here on the entry is in ristretto's store (or handed to hotEvicted as
// rejected), so the Set's transit copy can go.
func (c *Cache) hotApplied(he *hotEntry) {
	if c.appliedHook != nil {
		c.appliedHook(he)
	}
	if he.fresh {
		c.tr.remove(he.key, he.ver)
	}
}

// warmEvicted runs inside the warm tier for every live item of an evicted
// segment; key and value are only valid during the call. It never blocks and
// takes no directory lock (its caller may hold one).
func (c *Cache) warmEvicted(key, value []byte, m Meta) {
	c.warmFull.Store(true)
	k := append([]byte(nil), key...)
	if c.fl == nil {
		c.noteLost(k, m.Version)
		return
	}
	v := append([]byte(nil), value...)
	c.tr.add(k, v, m.Version, m.Expiry, policy.Cold)
	if err := c.fl.Enqueue(&flusher.Item{Key: k, Value: v, Version: m.Version, Expiry: m.Expiry}); err != nil {
		c.tr.remove(k, m.Version)
		c.noteLost(k, m.Version)
		return
	}
	c.st.flushed.Add(1)
}

// background runs demotions, lost-copy bookkeeping and the expiry sweep.
func (c *Cache) background() {
	defer c.wg.Done()
	var tick, trimTick <-chan time.Time
	if c.o.SweepInterval > 0 {
		t := time.NewTicker(c.o.SweepInterval)
		defer t.Stop()
		tick = t.C
	}
	var trimTimer *time.Timer
	if c.o.MaxKeys > 0 {
		trimTimer = time.NewTimer(trimEvery)
		defer trimTimer.Stop()
		trimTick = trimTimer.C
	}
	for {
		select {
		case <-trimTick:
			if c.trim() {
				trimTimer.Reset(trimIdle)
			} else {
				trimTimer.Reset(trimEvery)
			}
		case he := <-c.demoteq:
			c.demote(he)
		case <-c.kick:
			c.processLost()
		case <-tick:
			c.sweep(c.now())
		case <-c.stop:
			for {
				select {
				case he := <-c.demoteq:
					c.demote(he)
				default:
					c.processLost()
					return
				}
			}
		}
	}
}

// demote moves one hot eviction to warm if the policy says it was used
// often enough (or DemoteAll), else — or if warm cannot take it — to cold,
// else nowhere. Stale versions are discarded.
func (c *Cache) demote(he *hotEntry) {
	c.waitForFlusher()
	c.demoting.Add(-he.cost())
	inTransit := true // hotEvicted's transit reference
	defer func() {
		if inTransit {
			c.tr.remove(he.key, he.ver)
		}
	}()
	lo, _ := hashKey(he.key)
	sh := c.dir.shard(lo)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.m[viewString(he.key)]
	if e == nil || e.ver != he.ver || !e.live(c.now()) {
		return
	}
	if h := e.hot.Load(); h != nil && h.ver == he.ver {
		return // promoted back to hot while in transit: DRAM holds it once (T22)
	}
	// A victim the policy saw too rarely skips warm for cold, but only once
	// warm is full: while it has room, nothing it holds is valued more.
	// Warm is the last memory tier, so with no cold tier taking writes
	// every victim goes there, or it would be lost while warm still holds
	// keys the policy values no more.
	if c.warm != nil && (c.o.DemoteAll || !c.warmFull.Load() || !c.coldTakesWrites() || c.pro.Demote(lo, len(he.val))) {
		if err := c.warm.Set(he.key, he.val, Meta{Version: he.ver}); err == nil {
			if c.cold != nil {
				e.coldMayHold()
			}
			c.st.demotions.Add(1)
			return
		}
	}
	if c.fl != nil && c.coldHolds(e, he.ver) {
		return // the entry keeps naming the cold copy
	}
	if c.fl != nil {
		e.coldMayHold()
		c.tr.add(he.key, he.val, he.ver, e.exp, policy.Cold)
		if err := c.fl.Enqueue(&flusher.Item{Key: he.key, Value: he.val, Version: he.ver, Expiry: e.exp, Flags: coldFlags(e.kind)}); err == nil {
			c.st.demotions.Add(1)
			return
		}
		c.tr.remove(he.key, he.ver)
	}
	// The copy goes nowhere: drop its transit reference first, or
	// lostLocked would find it there, keep the entry, and leave it naming
	// a value no tier holds once the reference went (T7).
	c.tr.remove(he.key, he.ver)
	inTransit = false
	c.lostLocked(sh, he.key, e, he.ver, false)
}

// flushCurrent tells the flusher whether a put still carries its key's
// newest version, and stamps it with the key's expiry now and its kind: the
// copy may have been made before an Expire, Persist or GetEx, and a warm
// copy carries neither (T17, T23).
func (c *Cache) flushCurrent(it *flusher.Item) bool {
	lo, _ := hashKey(it.Key)
	sh := c.dir.shard(lo)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	if v, ok := sh.pend[viewString(it.Key)]; ok {
		// A writethrough change of the key is in flight: only its own
		// put reaches cold, as it was made (T28).
		return it.Version == v
	}
	e := sh.m[viewString(it.Key)]
	if e == nil || e.state != stateLive || e.ver != it.Version || c.coldHolds(e, it.Version) {
		return false
	}
	it.Expiry, it.Flags = e.exp, coldFlags(e.kind)
	return true
}

// coldHolds reports (and counts) that cold already holds version ver of
// e's key with the expiry the entry has: a hot or warm copy of it that is
// evicted (one promoted from cold, typically) is not written again, which
// would cost a flash write per promoted read and push other records out of
// the log sooner (T18). The shard lock is held.
func (c *Cache) coldHolds(e *entry, ver uint64) bool {
	if !e.coldHas(ver) || e.expMoved {
		return false
	}
	c.st.coldKept.Add(1)
	return true
}

// flushDone records a completed cold write.
func (c *Cache) flushDone(it *flusher.Item, err error) {
	lo, _ := hashKey(it.Key)
	sh := c.dir.shard(lo)
	sh.mu.Lock()
	e := sh.m[viewString(it.Key)]
	switch {
	case it.Delete:
		if err == nil && e != nil && e.state == stateTomb && e.ver == it.Version {
			e.leave()
			delete(sh.m, viewString(it.Key))
			sh.epoch++
		}
	case err == nil:
		if e != nil {
			e.coldWritten(it.Version, it.Expiry) // with the entry's expiry, expMoved clears (T17)
		}
	default:
		if e != nil && e.state == stateLive && e.ver == it.Version {
			c.tr.remove(it.Key, it.Version)
			c.lostLocked(sh, it.Key, e, it.Version, false)
			sh.mu.Unlock()
			c.coldError("flush", err) // a lost copy is a cold error too
			c.noteColdWritable()
			return
		}
	}
	sh.mu.Unlock()
	if !it.Delete {
		c.tr.remove(it.Key, it.Version)
	}
	if err != nil {
		c.coldError("flush", err)
		c.noteColdWritable()
	}
}

// coldTakesWrites reports whether there is a cold tier and it has not
// turned read-only (an emulated store after a failed region write).
func (c *Cache) coldTakesWrites() bool { return c.fl != nil && !c.coldReadOnly.Load() }

// noteColdWritable records whether the cold store still takes writes; it
// is checked at open and after every failed cold write.
func (c *Cache) noteColdWritable() {
	if c.cold != nil && c.cold.Stats().WriteError != nil {
		c.coldReadOnly.Store(true)
	}
}

// flushDropped records a put the flusher dropped or skipped.
func (c *Cache) flushDropped(it *flusher.Item, why flusher.Reason) {
	c.tr.remove(it.Key, it.Version)
	if why == flusher.Dropped {
		c.lostVersion(it.Key, it.Version, false)
	}
}

// noteLost queues a (key, version) whose copy may have vanished, for the
// background goroutine (the caller may hold locks the check needs).
func (c *Cache) noteLost(key []byte, ver uint64) {
	c.lostMu.Lock()
	c.lostq = append(c.lostq, lostKey{key: key, ver: ver})
	c.lostMu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *Cache) processLost() {
	c.lostMu.Lock()
	q := c.lostq
	c.lostq = nil
	c.lostMu.Unlock()
	for _, l := range q {
		c.lostVersion(l.key, l.ver, false)
	}
}

// lostVersion forgets key if its newest version is ver and no tier holds it
// any more, so Len stays honest (T7).
// coldGone says a read found no cold copy although one was recorded (the
// store reclaimed it).
func (c *Cache) lostVersion(key []byte, ver uint64, coldGone bool) {
	lo, _ := hashKey(key)
	sh := c.dir.shard(lo)
	sh.mu.Lock()
	if e := sh.m[viewString(key)]; e != nil {
		c.lostLocked(sh, key, e, ver, coldGone)
	}
	sh.mu.Unlock()
}

func (c *Cache) lostLocked(sh *shard, key []byte, e *entry, ver uint64, coldGone bool) {
	if e.state != stateLive || e.ver != ver || sh.pendingLocked(key) {
		return // changed, or a writethrough change in flight decides (T28)
	}
	// A copy the entry names is not lost: ristretto may not have applied
	// it yet (a promotion is seen only through the entry until then), and
	// if it turns the copy away, demote checks again.
	if he := e.hot.Load(); he != nil && he.ver == ver {
		return
	}
	if _, _, ok := c.memLookup(nil, key, ver); ok {
		return
	}
	if e.coldHas(ver) && !coldGone {
		return // durable in cold
	}
	c.purgeLocked(sh, key, e)
	c.st.lost.Add(1)
}

// sweep purges expired keys.
func (c *Cache) sweep(now int64) {
	for i := range c.dir.shards {
		sh := &c.dir.shards[i]
		sh.mu.Lock()
		for k, e := range sh.m {
			if e.state == stateLive && e.exp != 0 && e.exp <= now && !sh.pendingLocked([]byte(k)) {
				c.purgeLocked(sh, []byte(k), e)
				c.st.expired.Add(1)
			}
		}
		sh.mu.Unlock()
	}
}

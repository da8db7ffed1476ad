package tier

import (
	"time"

	"github.com/tiercache/tiercache/flusher"
)

// background runs the lost-copy bookkeeping, the expiry sweep and the
// directory trim.
func (c *Cache) background() {
	defer c.wg.Done()
	var tick, trimTick <-chan time.Time
	if c.o.SweepInterval > 0 {
		t := time.NewTicker(c.o.SweepInterval)
		defer t.Stop()
		tick = t.C
	}
	var trimTimer *time.Timer
	if c.o.MaxKeys > 0 || c.forgetCold {
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
		case <-c.kick:
			c.processLost()
		case <-tick:
			if h := c.sweepHeld.Load(); h != nil && (*h)() {
				c.heldSweeps.Add(1) // an expired key stays, read as gone (T62)
			} else {
				c.sweep(c.now())
			}
			c.processVictims() // any a caller left behind
			c.liveBalance(0)   // hot's segments back from live structures deleted or evicted
		case <-c.stop:
			c.processLost()
			return
		}
	}
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
	if p := pinnedOf(it); p != nil {
		c.endPinned(sh, e, it, p, err == nil)
		sh.mu.Unlock()
		if err != nil {
			c.coldError("flush", err)
			c.noteColdWritable()
		}
		return
	}
	switch {
	case it.Delete:
		if err == nil && e != nil {
			sh.setHeader(e, false) // F3: no put of the key was in flight behind it
			if e.state == stateTomb && e.ver == it.Version {
				sh.removeLocked(e.key, e)
			}
		}
	case err == nil:
		if e != nil {
			sh.setHeader(e, true)
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
	if p := pinnedOf(it); p != nil {
		lo, _ := hashKey(it.Key)
		sh := c.dir.shard(lo)
		sh.mu.Lock()
		e := sh.m[viewString(it.Key)]
		if why == flusher.Superseded && e != nil && e.flushing && e.loc == p.loc && e.ver == it.Version && e.coldHas(e.ver) {
			// Skipped because cold holds this version already (T18): the
			// record goes with nothing lost.
			c.unpin(p)
			e.flushing = false
			c.releaseLocked(e)
			c.forgetColdOnlyLocked(sh, e)
		} else {
			c.endPinned(sh, e, it, p, false)
		}
		sh.mu.Unlock()
		return
	}
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
	if _, _, ok := c.memLookup(nil, key, e); ok {
		return
	}
	if e.coldHas(ver) && !coldGone {
		return // durable in cold
	}
	if coldGone {
		sh.setHeader(e, false) // a read found no record of the key
	}
	c.purgeLocked(sh, key, e)
	c.st.lost.Add(1)
	c.removed(key, Evicted)
}

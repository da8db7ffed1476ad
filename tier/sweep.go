package tier

import "github.com/tiercache/tiercache/backend"

// sweep purges the keys expired at now: every live entry whose expiry is
// at or before now, but one with a writethrough change in flight, which
// the next sweep takes (T55). It visits only the entries filed in the
// slots of each shard's expiry index whose ticks came (expindex.go), and
// holds a shard's lock for at most sweepBatch of them at a time. One
// sweep runs at a time (sweepMu).
func (c *Cache) sweep(now int64) {
	if now <= 0 {
		return
	}
	c.sweepMu.Lock()
	defer c.sweepMu.Unlock()
	for i := range c.dir.shards {
		if h := c.sweepHeld.Load(); h != nil && (*h)() {
			return // held since the sweep began: the rest waits (T62)
		}
		sh := &c.dir.shards[i]
		for start := true; ; start = false {
			sh.mu.Lock()
			done := c.sweepShardLocked(sh, now, start)
			sh.mu.Unlock()
			if done {
				break
			}
		}
	}
}

// sweepShardLocked runs sh's part of a sweep at now (sh.mu held for
// writing) and reports whether it is done; it stops after sweepBatch
// entries, to be called again (start false) once the lock was let go.
// It takes the entries of late at its start and those of each wheel slot
// as its tick comes, purges the expired ones and files the others again.
func (c *Cache) sweepShardLocked(sh *shard, now int64, start bool) bool {
	x := sh.exps
	if x == nil {
		return true
	}
	if start {
		x.splice(headDue, headLate)
	}
	last := tickOf(now)
	for n := 0; ; {
		if x.empty(headDue) {
			t := x.nextVisit()
			if t > last {
				// No slot is visited until after last: the ticks to it
				// are passed, so entries filed from now on go no higher
				// than they need (each moves down less often).
				x.cur = max(x.cur, last+1)
				if x.n == 0 {
					sh.exps = nil // no entry left: its heap goes back
				}
				return true
			}
			x.visit(t)
			continue
		}
		if n == sweepBatch {
			return false
		}
		n++
		i, e := x.popDue()
		c.st.sweepVisits.Add(1)
		if sh.m[e.key] != e || !e.indexed() {
			x.release(i, e) // not the map's (T55 says never)
			continue
		}
		if backend.Expired(e.exp, now) && !sh.pendingLocked(viewBytes(e.key)) {
			key := []byte(e.key)
			c.purgeLocked(sh, key, e) // takes it out of the index
			c.st.expired.Add(1)
			c.removed(key, Expired)
			continue
		}
		x.file(i, e)
	}
}

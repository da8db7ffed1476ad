package tier

import (
	"errors"
	"fmt"
	"time"
)

// Rename gives src's value, expiry and kind to dst and deletes src, in one step
// (T26): with nx it does nothing when dst exists (renamed is false).
// ErrNoSuchKey when src is absent. Renaming a key to itself changes
// nothing (renamed is !nx, as RENAME and RENAMENX answer).
func (c *Cache) Rename(src, dst []byte, nx bool) (renamed bool, err error) {
	defer c.remoteAwait(src, dst)
	if string(src) == string(dst) {
		if len(src) > 0 && c.Exists(src) == 0 {
			return false, ErrNoSuchKey
		}
		return !nx, nil
	}
	found, done, err := c.carry(src, dst, true, !nx)
	if err == nil && !found {
		err = ErrNoSuchKey
	}
	return done, err
}

// Copy gives dst a copy of src's value, expiry and kind, in one step (T26);
// dst is overwritten only with replace. copied is false when src is
// absent or dst exists (without replace). src and dst must differ
// (ErrSameKey).
func (c *Cache) Copy(src, dst []byte, replace bool) (copied bool, err error) {
	defer c.remoteAwait(dst)
	if string(src) == string(dst) {
		return false, ErrSameKey
	}
	_, done, err := c.carry(src, dst, false, replace)
	return done, err
}

// carry writes src's current value to dst with src's expiry as a new
// version, and with move deletes src, under both shards' write locks
// (taken in shard order) and only if src still has the version read: no
// reader sees dst written and src still there, or src gone and dst not
// yet written, and a write to src in between makes it read again (as
// getThen does). Without overwrite a live dst is left alone. found says
// src existed; done that dst was written.
func (c *Cache) carry(src, dst []byte, move, overwrite bool) (found, done bool, err error) {
	if len(src) == 0 || len(dst) == 0 {
		return false, false, ErrEmptyKey
	}
	if !c.enter() {
		return false, false, ErrClosed
	}
	defer c.exit()
	until := c.waitUntil() // one Flusher.Wait in all, its wait to be admitted too
	if err := c.admitWrite(until); err != nil {
		return false, false, err
	}
	defer c.wtLock(src, dst)()
	slo, _ := hashKey(src)
	dlo, _ := hashKey(dst)
	ssh, dsh := c.dir.shard(slo), c.dir.shard(dlo)
	unreadable, waits, rooms := 0, 0, 0
	var buf []byte
	for try := 0; try < getThenTries; try++ {
		e := c.lockEntry(ssh, src, false, true)
		if e == nil || !e.live(c.now()) {
			ssh.mu.RUnlock()
			return false, false, nil
		}
		ver := e.ver
		ssh.mu.RUnlock()
		errs := c.st.coldErrors.Load()
		v, _, _, ok := c.get(buf[:0], src, slo, false)
		buf = v[:0]
		if !ok {
			if c.st.coldErrors.Load() != errs && c.versionIs(ssh, src, ver) {
				if unreadable++; unreadable == 2 {
					return true, false, ErrSourceUnreadable
				}
			}
			continue
		}
		// Without overwrite, a dst only an earlier run's cold store (or
		// cold alone, T15) holds must be seen: adopt it first.
		known := !overwrite && c.coldUnknown.Load() && c.known(dst)
		// A durable move may have to put dst back as it was (carryDurable).
		var prior carryPrior
		if move && c.writeThrough() {
			var ok bool
			if prior, ok = c.readPrior(dst, dlo, dsh); !ok {
				continue
			}
		}
		if w := c.placeFor(len(v)); w != memNone {
			c.makeRoom(w, len(v), dst) // before the locks: a cleaning takes other keys' locks
		}
		lockShards(ssh, dsh, slo>>56 < dlo>>56)
		now := c.now()
		es := ssh.m[viewString(src)]
		ed := dsh.m[viewString(dst)]
		switch {
		case es == nil || es.ver != ver || !es.live(now):
			unlockShards(ssh, dsh)
			continue // src was written in between: read it again
		case !overwrite && ed != nil && ed.live(now):
			unlockShards(ssh, dsh)
			return true, false, nil
		case known && ed == nil:
			unlockShards(ssh, dsh)
			continue // dst forgotten again before the lock (T15): adopt it again
		case move && c.writeThrough() && !prior.matches(ed, now):
			unlockShards(ssh, dsh)
			continue // dst was written since its state was read: read it again
		}
		if c.writeThrough() {
			if ssh.pendingLocked(src) || dsh.pendingLocked(dst) {
				// A change of either key is in flight (another move's
				// among them): wait for it, then read again.
				unlockShards(ssh, dsh)
				if waits++; waits > carryWaits {
					return true, false, ErrKeyBusy
				}
				time.Sleep(carryPoll)
				try--
				continue
			}
			k, nv, alloc := joinKV(dst, v)
			done, err := c.carryDurable(ssh, dsh, slo>>56 < dlo>>56, src, dst, ver, k, nv, alloc, es.exp, es.kind, move, overwrite, prior)
			if done {
				c.throttle()
			}
			return true, done, err
		}
		// Everything the entry says about the value goes with it: its
		// expiry and kind (the size is v's).
		wait, err := c.writeLocked(dsh, ed, dst, v, es.exp, es.kind, false)
		if errors.Is(err, errNoRoom) {
			unlockShards(ssh, dsh)
			if rooms++; rooms < noRoomTries {
				try-- // not a write in between: make room and carry again
				continue
			}
			return true, false, fmt.Errorf("%w: key of %d bytes, value of %d bytes", ErrNoSpace, len(dst), len(v))
		}
		if err == nil {
			c.remotePutLocked(dst, v, es.exp, es.kind)
		}
		if err == nil && move {
			c.purgeLocked(ssh, src, es)
			c.remoteDelLocked(src)
		}
		unlockShards(ssh, dsh)
		c.processVictims()
		if err != nil {
			return true, false, err
		}
		if err := c.awaitStraight(wait, until); err != nil {
			return true, false, fmt.Errorf("tier: write %d bytes to cold: %w", len(v), err)
		}
		c.throttle() // as set: the write may push copies towards cold (T25)
		return true, true, nil
	}
	return true, false, ErrKeyBusy
}

// carryPoll is how long a writethrough carry waits for a change of its
// keys in flight before it reads again, at most carryWaits times (a
// device sync is a few milliseconds).
const (
	carryPoll  = 200 * time.Microsecond
	carryWaits = 10000
)

// lockShards write-locks a and b, the lower shard first (aFirst: a is
// the lower; directory.shard picks a shard by the hash's top byte), so
// that two carries between the same shards in opposite directions cannot
// deadlock (every other path holds one shard lock at a time). a and b may
// be the same shard.
func lockShards(a, b *shard, aFirst bool) {
	switch {
	case a == b:
		a.mu.Lock()
	case aFirst:
		a.mu.Lock()
		b.mu.Lock()
	default:
		b.mu.Lock()
		a.mu.Lock()
	}
}

func unlockShards(a, b *shard) {
	a.mu.Unlock()
	if a != b {
		b.mu.Unlock()
	}
}

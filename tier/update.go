package tier

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/tiercache/tiercache/policy"
)

// Current is the value an Update's function is given.
type Current struct {
	Value  []byte // the value, valid during the call only; nil if !Exists
	Kind   Kind
	Exists bool
}

// ChangeOp is what an Update's function decides to do.
type ChangeOp uint8

// The changes an Update applies.
const (
	Keep   ChangeOp = iota // change nothing
	Store                  // store Change.Value as Change.Kind, keeping the key's expiry
	Remove                 // delete the key
)

// Change is an Update's decision.
type Change struct {
	Op    ChangeOp
	Value []byte // Store: the new value; the cache copies it
	Kind  Kind   // Store: its kind
}

// updateStripes is how many locks serialize Updates (by key hash): two
// Updates of one key never race each other, so an Update only reads again
// when another kind of write (Set, Delete, an expiry) changed the key.
const updateStripes = 1024

// updateTries bounds how often Update reads again after such a write.
const updateTries = 64

// updateLocks are the stripes' locks, and how many Updates of each stripe
// hold its lock (busy): an Update in place, all of it under its key's
// shard write lock, runs without the stripe's lock while none does.
type updateLocks struct {
	mu   [updateStripes]sync.Mutex
	busy [updateStripes]atomic.Int32
}

// Update is a read-modify-write of one key in one step (T24): f is given
// the key's current value (of any kind) and decides what to store, and
// its decision applies only to the version it saw. A concurrent write in
// between makes Update call f again with the new value (so f must not act
// on anything but its return value, except to note what it answers); two
// Updates of one key are serialized. f may run under the key's shard
// lock: it must not call the cache. An error from f is returned as it is
// and nothing changes. The stored value keeps the key's expiry (a new key
// has none). Values over MaxValue are refused with ErrTooLarge.
func (c *Cache) Update(key []byte, f func(cur Current) (Change, error)) error {
	return c.UpdateAt(key, c.now(), f)
}

// UpdateAt is Update at the time now (unix nanoseconds), as EditAt is
// Edit: the first look at the key decides its expiry by now (one clock
// read fewer); a look again after a concurrent write reads the clock.
func (c *Cache) UpdateAt(key []byte, now int64, f func(cur Current) (Change, error)) error {
	defer c.remoteAwait(key)
	if len(key) == 0 {
		return ErrEmptyKey
	}
	if !c.enter() {
		return ErrClosed
	}
	defer c.exit()
	lo, _ := hashKey(key)
	sh := c.dir.shard(lo)
	stripe := lo % updateStripes
	done, busy, err := c.updateInPlace(sh, key, now, f, &c.upd.busy[stripe])
	if done {
		return err
	}
	return c.updateStripe(sh, key, lo, stripe, busy, f)
}

// updateStripe is Update's general path, under the key's stripe lock
// (busy: an Update in place found the stripe busy and tries again
// first). Apart from UpdateAt, whose few defers stay open-coded.
func (c *Cache) updateStripe(sh *shard, key []byte, lo, stripe uint64, busy bool, f func(cur Current) (Change, error)) error {
	mu := &c.upd.mu[stripe]
	mu.Lock()
	defer mu.Unlock()
	c.upd.busy[stripe].Add(1)
	defer c.upd.busy[stripe].Add(-1)
	if busy {
		if done, _, err := c.updateInPlace(sh, key, c.now(), f, nil); done {
			return err
		}
	}
	unreadable := 0
	var buf []byte
	for try := 0; try < updateTries; try++ {
		e := c.lockEntry(sh, key, false, true)
		var ver uint64
		if e != nil && e.live(c.now()) {
			ver = e.ver
		}
		sh.mu.RUnlock()
		cur := Current{}
		t := policy.None
		if ver != 0 {
			errs := c.st.coldErrors.Load()
			v, tt, kind, ok := c.get(buf[:0], key, lo, try == 0)
			buf = v
			if !ok {
				// As SetGet: a value that keeps its version yet does not
				// read (a cold device error, twice) gives up rather than
				// answer as if the key were absent.
				if c.st.coldErrors.Load() != errs && c.versionIs(sh, key, ver) {
					if unreadable++; unreadable == 2 {
						return ErrUnreadable
					}
				}
				continue
			}
			cur, t = Current{Value: v, Kind: kind, Exists: true}, tt
		}
		ch, err := f(cur)
		if err != nil {
			return err
		}
		c.count(key, t, cur.Exists)
		switch ch.Op {
		case Keep:
			return nil
		case Store:
			if len(ch.Value) > c.o.MaxValue {
				return fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, len(ch.Value), c.o.MaxValue)
			}
			if err := c.admitWrite(c.waitUntil()); err != nil {
				return err
			}
			_, retry, err := c.set(key, ch.Value, SetOptions{KeepTTL: true, Kind: ch.Kind}, ver, true)
			if !retry {
				return err
			}
		case Remove:
			if !cur.Exists {
				return nil
			}
			if ok, err := c.deleteAt(sh, key, ver); ok || err != nil {
				return err
			}
		}
	}
	return ErrKeyBusy
}

// updateInPlace is Update at now in one hold of the key's shard write lock, for
// a key whose value is a DRAM record (not being flushed, not suspect):
// f is given the record itself, and its change applies at once, a value
// of the record's size written in place (T11). done is false, nothing
// changed, when the key is anything else, or the new value needs room
// that only a cleaning gives: Update then takes its general path. With
// busy given (the caller holds no stripe lock) it runs only while no
// Update of the stripe holds the stripe's lock (busy is 0 under the shard
// lock, which such an Update raises before its first read takes): else
// it reports busy, and the caller takes the lock and tries again.
func (c *Cache) updateInPlace(sh *shard, key []byte, now int64, f func(cur Current) (Change, error), busy *atomic.Int32) (done, isBusy bool, err error) {
	if c.writeThrough() {
		return false, false, nil
	}
	e := c.lockEntry(sh, key, true, true)
	if busy != nil && busy.Load() != 0 {
		sh.mu.Unlock()
		return false, true, nil
	}
	if e == nil || !e.live(now) || e.loc == 0 || e.flushing || e.where == memLive || c.rt != nil && c.rt.suspect(e) {
		sh.mu.Unlock()
		return false, false, nil
	}
	t := e.where.tier()
	rec := c.mem.bytesOf(e)
	ch, err := f(Current{Value: rec, Kind: e.kind, Exists: true})
	if ch.Op == Store && overlaps(ch.Value, rec) {
		ch.Value = append([]byte(nil), ch.Value...) // the record may be freed before the copy
	}
	var r reservation
	switch {
	case err != nil:
		sh.mu.Unlock()
		return true, false, err
	case ch.Op == Store && len(ch.Value) > c.o.MaxValue:
		sh.mu.Unlock()
		return true, false, fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, len(ch.Value), c.o.MaxValue)
	case ch.Op == Store:
		var ok bool
		if r, ok = c.reserveLocked(e, len(ch.Value)); !ok {
			sh.mu.Unlock()
			return false, false, nil
		}
	}
	c.count(key, t, true)
	switch ch.Op {
	case Keep:
		c.memAccess(e)
	case Remove:
		c.remoteDelLocked(key)
		c.purgeLocked(sh, key, e)
	case Store:
		c.versionLocked(sh, e, false, key, e.exp, int64(len(ch.Value)), ch.Kind)
		c.remotePutLocked(key, ch.Value, e.exp, ch.Kind)
		c.placeLocked(e, r, ch.Value)
	}
	sh.mu.Unlock()
	c.processVictims()
	return true, false, nil
}

// deleteAt deletes key if it is live at version ver, and reports whether
// it was; in writethrough mode durably (an error: the key is unchanged,
// T28).
func (c *Cache) deleteAt(sh *shard, key []byte, ver uint64) (bool, error) {
	sh.mu.Lock()
	e := sh.m[viewString(key)]
	if e == nil || e.ver != ver || !e.live(c.now()) {
		sh.mu.Unlock()
		return false, nil
	}
	c.remoteDelLocked(key)
	op, err := c.beginPurgeLocked(sh, key, e)
	sh.mu.Unlock()
	if err == nil {
		err = c.finishPurge(op)
	}
	return err == nil, err
}

// KindOf reports the kind of key's value and whether the key exists
// (adopting it from a cold store of an earlier run if needed).
func (c *Cache) KindOf(key []byte) (Kind, bool) {
	if len(key) == 0 || !c.enter() {
		return 0, false
	}
	defer c.exit()
	lo, _ := hashKey(key)
	sh := c.dir.shard(lo)
	e := c.lockEntry(sh, key, false, true)
	var kind Kind
	live := e != nil && e.live(c.now())
	if live {
		kind = e.kind
	}
	sh.mu.RUnlock()
	if e != nil || !c.coldUnknown.Load() {
		return kind, live
	}
	_, _, kind, ok := c.get(nil, key, lo, false)
	return kind, ok
}

package tier

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/tiercache/tiercache/backend"

	"github.com/tiercache/tiercache/flusher"
	"github.com/tiercache/tiercache/policy"
)

// Set stores key=value. stored is false when NX or XX prevented it. Values
// up to HotMaxValue go to hot, larger ones to warm, and values warm cannot
// take to cold (the call then returns after the cold copy is durable). In
// writethrough mode every Set returns after its cold copy is durable.
// In Backpressure mode (the default) a Set waits first while the flusher
// is behind, at most Flusher.Wait, and past it fails with ErrColdBehind,
// having changed nothing (T25).
func (c *Cache) Set(key, value []byte, o SetOptions) (bool, error) {
	return c.setKey(key, value, o, true, bound{})
}

// bound is how a write waits for the flusher in Backpressure mode (T25):
// until ends all its waits, whatever its tries or pairs; refuse says it
// may still fail with ErrColdBehind, having stored nothing. An MSET that
// stored a pair refuses no later one (T60): those go where DRAM has room,
// else straight to cold (queued, readable in transit, never dropped).
type bound struct {
	until  time.Time
	refuse bool
}

// setKey is Set; admit: wait for the flusher first, with the bound of a
// write starting now, and for the remote after; else (MSet's pairs,
// admitted once for all) within b.
func (c *Cache) setKey(key, value []byte, o SetOptions, admit bool, b bound) (bool, error) {
	if admit && !o.NoRemoteWait {
		defer c.remoteAwait(key) // write-through: the remote answered (T38)
	}
	switch {
	case len(key) == 0:
		return false, ErrEmptyKey
	case len(value) > c.o.MaxValue:
		return false, fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, len(value), c.o.MaxValue)
	}
	if !c.enter() {
		return false, ErrClosed
	}
	defer c.exit()
	if admit {
		b = bound{until: c.waitUntil(), refuse: true} // one Flusher.Wait in all, its wait to be admitted too
		if err := c.admitWrite(b.until); err != nil {
			return false, err
		}
	}
	defer c.wtLock(key)()
	stored, _, err := c.setWithin(key, value, o, 0, false, b)
	return stored, err
}

// set is Set once the caller entered. With check, it stores only if the
// key's current version is ifVer (0: the key is absent) and otherwise
// returns retry (SetGet, T16).
func (c *Cache) set(key, value []byte, o SetOptions, ifVer uint64, check bool) (stored, retry bool, err error) {
	// the end of the tries' waits (awaitRoom, awaitStraight)
	return c.setWithin(key, value, o, ifVer, check, bound{until: c.waitUntil(), refuse: true})
}

// setWithin is set, its waits for the flusher within b.
func (c *Cache) setWithin(key, value []byte, o SetOptions, ifVer uint64, check bool, b bound) (stored, retry bool, err error) {
	now := o.Now
	if now == 0 {
		now = c.now()
	}
	var exp int64
	switch {
	case o.TTL > 0:
		exp = backend.ExpiryAfter(now, o.TTL)
	case o.TTL < 0:
		exp = now
	case !o.ExpireAt.IsZero():
		exp = backend.ExpiryAt(o.ExpireAt)
	}
	lo, _ := hashKey(key)
	sh := c.dir.shard(lo)
	for try := 0; ; try++ {
		stored, retry, err := c.setOnce(sh, key, value, o, ifVer, check, now, exp, b)
		if errors.Is(err, errNoRoom) {
			if try < noRoomTries {
				continue
			}
			err = fmt.Errorf("%w: key of %d bytes, value of %d bytes", ErrNoSpace, len(key), len(value))
		}
		return stored, retry, err
	}
}

// setOnce is one try of set: room first, then the write under the shard
// lock; errNoRoom when the room made was taken before the write. Its wait
// for room ends at b.until, shared by every try.
func (c *Cache) setOnce(sh *shard, key, value []byte, o SetOptions, ifVer uint64, check bool, now, exp int64, b bound) (stored, retry bool, err error) {
	if w := c.placeFor(len(value)); w != memNone {
		// Before any lock: a cleaning takes other keys' locks.
		if !c.makeRoom(w, len(value), key) {
			if err := c.awaitRoom(w, len(value), key, b); err != nil {
				return false, false, err
			}
		}
	}
	var wk, wv []byte
	var walloc int
	if c.writeThrough() {
		wk, wv, walloc = coldKV(key, value, o.Owned) // the cold write's own copy, made before the lock
	}

	// NX/XX/KEEPTTL, a version check and an expiry in the past (which
	// deletes the key) must see a key of an earlier run, or one the
	// directory forgot (T15): adopt it first.
	past := backend.Expired(exp, now)
	e := c.lockEntry(sh, key, true, o.NX || o.XX || o.KeepTTL || check || past)
	exists := e != nil && e.live(now)
	if check && (!exists && ifVer != 0 || exists && e.ver != ifVer) {
		sh.mu.Unlock()
		return false, true, nil
	}
	if (o.NX && exists) || (o.XX && !exists) {
		sh.mu.Unlock()
		return false, false, nil
	}
	if o.KeepTTL && exists {
		exp = e.exp
	}
	if backend.Expired(exp, now) { // already expired: SET with a past expiry deletes
		var op *pendOp
		var err error
		c.remoteDelLocked(key)
		if e != nil { // lockEntry adopted a copy cold holds
			op, err = c.beginPurgeLocked(sh, key, e)
		}
		sh.mu.Unlock()
		if err == nil {
			err = c.finishPurge(op)
		}
		return err == nil, false, err
	}
	if c.writeThrough() {
		err := c.setDurable(sh, key, wk, wv, walloc, exp, o.Kind)
		return err == nil, false, err
	}
	wait, err := c.writeLocked(sh, e, key, value, exp, o.Kind, o.Owned)
	if err == nil {
		c.remotePutLocked(key, value, exp, o.Kind)
	}
	sh.mu.Unlock()
	c.processVictims()
	if err != nil {
		return false, false, err
	}
	if err := c.awaitStraight(wait, b.until); err != nil {
		return false, false, fmt.Errorf("tier: write %d bytes to cold: %w", len(value), err)
	}
	c.throttle()
	return true, false, nil
}

// waitUntil is when a write starting now stops waiting for the flusher:
// Flusher.Wait from now (zero without a cold tier).
func (c *Cache) waitUntil() time.Time {
	if c.fl == nil {
		return time.Time{}
	}
	return time.Now().Add(c.fl.Options().Wait)
}

// awaitStraight waits for wait, the cold write of a value no DRAM log
// took (nil: none), until until: past it the write stays queued, its
// value readable in transit (T5) and never dropped (a Sync item, F2), and
// the writer goes on, so that it waits at most Flusher.Wait in all (T25)
// even behind a full queue on a slow device. A Flush about to hold calls
// off ends the wait as well (holdOff, T36): the write goes on the same
// way. It returns the store's error if the write failed in time.
func (c *Cache) awaitStraight(wait *flusher.Item, until time.Time) error {
	if wait == nil {
		return nil
	}
	ctx, cancel := context.WithDeadline(c.yield.Load().ctx, until)
	defer cancel()
	if err := c.fl.Wait(ctx, wait); err != nil && (ctx.Err() == nil || !errors.Is(err, ctx.Err())) {
		return err
	}
	return nil
}

// writeLocked stores value as key's new version with expiry exp and kind,
// sh's write lock held; e is key's entry, or nil for a key the directory
// does not have. The value gets a DRAM record if a log has room (the
// caller made room first), else it goes straight to cold, and the caller
// waits, once it unlocked, for the cold write it returns. Without a cold
// tier, a value a log could take but has no room for now is errNoRoom,
// and nothing changed: the caller makes room again and retries. A value
// no log takes is ErrNoSpace then, and the key is deleted. The LFU may
// have evicted keys: the caller runs processVictims once it unlocked.
// owned is SetOptions.Owned.
func (c *Cache) writeLocked(sh *shard, e *entry, key, value []byte, exp int64, kind Kind, owned bool) (wait *flusher.Item, err error) {
	fresh := e == nil
	if fresh {
		lo, _ := hashKey(key)
		e, _ = newEntry(key, lo, c.ten.of(key))
	}
	r, room := c.reserveLocked(e, len(value))
	if !room && c.fl == nil && c.placeFor(len(value)) != memNone {
		return nil, errNoRoom
	}
	ver := c.versionLocked(sh, e, fresh, key, exp, int64(len(value)), kind)
	if room {
		c.placeLocked(e, r, value)
		return nil, nil
	}
	c.releaseLocked(e)
	c.memRemove(e)
	if c.fl == nil {
		c.purgeLocked(sh, key, e)
		return nil, fmt.Errorf("%w: key of %d bytes, value of %d bytes", ErrNoSpace, len(key), len(value))
	}
	// Straight to cold: readers find it in transit until it is durable.
	k, v, _ := coldKV(key, value, owned)
	e.coldMayHold()
	c.tr.add(k, v, ver, exp, policy.Cold)
	c.st.coldWrites.Add(1)
	return &flusher.Item{Key: k, Value: v, Version: ver, Expiry: exp, Flags: coldFlags(kind)}, nil
}

// versionLocked makes e, key's entry (fresh: a new one, put in the map
// now), live at a new version with expiry exp, a value of size bytes and
// kind, and returns the version (sh's write lock held). The copies of
// its previous version outside DRAM are invalidated first (T3); its DRAM
// copy is the caller's to replace.
func (c *Cache) versionLocked(sh *shard, e *entry, fresh bool, key []byte, exp, size int64, kind Kind) uint64 {
	ver := c.nextVersion()
	if fresh {
		sh.m[e.key] = e
		if c.coldUnknown.Load() && c.cold != nil && (c.ks == nil || c.ks.MayHold(key)) {
			// A copy of an earlier run, or of a key the directory forgot
			// (T15): its delete is queued before the new version's put
			// (F3), so a restart never finds the old value (cache mode),
			// and its header counts in cold's keys until it completed
			// (T37).
			e.coldMayHold()
			sh.setHeader(e, c.ks != nil)
			c.invalidateLocked(key, e, 0) // no tombstone has version 0
		}
	} else {
		c.invalidateLocked(key, e, e.ver)
	}
	old := e.exp
	if e.write(ver, exp, size, kind) { // a new entry, or a tombstone coming back to life
		sh.addLive(e, 1)
	}
	sh.fileExpiry(e, old)
	c.markValidLocked(e) // written here: as new as the remote's (T42)
	return ver
}

// errNoRoom: writeLocked found no room without a cleaning, and changed
// nothing; the caller makes room and tries again (noRoomTries times).
var errNoRoom = errors.New("tier: no room in DRAM yet")

const noRoomTries = 100

// throttleWait bounds how long one write waits for the flusher in Shed
// mode (a stalled device must not hold writers forever: past it,
// evictions may be dropped again, and are counted).
const throttleWait = time.Second

// admitWrite holds a writer back before its write, outside every lock,
// while the flusher holds more than flushHigh, in Backpressure mode (T25):
// the write waits for the device instead of pushing copies the queue
// would have to drop. Past Flusher.Wait it is ErrColdBehind, and the
// caller changes nothing. A Flush about to hold calls off ends the wait
// (holdOff), and the write goes ahead. A per-tenant share of the flusher
// would give each tenant a limit of its own here. until is the end of
// the write's waits (waitUntil when it started).
func (c *Cache) admitWrite(until time.Time) error {
	if c.fl == nil || c.shed || c.fl.Held() <= c.flushHigh {
		return nil
	}
	wait := c.fl.Options().Wait
	ctx, cancel := context.WithDeadline(c.yield.Load().ctx, until)
	defer cancel()
	if c.fl.WaitRoom(ctx, c.flushHigh) || !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil
	}
	c.st.coldBehind.Add(1)
	return fmt.Errorf("%w: the flusher holds %d bytes of writes to cold, over %d, after %v (flusher.wait); nothing was stored",
		ErrColdBehind, c.fl.Held(), c.flushHigh, wait)
}

// awaitRoom is for a writer that found no room in log w, in Backpressure
// mode: while records on their way to cold hold room, it waits for one
// of their writes, until b.until (Flusher.Wait from the write's start,
// shared by its tries, and by an MSET's pairs: a write whose room is
// taken again before it writes tries again), and cleans again; a device
// that completed no write in that time is ErrColdBehind (T25) if
// b.refuse, else nil (T60). Without the
// wait the value would go straight to cold, and its writer wait for a
// stalled device unbounded. When the wait ended in time, or nothing is
// on its way to cold, or when shedding, it returns nil: the value goes
// where room is, else straight to cold.
func (c *Cache) awaitRoom(w memTier, n int, key []byte, b bound) error {
	if c.fl == nil || c.shed {
		return nil
	}
	held := c.fl.Held()
	if held == 0 {
		return nil
	}
	wait := c.fl.Options().Wait
	ctx, cancel := context.WithDeadline(c.yield.Load().ctx, b.until)
	defer cancel()
	if c.fl.WaitRoom(ctx, held-1) {
		c.makeRoom(w, n, key)
		return nil
	}
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) || !b.refuse {
		return nil // a Flush holds calls off, the flusher closed, or an MSET stored a pair already
	}
	c.st.coldBehind.Add(1)
	return fmt.Errorf("%w: no room in DRAM for %d bytes while %d bytes of it wait for the cold store, after %v (flusher.wait); nothing was stored",
		ErrColdBehind, n, held, wait)
}

// throttle holds a writer back in Shed mode, after its write and outside
// every lock, while the flusher holds more than half its bound: DRAM
// records being written to cold where they are and copies of values too
// large for DRAM. So a burst of writes faster than the device waits for
// it instead of dropping evictions, and the flusher stays within its
// share of memory (T25). In Backpressure mode writers wait before they
// write instead (admitWrite).
func (c *Cache) throttle() {
	if c.fl == nil || !c.shed || c.fl.Held() <= c.flushHigh || c.now() < c.throttleOff.Load() {
		return
	}
	c.waitFlusher(c.flushHigh / 2)
}

// waitFlusher waits, at most throttleWait, until the flusher holds at most
// limit. A wait that did not see it get there means the device stalls:
// writers stop waiting for a while (in Shed mode evictions may then be
// dropped, and are counted) rather than each waiting for it. A Flush
// about to hold calls off ends the wait at once (holdOff), which is no
// stall.
func (c *Cache) waitFlusher(limit int64) {
	bound := throttleWait
	if !c.shed {
		bound = min(bound, c.fl.Options().Wait) // a writer waits at most Wait in all
	}
	ctx, cancel := context.WithTimeout(c.yield.Load().ctx, bound)
	defer cancel()
	if !c.fl.WaitRoom(ctx, limit) && !errors.Is(ctx.Err(), context.Canceled) {
		c.throttleOff.Store(c.now() + int64(throttleOffFor))
	}
}

// throttleOffFor is how long writers stop waiting for a device that kept
// one waiting throttleWait.
const throttleOffFor = 5 * time.Second

// waitForFlusher holds a cleaning back while the room it needs is held by
// DRAM records being written to cold: until one write completed, at most
// throttleWait.
func (c *Cache) waitForFlusher() {
	if c.fl == nil || c.now() < c.throttleOff.Load() {
		return
	}
	held := c.fl.Held()
	if held == 0 {
		return
	}
	c.waitFlusher(held - 1)
}

// invalidateLocked removes the copies of the key's current version outside
// DRAM before it is overwritten: a copy in transit now, the cold copy
// through a delete queued in the flusher behind any write of the key
// still in flight (T3). The DRAM record is the caller's to replace or
// release.
// The delete item carries delVer: a tombstone of that version is removed
// when it completes.
func (c *Cache) invalidateLocked(key []byte, e *entry, delVer uint64) {
	c.tr.forget(key)
	if (e.cold != coldNone || e.hdr) && c.fl != nil {
		err := c.fl.Enqueue(&flusher.Item{Key: append([]byte(nil), key...), Delete: true, Version: delVer})
		if err != nil {
			c.coldError("invalidate", err)
		}
		c.st.coldDeletes.Add(1)
	}
	// The entry may now go at once (a later delete finds cold none) while
	// this cold delete is still queued: a reader that then misses the
	// directory does not adopt the old copy (coldDeleting, T4).
	e.coldForgotten()
}

// purgeLocked deletes the key from every tier: the entry goes, or becomes a
// tombstone until the cold delete completed (T4).
func (c *Cache) purgeLocked(sh *shard, key []byte, e *entry) {
	c.releaseLocked(e)
	c.memRemove(e)
	mayCold := (e.cold != coldNone || e.hdr) && c.fl != nil
	tomb := c.nextVersion()
	c.invalidateLocked(key, e, tomb)
	if mayCold {
		if e.state == stateLive {
			sh.addLive(e, -1)
		}
		e.tombstone(tomb)
		sh.unfileExpiry(e)
		c.st.tombstones.Add(1)
		return
	}
	sh.removeLocked(e.key, e)
}

// MSet stores every pair (no NX/XX). Every pair is checked first (an
// empty key or a value over MaxValue stores nothing). In writethrough mode
// the pairs are written together and each is published once durable; an
// error is ErrColdReadOnly (nothing stored) or a *PartialError naming how
// many pairs were stored. Otherwise it stops at the first failing Set
// (ErrNoSpace, or a cold write of a value warm cannot hold).
func (c *Cache) MSet(kvs [][2][]byte) error {
	keys := make([][]byte, len(kvs))
	for i, kv := range kvs {
		keys[i] = kv[0]
	}
	defer c.remoteAwait(keys...) // at most RemoteOptions.Wait in all (T38)
	for _, kv := range kvs {
		switch {
		case len(kv[0]) == 0:
			return ErrEmptyKey
		case len(kv[1]) > c.o.MaxValue:
			return fmt.Errorf("%w: %d bytes, the limit is %d; nothing was stored", ErrTooLarge, len(kv[1]), c.o.MaxValue)
		}
	}
	if c.writeThrough() {
		return c.msetDurable(kvs)
	}
	if !c.enter() {
		return ErrClosed
	}
	b := bound{until: c.waitUntil(), refuse: true} // one Flusher.Wait for every pair (T60)
	err := c.admitWrite(b.until)                   // once for every pair: a refused MSET stores none
	c.exit()
	if err != nil {
		return err
	}
	for _, kv := range kvs {
		if _, err := c.setKey(kv[0], kv[1], SetOptions{}, false, b); err != nil {
			return err
		}
		b.refuse = false // a pair is stored: an ErrColdBehind now would say nothing was (T60)
	}
	return nil
}

// msetDurable is MSet in writethrough mode: every pair's durable write is
// begun (so they share syncs), then each is published once durable.
func (c *Cache) msetDurable(kvs [][2][]byte) error {
	if !c.enter() {
		return ErrClosed
	}
	defer c.exit()
	keys := make([][]byte, len(kvs))
	for i := range kvs {
		keys[i] = kvs[i][0]
	}
	defer c.wtLock(keys...)()
	if c.coldReadOnly.Load() {
		return ErrColdReadOnly
	}
	ops := make([]*pendOp, 0, len(kvs))
	pe := &PartialError{Op: "MSET"}
	for _, kv := range kvs {
		lo, _ := hashKey(kv[0])
		sh := c.dir.shard(lo)
		k, v, alloc := joinKV(kv[0], kv[1])
		sh.mu.Lock()
		op, err := c.beginSetLocked(sh, k, k, v, alloc, 0, KindString)
		sh.mu.Unlock()
		if err != nil {
			pe.Failed++
			pe.Err = cmp.Or(pe.Err, err)
			continue
		}
		ops = append(ops, op)
	}
	return c.finishAll(ops, pe)
}

// finishAll finishes the durable changes ops began (finishPurge), counting
// each in pe, and returns pe if any failed.
func (c *Cache) finishAll(ops []*pendOp, pe *PartialError) error {
	for _, op := range ops {
		if err := c.finishPurge(op); err != nil {
			pe.Failed++
			pe.Err = cmp.Or(pe.Err, err)
		} else {
			pe.Done++
		}
	}
	if pe.Failed > 0 {
		return pe
	}
	return nil
}

// Delete removes keys and returns how many existed. In writethrough mode
// it returns once every delete is durable in cold (they are sent
// together); an error is ErrColdReadOnly (nothing deleted) or a
// *PartialError: the keys whose delete failed are left as they were, the
// others are deleted (T28).
func (c *Cache) Delete(keys ...[]byte) (int, error) {
	defer c.remoteAwait(keys...)
	if !c.enter() {
		return 0, ErrClosed
	}
	defer c.exit()
	if c.writeThrough() && c.coldReadOnly.Load() {
		return 0, ErrColdReadOnly
	}
	defer c.wtLock(keys...)()
	n := 0
	var ops []*pendOp
	pe := &PartialError{Op: "DEL"}
	// A writethrough delete publishes only once durable: a key named
	// twice would still be live, and counted again, at its second name.
	var seen map[string]struct{}
	if c.writeThrough() && len(keys) > 1 {
		seen = make(map[string]struct{}, len(keys))
	}
	for _, key := range keys {
		if len(key) == 0 {
			continue
		}
		if seen != nil {
			if _, dup := seen[string(key)]; dup {
				continue
			}
			seen[string(key)] = struct{}{}
		}
		c.ensureRemote(key) // a key only the remote holds counts as deleted
		known := c.coldUnknown.Load() && c.known(key)
		if known && c.knownHook != nil {
			c.knownHook(key)
		}
		lo, _ := hashKey(key)
		sh := c.dir.shard(lo)
		sh.mu.Lock()
		var op *pendOp
		var err error
		c.remoteDelLocked(key)
		switch e := sh.m[viewString(key)]; {
		case e != nil && e.state == stateLive:
			if e.live(c.now()) {
				n++
			}
			op, err = c.beginPurgeLocked(sh, key, e)
		case e == nil && known && c.writeThrough():
			n++
			op, err = c.beginPurgeLocked(sh, key, nil)
		case e == nil && known && c.fl != nil:
			// Found, then forgotten by a trim before the lock (T15): its
			// copy is in cold, so delete it there; a tombstone counts its
			// header out of Keys until the delete completed (T37), and
			// readers do not adopt it meanwhile (T4).
			n++
			c.tombColdOnlyLocked(sh, key)
		}
		sh.mu.Unlock()
		if op != nil {
			ops = append(ops, op)
		}
		if err != nil {
			pe.Failed++
			pe.Err = cmp.Or(pe.Err, err)
		}
	}
	for _, op := range ops {
		if err := c.finishPurge(op); err != nil {
			pe.Failed++
			pe.Err = cmp.Or(pe.Err, err)
		}
	}
	if pe.Failed > 0 {
		pe.Done = max(n-pe.Failed, 0)
		return 0, pe
	}
	return n, nil
}

// Expire sets a ttl on an existing key (ttl ≤ 0 deletes it); false if the
// key is absent, or if a writethrough delete failed (ExpireIf reports why).
func (c *Cache) Expire(key []byte, ttl time.Duration) bool {
	ok, err := c.ExpireIf(key, ttl, 0)
	return ok && err == nil
}

// ExpireCond is EXPIRE's condition: a set of the ExpireNX, ExpireXX,
// ExpireGT and ExpireLT bits (0: always).
type ExpireCond uint8

// The conditions of ExpireIf, as Redis's EXPIRE options. A key without an
// expiry counts as expiring never: GT never applies to it, LT always does.
const (
	ExpireNX ExpireCond = 1 << iota // only if the key has no expiry
	ExpireXX                        // only if the key has an expiry
	ExpireGT                        // only if the new expiry is later
	ExpireLT                        // only if the new expiry is earlier
)

// ExpireIf is Expire that applies only when cond holds for the key's
// current expiry, decided under the key's shard lock with the change (one
// step); false if the key is absent or cond does not hold. A ttl ≤ 0
// deletes the key, in writethrough mode durably (Delete).
func (c *Cache) ExpireIf(key []byte, ttl time.Duration, cond ExpireCond) (bool, error) {
	return c.retime(key, func(now int64, e *entry) (int64, bool) {
		if ttl <= 0 {
			return now, cond.allows(e.exp, now, true) // delete
		}
		exp := backend.ExpiryAfter(now, ttl)
		return exp, cond.allows(e.exp, exp, false)
	})
}

// allows reports whether cond lets a key whose expiry is old (0: none)
// take the expiry exp, or an expiry already past (past: then earlier
// than any live key's). GT and LT compare the two in whole milliseconds
// (expiryMillis), Redis's unit: EXPIRE k 100 GT in the millisecond of
// SET k v EX 100 does not apply, as on redis-server (T43).
func (cond ExpireCond) allows(old, exp int64, past bool) bool {
	never := old == 0
	order := -1
	if !past && !never && cond&(ExpireGT|ExpireLT) != 0 {
		order = cmp.Compare(expiryMillis(exp), expiryMillis(old))
	}
	switch {
	case cond&ExpireNX != 0 && !never, cond&ExpireXX != 0 && never,
		cond&ExpireGT != 0 && (never || order <= 0),
		cond&ExpireLT != 0 && !never && order >= 0:
		return false
	}
	return true
}

// Persist removes the expiry; false if the key is absent or had none. In
// writethrough mode an error says the value could not be written again
// without its expiry, and nothing changed.
func (c *Cache) Persist(key []byte) (bool, error) {
	return c.retime(key, func(now int64, e *entry) (int64, bool) {
		return 0, e.exp != 0
	})
}

func (c *Cache) retime(key []byte, f func(now int64, e *entry) (int64, bool)) (bool, error) {
	defer c.remoteAwait(key)
	if len(key) == 0 {
		return false, nil
	}
	if !c.enter() {
		return false, ErrClosed
	}
	defer c.exit()
	defer c.wtLock(key)()
	lo, _ := hashKey(key)
	sh := c.dir.shard(lo)
	for try := 0; try < getThenTries; try++ {
		e := c.lockEntry(sh, key, true, true)
		now := c.now()
		if e == nil || !e.live(now) {
			sh.mu.Unlock()
			return false, nil
		}
		exp, ok := f(now, e)
		if !ok {
			sh.mu.Unlock()
			return false, nil
		}
		if backend.Expired(exp, now) {
			c.remoteDelLocked(key)
			op, err := c.beginPurgeLocked(sh, key, e)
			sh.mu.Unlock()
			if err == nil {
				err = c.finishPurge(op)
			}
			return err == nil, err
		}
		if !c.writeThrough() {
			old := e.exp
			e.retime(exp)
			sh.fileExpiry(e, old)
			c.remoteRetimeLocked(key, exp)
			sh.mu.Unlock()
			return true, nil
		}
		// Writethrough: the cold copy carries the expiry, so the value is
		// written again with it, durably, as a new version (T28), if the
		// key still has the version read.
		ver := e.ver
		sh.mu.Unlock()
		v, _, kind, found := c.get(nil, key, lo, try == 0)
		if !found {
			continue
		}
		sh.mu.Lock()
		if e := sh.m[viewString(key)]; e == nil || e.ver != ver || !e.live(c.now()) {
			sh.mu.Unlock()
			continue
		}
		k, val, alloc := joinKV(key, v)
		if err := c.setDurable(sh, key, k, val, alloc, exp, kind); err != nil {
			return false, err
		}
		return true, nil
	}
	return false, ErrKeyBusy
}

// Keys is the number of keys, from counters (T12, T37): O(shards), not
// O(keys), so DBSIZE and INFO cost the same at 100M keys as at 10. A key
// whose expiry passed counts until the sweep, or a read of it, removes it
// (SweepInterval, 1 s by default). With a cold store that counts its user
// keys (ColdKeyspace), the keys only cold holds count too, those of an
// earlier run included, and expired ones until a write or delete of them
// or cold reclaims them (the sweep knows only the directory's keys);
// without one, they count once touched.
func (c *Cache) Keys() int {
	if !c.enter() {
		return 0
	}
	defer c.exit()
	return int(c.keyCount())
}

// keyCount is what Keys answers: the directory's live keys, plus, with a
// cold keyspace, the user keys cold holds less those of the directory's
// entries (live or tombstones) whose header cold holds (T37). It can be
// off by the cold writes and deletes in flight, whose entry learns of
// them when they complete, and a key DRAM holds whose header the store
// reclaimed is counted out until its next cold write or delete completes.
func (c *Cache) keyCount() int64 {
	n := c.dir.keyCount()
	if c.ks == nil {
		return n
	}
	u, _ := c.ks.UserKeys()
	return max(n-c.dir.headerCount()+u, 0)
}

// Len counts the live keys by walking the directory, and with a cold
// keyspace (T37) a whole Scan, which reads cold's keys too: exact
// (expired keys the sweep has not removed yet are left out), O(keys);
// Keys is what DBSIZE answers.
func (c *Cache) Len() int {
	if c.ks != nil {
		// The keys only cold holds are not in the directory (T37).
		n := 0
		for cur := uint64(0); ; {
			next, keys := c.Scan(cur, math.MaxInt, nil)
			n += len(keys)
			if next == 0 {
				return n
			}
			cur = next
		}
	}
	now := c.now()
	n := 0
	for i := range c.dir.shards {
		sh := &c.dir.shards[i]
		sh.mu.RLock()
		for _, e := range sh.m {
			if e.live(now) {
				n++
			}
		}
		sh.mu.RUnlock()
	}
	return n
}

// joinKV copies key and value into one allocation (a flusher item's own
// copy: a value going to cold that no DRAM log holds, or a writethrough
// write) and returns the two parts, each capped at its length so that an
// append to one never writes into the other, and the bytes the allocation
// takes. Appending to a capped copy of key lets the runtime skip zeroing
// the bytes it is about to overwrite. A value over joinStep is copied a
// step at a time with a yield between, so that one big copy neither holds
// a P for its whole length nor delays a stop of the world (issue 18, a
// 64 MiB SET beside other clients).
func joinKV(key, value []byte) (k, v []byte, alloc int) {
	var kv []byte
	switch {
	case len(value) == 0:
		kv = append([]byte(nil), key...) // append of nothing would not copy key
	case len(value) <= joinStep:
		kv = append(key[:len(key):len(key)], value...)
	default:
		kv = make([]byte, len(key)+len(value)) // large: zeroed in preemptible chunks by the runtime
		copy(kv, key)
		for off := 0; off < len(value); off += joinStep {
			end := min(off+joinStep, len(value))
			copy(kv[len(key)+off:], value[off:end])
			if end < len(value) {
				runtime.Gosched()
			}
		}
	}
	n := len(kv)
	return kv[:len(key):len(key)], kv[len(key):n:n], cap(kv)
}

// coldKV is the copy of key and value a cold write keeps: joinKV's, or,
// for a big value the caller gave away (SetOptions.Owned), the value
// itself beside a copy of the key.
func coldKV(key, value []byte, owned bool) (k, v []byte, alloc int) {
	if !owned || len(value) <= joinStep {
		return joinKV(key, value)
	}
	k = append([]byte(nil), key...)
	return k[:len(k):len(k)], value[:len(value):len(value)], len(k) + len(value)
}

// joinStep is how much of a big value joinKV copies between two yields.
const joinStep = 1 << 20

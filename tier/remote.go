package tier

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/behind"
	"github.com/tiercache/tiercache/policy"
)

// The remote tier (T38-T42): a backend.Shared that the sidecars of many
// hosts read and write, below the local tiers. A key no local tier holds
// is read there (read-through), and a hit is admitted locally as a cold
// hit is (the promotion policy decides); every change a client makes here
// (a put, a delete, a new expiry) is written there behind, through a
// queue of one pending change per key (behind.Queue), or, write-through,
// before the call returns (at most RemoteOptions.Wait). Other sidecars'
// changes come back as invalidations (Watch), which drop the local copies.

// RemoteOptions tune the remote tier.
type RemoteOptions struct {
	// WriteThrough makes every change wait for the remote's answer, at
	// most Wait, before its call returns; otherwise (the default) changes
	// are written behind.
	WriteThrough bool
	// Wait bounds a write-through wait (default 100 ms): past it the call
	// returns, its change still queued, and the wait is counted; while the
	// remote is unavailable (nothing is sent) the call does not wait.
	Wait time.Duration
	// Queue tunes the write-behind queue (Store is set by the cache).
	Queue behind.Options
	// KeepOnResync serves the local tiers' copies unchecked when
	// invalidations may have been lost (a remote connection closed, a
	// local store of an earlier run at Open); by default each is checked
	// against the remote at its next use (T42).
	KeepOnResync bool
}

func (o *RemoteOptions) ensureDefaults() {
	if o.Wait == 0 {
		o.Wait = 100 * time.Millisecond
	}
}

// remoteClasses is how many classes of keys the admission epochs count
// changes in: a change of one key stops admissions of its class only.
const remoteClasses = 4096

// remoteTier is the cache's remote tier.
type remoteTier struct {
	s backend.Shared
	q *behind.Queue
	o RemoteOptions
	// epochs count local changes and invalidations per class of keys,
	// gen the resyncs: a remote read admits its value only if neither
	// moved since it began (T40).
	epochs [remoteClasses]atomic.Uint64
	gen    atomic.Uint64
	// rgen is the generation local copies are checked at (T42): a resync
	// moves it on, and a copy last known valid at an earlier one is
	// checked against the remote at its next use.
	rgen atomic.Uint32
	// inv holds invalidated keys until the remote goroutine drops their
	// local copies; lost says some could not be held (or invalidations
	// were lost), so every local copy is dropped instead.
	inv chan []byte
	// later holds invalidated keys heard while a change of theirs made
	// here was in flight or a new expiry queued, until it is answered
	// (remote goroutine only).
	later   map[string]struct{}
	lost    atomic.Bool
	cleared atomic.Bool // another sidecar's FLUSHALL: every local copy is dropped
	// clearPending: a FLUSHALL could not clear the remote; until a retry
	// does, nothing is read there or written to it (T41).
	clearPending atomic.Bool

	st struct {
		hits, misses, errors, admitted, invalidated, resyncs, waitTimeouts, clearErrors atomic.Uint64
		validated, replaced, dropped                                                    atomic.Uint64
	}
	stop, done chan struct{}
}

// class is the admission class of a key of hash lo.
func class(lo uint64) int { return int(lo & (remoteClasses - 1)) }

// openRemote opens the remote tier (Options.OpenRemote) once the local
// tiers are open.
func (c *Cache) openRemote(pre bool) error {
	s, err := c.o.OpenRemote(backend.Params{MaxValue: c.o.MaxValue, Batch: c.o.MGetColdBatch, WarmNode: -1, Logger: c.log})
	if err != nil {
		return err
	}
	qo := c.o.Remote.Queue
	qo.Store, qo.Logger = s, c.log
	r := &remoteTier{s: s, q: behind.New(qo), o: c.o.Remote, inv: make(chan []byte, 1<<16),
		later: map[string]struct{}{}, stop: make(chan struct{}), done: make(chan struct{})}
	r.rgen.Store(1)
	c.rt = r
	s.Watch(c.remoteChanged)
	go c.remoteLoop()
	return nil
}

// closeRemote sends what is queued (within the queue's CloseWait) and
// closes the store.
func (c *Cache) closeRemote() error {
	r := c.rt
	if r == nil {
		return nil
	}
	close(r.stop)
	<-r.done
	r.q.Close()
	return r.s.Close()
}

// remoteChanged is the store's Watch: other sidecars changed keys, any
// key may have changed (Lost), or another sidecar cleared the remote. It
// runs on the store's goroutine: it counts a change in the keys' classes
// at once (so a read in flight does not admit the old value, T40) and
// leaves dropping the local copies to the remote goroutine.
func (c *Cache) remoteChanged(ch backend.Change) {
	r := c.rt
	switch {
	case ch.Cleared:
		r.gen.Add(1)
		r.cleared.Store(true)
		return
	case ch.Lost:
		r.gen.Add(1)
		r.lost.Store(true)
		return
	}
	for _, k := range ch.Keys {
		lo, _ := hashKey(k)
		r.epochs[class(lo)].Add(1)
		select {
		case r.inv <- k:
		default:
			r.gen.Add(1)
			r.lost.Store(true)
		}
	}
}

// remoteLoop drops the local copies of invalidated keys, resyncs when
// invalidations were lost, and retries a pending remote Clear.
func (c *Cache) remoteLoop() {
	r := c.rt
	defer close(r.done)
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case k := <-r.inv:
			c.invalidateLocal(k)
		case <-t.C:
			c.invalidateLater()
			if r.cleared.Swap(false) {
				c.flushLocal()
			}
			if r.lost.Swap(false) {
				c.resyncLocal()
			}
			if r.clearPending.Load() {
				c.retryClear()
			}
		}
	}
}

// invalidateLocal drops key's local copies after another sidecar changed
// it (T39), unless a put or delete of the key made here is still queued
// for the remote (it comes after, and decides). A change made here and in
// flight may have landed before the other one, and a queued new expiry
// carries no value: the key is dropped once they are answered
// (invalidateLater). It changes nothing remote.
func (c *Cache) invalidateLocal(key []byte) {
	r := c.rt
	if r.q.QueuedValue(key) {
		return
	}
	if r.q.Pending(key) {
		if len(r.later) >= cap(r.inv) {
			r.gen.Add(1)
			r.lost.Store(true)
			return
		}
		r.later[string(key)] = struct{}{}
		return
	}
	if !c.enter() {
		return
	}
	defer c.exit()
	lo, _ := hashKey(key)
	sh := c.dir.shard(lo)
	sh.mu.Lock()
	var op *pendOp
	switch e := sh.m[viewString(key)]; {
	case e != nil && e.state == stateLive:
		op, _ = c.beginPurgeLocked(sh, key, e) // no remote delete: the change came from there
		r.st.invalidated.Add(1)
	case e == nil && c.coldUnknown.Load() && c.fl != nil && (c.ks == nil || c.ks.MayHold(key)):
		c.tombColdOnlyLocked(sh, key) // a copy only cold holds would be adopted again
		r.st.invalidated.Add(1)
	}
	c.removed(key, RemoteChanged) // also a key read through the remote and never kept here
	sh.mu.Unlock()
	if op != nil {
		if err := c.finishPurge(op); err != nil {
			c.log.Warn("remote: drop an invalidated key's local copy", zap.Error(err))
		}
	}
}

// invalidateLater drops the local copies of the keys invalidated while a
// change of theirs was in flight or a new expiry queued, once it is
// answered; a put or delete queued since comes after the other sidecar's
// change, and decides.
func (c *Cache) invalidateLater() {
	r := c.rt
	for k := range r.later {
		switch key := []byte(k); {
		case r.q.QueuedValue(key):
			delete(r.later, k)
		case !r.q.Pending(key):
			delete(r.later, k)
			c.invalidateLocal(key)
		}
	}
}

// resyncLocal makes every local copy suspect when invalidations may have
// been lost (T42): each is checked against the remote at its next use
// (validate), unless KeepOnResync.
func (c *Cache) resyncLocal() {
	r := c.rt
	r.st.resyncs.Add(1)
	if !r.o.KeepOnResync {
		r.bumpGen()
	}
	c.removed(nil, Flushed) // what tracking clients hold may be stale too
}

// flushLocal drops every local copy after another sidecar cleared the
// remote (T41): a local FLUSHALL that changes nothing remote.
func (c *Cache) flushLocal() {
	if err := c.flush(); err != nil && !errors.Is(err, ErrClosed) {
		c.log.Warn("remote: drop the local copies after another sidecar's FLUSHALL", zap.Error(err))
		c.rt.cleared.Store(true) // try again
		return
	}
	c.removed(nil, Flushed)
}

// clearRemote clears the remote for a FLUSHALL (T41): the keys written so
// far are gone for every sidecar; queued changes of them are dropped. If
// the remote cannot clear now, nothing is read there or written to it
// until a retry does.
func (c *Cache) clearRemote() {
	r := c.rt
	r.q.Reset()
	ctx, cancel := context.WithTimeout(context.Background(), r.o.Wait)
	defer cancel()
	if err := r.s.Clear(ctx); err != nil {
		r.st.clearErrors.Add(1)
		r.clearPending.Store(true)
		c.log.Warn("remote: FLUSHALL could not clear the remote tier now; it is not used until a retry does", zap.Error(err))
	}
}

func (c *Cache) retryClear() {
	r := c.rt
	ctx, cancel := context.WithTimeout(context.Background(), r.o.Wait)
	defer cancel()
	if err := r.s.Clear(ctx); err != nil {
		return
	}
	r.clearPending.Store(false)
	c.log.Info("remote: the pending FLUSHALL cleared the remote tier")
}

// usable reports whether the remote is worth a read now.
func (r *remoteTier) usable() bool {
	return r != nil && !r.clearPending.Load() && r.s.Available()
}

// remotePutLocked queues a put of key's new version (its shard's write
// lock held: changes of a key are queued in the order they are made, T38).
func (c *Cache) remotePutLocked(key, value []byte, exp int64, kind Kind) {
	if r := c.rt; r != nil {
		lo, _ := hashKey(key)
		r.epochs[class(lo)].Add(1)
		r.q.Put(key, value, exp, coldFlags(kind))
	}
}

// remotePutLiveLocked queues a put of key's live aggregate (its shard's
// write lock held) whose value is read when the put is sent (behind W6):
// its record is built once per send, not once per change (T44).
func (c *Cache) remotePutLiveLocked(key []byte) {
	if r := c.rt; r != nil {
		lo, _ := hashKey(key)
		r.epochs[class(lo)].Add(1)
		r.q.PutLazy(key, c.remoteFill)
	}
}

// remoteFill is a lazy remote put's value (behind.Fill): key's value as
// the local tiers hold it now, with its expiry and kind; none when the
// key is gone (its delete is queued behind).
func (c *Cache) remoteFill(dst, key []byte) ([]byte, int64, uint32, bool) {
	lo, _ := hashKey(key)
	sh := c.dir.shard(lo)
	sh.mu.RLock()
	e := sh.m[viewString(key)]
	if e == nil || !e.live(c.now()) {
		sh.mu.RUnlock()
		return dst, 0, 0, false
	}
	exp, flags := e.exp, coldFlags(e.kind)
	v, _, ok := c.memLookup(dst, key, e)
	sh.mu.RUnlock()
	if ok {
		return v, exp, flags, true
	}
	v, _, kind, ok := c.get(dst, key, lo, false)
	return v, exp, coldFlags(kind), ok
}

// remoteDelLocked queues a delete of key (its shard's write lock held).
func (c *Cache) remoteDelLocked(key []byte) {
	if r := c.rt; r != nil {
		lo, _ := hashKey(key)
		r.epochs[class(lo)].Add(1)
		r.q.Delete(key)
	}
}

// remoteRetimeLocked queues key's new expiry (its shard's write lock held).
func (c *Cache) remoteRetimeLocked(key []byte, exp int64) {
	if r := c.rt; r != nil {
		lo, _ := hashKey(key)
		r.epochs[class(lo)].Add(1)
		r.q.Retime(key, exp)
	}
}

// remoteAwait waits, write-through, for the remote's answer to the
// changes of keys queued so far (at most Wait in all; T38), unless the
// remote is unavailable: it is then given up at once, counted.
func (c *Cache) remoteAwait(keys ...[]byte) {
	r := c.rt
	if r == nil || !r.o.WriteThrough || r.clearPending.Load() {
		return
	}
	if !r.s.Available() { // nothing is sent (behind W4): no answer can come
		for _, k := range keys {
			if r.q.Pending(k) {
				r.st.waitTimeouts.Add(1)
				return
			}
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.o.Wait)
	defer cancel()
	for _, k := range keys {
		if !r.q.Wait(ctx, k) {
			r.st.waitTimeouts.Add(1)
			return
		}
	}
}

// AwaitRemote waits, write-through, for the remote's answer to the
// changes of keys made so far, at most RemoteOptions.Wait in all (T38):
// what a command of many keys whose Sets did not wait
// (SetOptions.NoRemoteWait) calls once.
func (c *Cache) AwaitRemote(keys ...[]byte) { c.remoteAwait(keys...) }

// remoteRead looks key up in the remote after the local tiers missed it
// (T40): a hit is appended to dst and, if the promotion policy takes it
// as it takes a cold hit, admitted locally; a change of the key made or
// heard of meanwhile keeps it out. A timeout or error is a miss.
func (c *Cache) remoteRead(dst, key []byte, lo uint64) ([]byte, Kind, bool) {
	r := c.rt
	if !r.usable() || r.q.Pending(key) {
		return dst, 0, false
	}
	ep, gen := r.epochs[class(lo)].Load(), r.gen.Load()
	v, m, found, err := r.s.Get(context.Background(), dst, key, -1)
	switch {
	case err != nil:
		r.st.errors.Add(1)
		return dst, 0, false
	case !found:
		r.st.misses.Add(1)
		return dst, 0, false
	}
	r.st.hits.Add(1)
	if c.pro.Promote(lo, len(v)-len(dst), policy.Remote) != policy.None {
		c.admitRemote(key, v[len(dst):], m, lo, ep, gen)
	}
	return v, kindOfFlags(m.Flags), true
}

// ensureRemote makes a key only the remote holds local before a call that
// decides on the key's entry (NX, XX, INCR, GETDEL, EXPIRE, TTL, TYPE,
// DEL, ...: lockEntry with adopt): it is admitted whatever the promotion
// policy says. No lock may be held.
func (c *Cache) ensureRemote(key []byte) {
	r := c.rt
	if !r.usable() || len(key) == 0 {
		return
	}
	lo, _ := hashKey(key)
	sh := c.dir.shard(lo)
	sh.mu.RLock()
	e := sh.m[viewString(key)]
	local := e != nil && e.live(c.now())
	sh.mu.RUnlock()
	if local || r.q.Pending(key) {
		return
	}
	ep, gen := r.epochs[class(lo)].Load(), r.gen.Load()
	v, m, found, err := r.s.Get(context.Background(), nil, key, -1)
	switch {
	case err != nil:
		r.st.errors.Add(1)
	case !found:
		r.st.misses.Add(1)
	default:
		r.st.hits.Add(1)
		c.admitRemote(key, v, m, lo, ep, gen)
	}
}

// ensureValid checks key's local copy against the remote if it may be
// stale, before a call decides on its entry (lockEntry with adopt, T42).
func (c *Cache) ensureValid(key []byte) {
	r := c.rt
	if r == nil || r.o.KeepOnResync {
		return
	}
	lo, _ := hashKey(key)
	sh := c.dir.shard(lo)
	sh.mu.RLock()
	e := sh.m[viewString(key)]
	var ver uint64
	suspect := e != nil && e.live(c.now()) && r.suspect(e)
	if suspect {
		ver = e.ver
	}
	sh.mu.RUnlock()
	if suspect {
		c.validate(key, lo, sh, ver)
	}
}

// admitRemote gives key a local entry holding v, read from the remote
// when its class's epoch was ep and the resync generation gen: only if
// neither moved since and the key has no live entry (T40). The value is
// not written back to the remote.
func (c *Cache) admitRemote(key, v []byte, m backend.Meta, lo, ep, gen uint64) {
	r := c.rt
	if w := c.placeFor(len(v)); w != memNone {
		c.makeRoom(w, len(v), key)
	}
	sh := c.dir.shard(lo)
	sh.mu.Lock()
	e := sh.m[viewString(key)]
	if e != nil && e.live(c.now()) || r.epochs[class(lo)].Load() != ep || r.gen.Load() != gen || r.q.Pending(key) ||
		backend.Expired(m.Expiry, c.now()) || sh.pendingLocked(key) {
		sh.mu.Unlock()
		return
	}
	_, err := c.writeLocked(sh, e, key, v, m.Expiry, kindOfFlags(m.Flags), false)
	sh.mu.Unlock()
	c.processVictims()
	if err == nil {
		r.st.admitted.Add(1)
	}
}

// remoteMany reads the keys at idx, which the local tiers missed, in the
// remote tier in one call (one pipeline a node), filling out and kinds and
// admitting hits as remoteRead does (T40); the rest are misses.
func (c *Cache) remoteMany(keys [][]byte, idx []int, out [][]byte, kinds []Kind) {
	if len(idx) == 0 {
		return
	}
	r := c.rt
	var ask []int
	for _, i := range idx {
		if r.usable() && !r.q.Pending(keys[i]) {
			ask = append(ask, i)
		} else {
			c.count(keys[i], policy.None, false)
		}
	}
	if len(ask) == 0 {
		return
	}
	ks := make([][]byte, len(ask))
	los := make([]uint64, len(ask))
	eps := make([]uint64, len(ask))
	gen := r.gen.Load()
	for j, i := range ask {
		ks[j] = keys[i]
		los[j], _ = hashKey(keys[i])
		eps[j] = r.epochs[class(los[j])].Load()
	}
	for j, res := range r.s.GetMany(context.Background(), ks, nil, nil) {
		i := ask[j]
		switch {
		case res.Err != nil:
			r.st.errors.Add(1)
		case !res.Found:
			r.st.misses.Add(1)
		default:
			r.st.hits.Add(1)
			out[i], kinds[i] = nonNil(res.Value), kindOfFlags(res.Meta.Flags)
			c.count(keys[i], policy.Remote, true)
			if c.pro.Promote(los[j], len(res.Value), policy.Remote) != policy.None {
				c.admitRemote(keys[i], res.Value, res.Meta, los[j], eps[j], gen)
			}
			continue
		}
		c.count(keys[i], policy.None, false)
	}
}

// remoteHas reports which of keys the remote holds, without admitting or
// reading them (EXISTS, TIER).
func (c *Cache) remoteHas(keys [][]byte) []bool {
	r := c.rt
	has := make([]bool, len(keys))
	if !r.usable() {
		return has
	}
	var ask [][]byte
	var at []int
	for i, k := range keys {
		if !r.q.Pending(k) {
			ask, at = append(ask, k), append(at, i)
		}
	}
	if len(ask) == 0 {
		return has
	}
	found, errs := r.s.HasMany(context.Background(), ask)
	for j := range ask {
		has[at[j]] = found[j]
		if errs[j] != nil {
			r.st.errors.Add(1)
		}
	}
	return has
}

// The validity of local copies (T42): every entry keeps, in the top 16
// bits of its marks, the remote generation it was last known valid at
// (rgen): set when a local change writes it or a remote read admits or
// checks it. A resync (invalidations may have been lost) moves the
// generation on, so every local copy is checked against the remote at
// its next use instead of being dropped: a copy the remote still holds
// stays, a changed one is replaced, a deleted one dropped, and while the
// remote does not answer the local copy is served. Generation 0 is never
// current: an entry adopted from cold (an earlier run's store) or made
// before the remote tier opened is checked first.

const rgenShift = 16

// rgen is the remote generation e was last known valid at.
func (e *entry) rgen() uint16 { return uint16(e.marks.Load() >> rgenShift) }

// setRgen records g as e's (the shard's write lock held).
func (e *entry) setRgen(g uint16) {
	for {
		old := e.marks.Load()
		if e.marks.CompareAndSwap(old, old&(1<<rgenShift-1)|uint32(g)<<rgenShift) {
			return
		}
	}
}

// current is the remote generation now (never 0).
func (r *remoteTier) current() uint16 { return uint16(r.rgen.Load()) }

// bumpGen moves the remote generation on, skipping 0.
func (r *remoteTier) bumpGen() {
	for uint16(r.rgen.Add(1)) == 0 {
	}
}

// suspect reports whether e's copy is to be checked against the remote
// before it is served (nil-safe: no remote tier, nothing is suspect).
func (r *remoteTier) suspect(e *entry) bool {
	return r != nil && !r.o.KeepOnResync && e.rgen() != r.current()
}

// markValidLocked records that e's copy is valid now (its shard's write
// lock held): a local change wrote it, or the remote agreed.
func (c *Cache) markValidLocked(e *entry) {
	if r := c.rt; r != nil {
		e.setRgen(r.current())
	}
}

// validate checks key's local copy of version ver against the remote
// (T42): the remote's value replaces it, the remote's absence drops it,
// and a copy that cannot be checked now (the remote unavailable or
// failing) is served as it is and checked again at its next use. A
// change of the key made here and still queued wins: the copy is valid.
// No lock may be held.
func (c *Cache) validate(key []byte, lo uint64, sh *shard, ver uint64) {
	r := c.rt
	if !r.usable() {
		return
	}
	pending := r.q.Pending(key)
	ep, gen := r.epochs[class(lo)].Load(), r.gen.Load()
	var v []byte
	var m backend.Meta
	var found bool
	if !pending {
		var err error
		if v, m, found, err = r.s.Get(context.Background(), nil, key, -1); err != nil {
			r.st.errors.Add(1)
			return
		}
	}
	if w := c.placeFor(len(v)); found && w != memNone {
		c.makeRoom(w, len(v), key)
	}
	sh.mu.Lock()
	e := sh.m[viewString(key)]
	if e == nil || e.ver != ver || !e.live(c.now()) || r.epochs[class(lo)].Load() != ep || r.gen.Load() != gen ||
		sh.pendingLocked(key) {
		sh.mu.Unlock()
		return // changed meanwhile: the caller plans again
	}
	var op *pendOp
	switch {
	case pending || found && e.loc != 0 && e.kind == kindOfFlags(m.Flags) && sameExpiry(e.exp, m.Expiry) && c.memEqual(e, v):
		c.markValidLocked(e)
		r.st.validated.Add(1)
	case found:
		if _, err := c.writeLocked(sh, e, key, v, m.Expiry, kindOfFlags(m.Flags), false); err == nil {
			r.st.replaced.Add(1)
			c.removed(key, RemoteChanged)
		}
	default:
		op, _ = c.beginPurgeLocked(sh, key, e) // gone from the remote: no remote delete
		r.st.dropped.Add(1)
		c.removed(key, RemoteChanged)
	}
	sh.mu.Unlock()
	c.processVictims()
	if op != nil {
		if err := c.finishPurge(op); err != nil {
			c.log.Warn("remote: drop a local copy the remote no longer holds", zap.Error(err))
		}
	}
}

// sameExpiry reports whether a local expiry (ns) and the remote's (kept to
// the millisecond) are the same time.
func sameExpiry(local, remote int64) bool {
	if local == 0 || remote == 0 {
		return local == remote
	}
	return (local+int64(time.Millisecond)-1)/int64(time.Millisecond) == remote/int64(time.Millisecond)
}

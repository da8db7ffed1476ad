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
	// returns, its change still queued, and the wait is counted.
	Wait time.Duration
	// Queue tunes the write-behind queue (Store is set by the cache).
	Queue behind.Options
	// KeepOnResync keeps the local tiers' copies when invalidations may
	// have been lost (a remote connection closed, another sidecar's
	// FLUSHALL, a local store of an earlier run at Open); by default they
	// are dropped (a local flush, T42).
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
	// inv holds invalidated keys until the remote goroutine drops their
	// local copies; lost says some could not be held (or invalidations
	// were lost), so every local copy is dropped instead.
	inv  chan []byte
	lost atomic.Bool
	// clearPending: a FLUSHALL could not clear the remote; until a retry
	// does, nothing is read there or written to it (T41).
	clearPending atomic.Bool

	st struct {
		hits, misses, errors, admitted, invalidated, resyncs, waitTimeouts, clearErrors atomic.Uint64
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
		stop: make(chan struct{}), done: make(chan struct{})}
	c.rt = r
	s.Watch(c.remoteChanged)
	if pre && !r.o.KeepOnResync && c.o.Durability != DurabilityWriteThrough {
		// An earlier run's local copies missed every change made since.
		r.lost.Store(true)
	}
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

// remoteChanged is the store's Watch: other sidecars changed keys, or any
// key may have changed (all). It runs on the store's goroutine: it counts
// the change in the keys' classes at once (so a read in flight does not
// admit the old value, T40) and leaves dropping the local copies to the
// remote goroutine.
func (c *Cache) remoteChanged(keys [][]byte, all bool) {
	r := c.rt
	if all {
		r.gen.Add(1)
		r.lost.Store(true)
		return
	}
	for _, k := range keys {
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
// it (T39), unless a change of the key made here is still on its way to
// the remote (it comes after, and decides). It changes nothing remote.
func (c *Cache) invalidateLocal(key []byte) {
	r := c.rt
	if r.q.Pending(key) || !c.enter() {
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

// resyncLocal drops every local copy, when invalidations may have been
// lost (T42), unless KeepOnResync.
func (c *Cache) resyncLocal() {
	r := c.rt
	r.st.resyncs.Add(1)
	if r.o.KeepOnResync {
		return
	}
	if err := c.flush(); err != nil && !errors.Is(err, ErrClosed) {
		c.log.Warn("remote: drop the local copies after lost invalidations", zap.Error(err))
		r.lost.Store(true) // try again
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
// changes of keys queued so far (at most Wait in all; T38).
func (c *Cache) remoteAwait(keys ...[]byte) {
	r := c.rt
	if r == nil || !r.o.WriteThrough || r.clearPending.Load() {
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
		m.Expiry != 0 && m.Expiry <= c.now() || sh.pendingLocked(key) {
		sh.mu.Unlock()
		return
	}
	_, err := c.writeLocked(sh, e, key, v, m.Expiry, kindOfFlags(m.Flags))
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

// remoteHas reports which of keys the remote holds, without admitting them
// (EXISTS, TIER).
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
	for j, res := range r.s.GetMany(context.Background(), ask, nil, nil) {
		has[at[j]] = res.Found
		if res.Err != nil {
			r.st.errors.Add(1)
		}
	}
	return has
}

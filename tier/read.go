package tier

import (
	"time"

	"context"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/policy"
)

// Get appends key's value to dst. ok is false on a miss. A cold-tier device
// error is counted and logged and reads as a miss (the cache keeps serving).
func (c *Cache) Get(dst, key []byte) ([]byte, bool, error) {
	v, shared, ok, _, err := c.View(dst, key)
	if shared {
		v = append(dst, v...)
	}
	return v, ok, err
}

// View is Get without the copy for a hot hit: value is then the hot copy
// itself (shared is true), which is immutable and stays valid for as long
// as the caller keeps it, but must not be written to nor used as a buffer.
// Any other hit is appended to dst, as Get does (shared is false). cold
// reports that the answer, hit or miss, took a read of the cold device: a
// caller with more reads lined up can send them together (MGetPrefix) and
// wait for the device once instead of once per key. A key of another kind
// than KindString answers ErrWrongKind (T23).
func (c *Cache) View(dst, key []byte) (value []byte, shared, ok, cold bool, err error) {
	v, kind, shared, ok, cold, err := c.ViewAny(dst, key)
	if ok && kind != KindString {
		return dst, false, false, cold, ErrWrongKind
	}
	return v, shared, ok, cold, err
}

// ViewAny is View for a value of any kind, which it returns beside it.
func (c *Cache) ViewAny(dst, key []byte) (value []byte, kind Kind, shared, ok, cold bool, err error) {
	if len(key) == 0 {
		return dst, 0, false, false, false, ErrEmptyKey
	}
	if !c.enter() {
		return dst, 0, false, false, false, ErrClosed
	}
	lo, _ := hashKey(key)
	v, he, t, kind, ok := c.get(dst, key, lo, true, true)
	c.count(t, ok)
	c.exit()
	if he != nil {
		return he.val[:len(he.val):len(he.val)], kind, true, true, false, nil
	}
	return v, kind, false, ok, t == policy.Cold, nil
}

// record counts the access for the promotion policy once per read (*rec
// says it is still due): a hit already served by hot is sampled (it only
// feeds the demotion decision), any other read counts before the policy
// decides on a promotion.
func (c *Cache) record(rec *bool, lo uint64, hot bool) {
	if !*rec {
		return
	}
	*rec = false
	if hot {
		c.pro.RecordSampled(lo)
	} else {
		c.pro.Record(lo)
	}
}

// get reads key by executing planRead's decisions: it returns the value
// (appended to dst) and the tier it came from, or, with share, a hot hit's
// shared copy (he) instead of a copy of it. rec says the access is to be
// recorded for the policy. A hot hit found through the entry's hot pointer
// does not go through ristretto: one access in policy.SampleEvery is
// passed on to ristretto (its TinyLFU sketch only needs the frequencies'
// proportions) and to the promotion policy (a hot hit only feeds
// demotion).
func (c *Cache) get(dst, key []byte, lo uint64, rec, share bool) (v []byte, he *hotEntry, t policy.Tier, kind Kind, ok bool) {
	sh := c.dir.shard(lo)
	for attempt := 0; attempt < 3; attempt++ {
		sh.mu.RLock()
		v, p := c.planRead(dst, key, sh, c.now(), share)
		switch p.act {
		case readServe:
			if p.hot != nil {
				sh.mu.RUnlock()
				if rec && policy.Sample() {
					c.hot.touchSampled(key)
					c.pro.RecordSample(lo)
				}
				return dst, p.hot, policy.Hot, p.kind, true
			}
			if rec && p.tier == policy.Hot && policy.Sample() {
				c.hot.touchSampled(key) // as the shared hot hits above
			}
			c.record(&rec, lo, p.tier == policy.Hot)
			if p.tier == policy.Warm && c.pro.Promote(lo, len(v)-len(dst), policy.Warm) == policy.Hot {
				c.promoteWarm(key, v[len(dst):], sh, p.e)
			}
			sh.mu.RUnlock()
			return v, nil, p.tier, p.kind, true
		case readMiss:
			sh.mu.RUnlock()
			c.record(&rec, lo, false)
			return dst, nil, policy.None, 0, false
		case readAdopt:
			sh.mu.RUnlock()
			c.record(&rec, lo, false)
			if c.coldDeleting(key) {
				return dst, nil, policy.None, 0, false
			}
			v, k, ok, retry := c.adopt(dst, key, sh, p.epoch)
			if retry {
				continue
			}
			return v, nil, policy.Cold, k, ok
		case readCold:
			sh.mu.RUnlock()
			c.record(&rec, lo, false)
			v, m, found, err := c.cold.Get(context.Background(), dst, key, p.size)
			if err != nil {
				c.coldError("get", err)
				return dst, nil, policy.None, 0, false
			}
			if found && m.Version == p.ver {
				c.promoteFromCold(key, v[len(dst):], lo, p.ver)
				return v, nil, policy.Cold, p.kind, true
			}
			if found && c.pendingVersion(sh, key, m.Version) {
				return v, nil, policy.Cold, m.Kind, true // durable, being published (T28)
			}
			dst = v[:len(dst)]
			if !found && c.changedSince(sh, key, p.ver) {
				continue // a change replaced the record as it was read (a chunked overwrite's cleanup): read again
			}
			if !found {
				c.lostVersion(key, p.ver, true) // the store reclaimed it
				return dst, nil, policy.None, 0, false
			}
		case readRetry:
			sh.mu.RUnlock()
			c.record(&rec, lo, false)
		}
		if attempt == 0 {
			// A copy may be between ristretto's store and our eviction
			// callback: wait until ristretto finished what it is doing.
			c.hot.rc.Wait()
		}
	}
	c.st.phantoms.Add(1)
	return dst, nil, policy.None, 0, false
}

// promoteHot copies a warm or cold hit into hot without waiting and
// reports whether ristretto took it.
// The caller holds the key's shard lock sh; e is the key's entry.
func (c *Cache) promoteHot(key, val []byte, sh *shard, e *entry) bool {
	k, v, alloc := joinKV(key, val)
	he := &hotEntry{key: k, val: v, ver: e.ver, exp: e.exp, alloc: int32(alloc), ent: e, sh: sh}
	e.hot.Store(he) // before ristretto can evict it (see Set)
	if c.hot.set(he, false) {
		c.st.promotions.Add(1)
		return true
	}
	e.hot.CompareAndSwap(he, nil)
	return false
}

// promoteWarm moves a warm hit (or a copy on its way to warm) up to hot:
// the warm copy leaves warm once hot holds it, so DRAM holds each key once
// (T22). Readers find it through the entry's hot pointer meanwhile; if
// ristretto later turns it away, its eviction callback demotes it again
// (T5). The caller holds sh's lock.
func (c *Cache) promoteWarm(key, val []byte, sh *shard, e *entry) {
	if c.promoteHot(key, val, sh, e) && c.warm != nil {
		c.warm.Delete(key)
	}
}

// promoteFromCold copies a cold hit up if the policy says so and the key
// still has version ver.
func (c *Cache) promoteFromCold(key, val []byte, lo, ver uint64) {
	to := c.pro.Promote(lo, len(val), policy.Cold)
	if to == policy.None {
		return
	}
	sh := c.dir.shard(lo)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	e := sh.m[viewString(key)]
	if e == nil || e.state != stateLive || e.ver != ver {
		return
	}
	if to == policy.Hot && len(val) <= c.o.HotMaxValue {
		c.promoteHot(key, val, sh, e)
		return
	}
	if c.warm != nil && e.cold != coldNone {
		if err := c.warm.Set(key, val, Meta{Version: ver}); err == nil {
			c.st.promotions.Add(1)
		}
	}
}

// coldDeleting reports whether a cold delete of key is queued or running:
// cold may still hold the copy it deletes, which must not be adopted. A
// reader asks after it found no directory entry and before it reads cold;
// any delete of a copy older than the entry's removal was queued before
// that removal (invalidateLocked, purgeLocked), so it is seen here unless
// it already completed (T4).
func (c *Cache) coldDeleting(key []byte) bool {
	return c.fl != nil && c.fl.DeletePending(key)
}

// adopt looks up a key the directory does not know in a cold store that
// held data when opened, and records it. retry says the directory changed
// meanwhile (the caller starts over).
func (c *Cache) adopt(dst, key []byte, sh *shard, epoch uint64) (v []byte, kind Kind, ok, retry bool) {
	v, m, found, err := c.cold.Get(context.Background(), dst, key, -1)
	if err != nil {
		c.coldError("get", err)
		return dst, 0, false, false
	}
	if !found || (m.Expiry != 0 && m.Expiry <= c.now()) {
		return v[:len(dst)], 0, false, false
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.m[viewString(key)] != nil || sh.epoch != epoch {
		return v[:len(dst)], 0, false, true
	}
	sh.adoptLocked(key, m, len(v)-len(dst))
	c.st.adopted.Add(1)
	return v, m.Kind, true, false
}

// MGet returns one value per key (nil for a miss). The cold lookups of the
// whole batch go to the device as one GetMany submission. A hot hit is the
// hot copy itself, as View returns it (immutable, capped at its length):
// the caller must not write to the values.
func (c *Cache) MGet(keys [][]byte) ([][]byte, error) {
	out, _, err := c.MGetPrefix(keys, -1)
	return out, err
}

// unknownSize is what MGetPrefix counts for a key the directory does not
// know yet (one to look up in a cold store of an earlier run): its size is
// known only once it is read.
const unknownSize = 64 << 10

// MGetPrefix is MGet of the longest prefix keys[:n] whose values fit in
// maxBytes by the directory's sizes (a key not known yet counts as 64 KiB),
// at least one key; maxBytes < 0 takes every key. It returns len(keys[:n])
// values. Whoever answers a run of separate reads with it (the server, for
// pipelined GETs) so holds a bounded number of bytes at once, and reads
// the rest of the run in another call.
func (c *Cache) MGetPrefix(keys [][]byte, maxBytes int64) ([][]byte, int, error) {
	if !c.enter() {
		return nil, 0, ErrClosed
	}
	defer c.exit()
	keys = keys[:c.prefix(keys, maxBytes)]
	vals, kinds := c.mget(keys)
	for i, k := range kinds {
		if k != KindString {
			vals[i] = nil // MGET answers nil for a key of another kind (T23)
		}
	}
	return vals, len(keys), nil
}

// MGetPrefixAny is MGetPrefix for values of any kind: it also returns each
// value's kind (for a miss, KindString).
func (c *Cache) MGetPrefixAny(keys [][]byte, maxBytes int64) ([][]byte, []Kind, int, error) {
	if !c.enter() {
		return nil, nil, 0, ErrClosed
	}
	defer c.exit()
	keys = keys[:c.prefix(keys, maxBytes)]
	vals, kinds := c.mget(keys)
	return vals, kinds, len(keys), nil
}

// prefix is how many keys MGetPrefix takes: sizes are read under each
// shard's read lock, one key at a time, so they are a snapshot, and a value
// rewritten meanwhile may make the batch larger than maxBytes by the change.
func (c *Cache) prefix(keys [][]byte, maxBytes int64) int {
	if maxBytes < 0 || len(keys) <= 1 {
		return len(keys)
	}
	var total int64
	for i, key := range keys {
		size := int64(unknownSize)
		lo, _ := hashKey(key)
		sh := c.dir.shard(lo)
		sh.mu.RLock()
		if e := sh.m[viewString(key)]; e != nil {
			size = e.size
		}
		sh.mu.RUnlock()
		if total += size; i > 0 && total > maxBytes {
			return i
		}
	}
	return len(keys)
}

// mget reads keys, of any kind: one value (nil for a miss) and one kind
// per key.
func (c *Cache) mget(keys [][]byte) (out [][]byte, kinds []Kind) {
	out, kinds = make([][]byte, len(keys)), make([]Kind, len(keys))
	type pending struct {
		i     int
		lo    uint64
		ver   uint64
		known bool
		epoch uint64
		size  int // -1: unknown
	}
	var need []pending
	var slow []int
	now := c.now()
	for i, key := range keys {
		if len(key) == 0 {
			continue
		}
		lo, _ := hashKey(key)
		c.pro.Record(lo)
		sh := c.dir.shard(lo)
		sh.mu.RLock()
		v, p := c.planRead(nil, key, sh, now, true)
		if p.hot != nil {
			v = p.hot.val[:len(p.hot.val):len(p.hot.val)] // shared, never copied (T11)
		}
		switch p.act {
		case readMiss:
			c.count(policy.None, false)
		case readAdopt:
			need = append(need, pending{i: i, lo: lo, epoch: p.epoch, size: -1})
		case readServe:
			kinds[i] = p.kind
			if p.tier == policy.Hot && policy.Sample() {
				c.hot.touchSampled(key) // as Get's hot hits (ristretto sees one in SampleEvery)
			}
			if p.tier == policy.Warm && c.pro.Promote(lo, len(v), policy.Warm) == policy.Hot {
				c.promoteWarm(key, v, sh, p.e)
			}
			out[i] = nonNil(v) // never nil: nil is a miss
			c.count(p.tier, true)
		case readCold:
			need = append(need, pending{i: i, lo: lo, ver: p.ver, known: true, size: p.size})
		case readRetry:
			slow = append(slow, i) // moving between tiers: the single-key path retries
		}
		sh.mu.RUnlock()
	}
	for _, i := range slow {
		lo, _ := hashKey(keys[i])
		v, _, t, kind, ok := c.get(nil, keys[i], lo, false, false)
		if ok {
			out[i], kinds[i] = nonNil(v), kind
		}
		c.count(t, ok)
	}
	// A key the directory does not know whose cold delete is still queued
	// is a miss: cold may hold the deleted copy (coldDeleting, T4).
	kept := need[:0]
	for _, p := range need {
		if !p.known && c.coldDeleting(keys[p.i]) {
			c.count(policy.None, false)
			continue
		}
		kept = append(kept, p)
	}
	need = kept
	if len(need) == 0 {
		return out, kinds
	}
	var res []ColdItem
	if c.cold != nil {
		ck := make([][]byte, len(need))
		sizes := make([]int, len(need))
		for j, p := range need {
			ck[j], sizes[j] = keys[p.i], p.size
		}
		res = c.coldMany(ck, sizes)
	}
	for j, p := range need {
		key := keys[p.i]
		if res != nil {
			r := res[j]
			switch {
			case r.Err != nil:
				c.coldError("mget", r.Err)
				c.count(policy.None, false)
				continue
			case r.Found && p.known && r.Meta.Version == p.ver:
				out[p.i], kinds[p.i] = nonNil(r.Value), r.Meta.Kind
				c.promoteFromCold(key, r.Value, p.lo, p.ver)
				c.count(policy.Cold, true)
				continue
			case r.Found && !p.known:
				if r.Meta.Expiry == 0 || r.Meta.Expiry > now {
					adopted := false
					sh := c.dir.shard(p.lo)
					sh.mu.Lock()
					if sh.m[viewString(key)] == nil && sh.epoch == p.epoch {
						sh.adoptLocked(key, r.Meta, len(r.Value))
						c.st.adopted.Add(1)
						adopted = true
						out[p.i], kinds[p.i] = nonNil(r.Value), r.Meta.Kind
					}
					sh.mu.Unlock()
					if adopted {
						c.count(policy.Cold, true)
						continue
					}
				} else {
					c.count(policy.None, false)
					continue
				}
			case !r.Found && !p.known:
				c.count(policy.None, false)
				continue
			}
		}
		// Rare: the copy moved while we looked, or the directory changed.
		v, _, t, kind, ok := c.get(nil, key, p.lo, false, false)
		if ok {
			out[p.i], kinds[p.i] = nonNil(v), kind
		}
		c.count(t, ok)
	}
	return out, kinds
}

// Exists counts the keys that exist (a key named twice counts twice).
func (c *Cache) Exists(keys ...[]byte) int {
	if !c.enter() {
		return 0
	}
	defer c.exit()
	n := 0
	for _, key := range keys {
		if c.known(key) {
			n++
		}
	}
	return n
}

// known reports whether key exists, adopting it from a pre-existing cold
// store if needed.
func (c *Cache) known(key []byte) bool {
	if len(key) == 0 {
		return false
	}
	lo, _ := hashKey(key)
	sh := c.dir.shard(lo)
	sh.mu.RLock()
	e := sh.m[viewString(key)]
	live := e != nil && e.live(c.now())
	if e != nil && c.coldUnknown.Load() {
		e.recent.Store(true) // the caller acts on it soon: keep it (T15)
	}
	sh.mu.RUnlock()
	if e != nil || !c.coldUnknown.Load() {
		return live
	}
	_, _, _, _, ok := c.get(nil, key, lo, false, false)
	return ok
}

// lockEntry takes sh's lock (the write lock if write is set) and returns
// key's entry, or nil. When cold may hold keys the directory does not know
// (coldUnknown) and adopt is set, it first adopts key from cold (known); if
// a trim pass forgot the key again before the lock (T15), it unlocks and
// adopts it again, at most twice more: three forgets of one key in a row
// need three trim passes inside that window.
func (c *Cache) lockEntry(sh *shard, key []byte, write, adopt bool) *entry {
	for try := 0; ; try++ {
		known := adopt && c.coldUnknown.Load() && c.known(key)
		if known && c.knownHook != nil {
			c.knownHook(key)
		}
		if write {
			sh.mu.Lock()
		} else {
			sh.mu.RLock()
		}
		e := sh.m[viewString(key)]
		if e != nil || !known || try == 2 {
			return e
		}
		if write {
			sh.mu.Unlock()
		} else {
			sh.mu.RUnlock()
		}
	}
}

// TTL returns the remaining time to live (negative: no expiry) and whether
// the key exists.
func (c *Cache) TTL(key []byte) (ttl time.Duration, exists bool) {
	if !c.enter() {
		return 0, false
	}
	defer c.exit()
	if len(key) == 0 {
		return 0, false
	}
	lo, _ := hashKey(key)
	sh := c.dir.shard(lo)
	e := c.lockEntry(sh, key, false, true)
	defer sh.mu.RUnlock()
	now := c.now()
	if e == nil || !e.live(now) {
		return 0, false
	}
	if e.exp == 0 {
		return -1, true
	}
	return time.Duration(e.exp - now), true
}

// Where names the tier holding key's newest value: "hot", "warm", "cold",
// or "" when the key is absent (or its value was lost).
func (c *Cache) Where(key []byte) string {
	if !c.enter() {
		return ""
	}
	defer c.exit()
	if len(key) == 0 {
		return ""
	}
	lo, _ := hashKey(key)
	sh := c.dir.shard(lo)
	c.lockEntry(sh, key, false, true)
	_, p := c.planRead(nil, key, sh, c.now(), true)
	sh.mu.RUnlock()
	switch p.act {
	case readServe:
		return p.tier.String()
	case readCold:
		return "cold"
	case readRetry:
		// Moving: on its way to cold, or cold holds it and the write's
		// completion is not recorded yet.
		if c.cold != nil {
			_, m, found, err := c.cold.Get(context.Background(), nil, key, p.size)
			if err == nil && found && m.Version == p.ver {
				return "cold"
			}
		}
	}
	return ""
}

// coldError counts and logs a cold-tier failure: a read (get, mget) then
// answers a miss; a write, delete or invalidation (flush, delete,
// invalidate) is not done.
func (c *Cache) coldError(op string, err error) {
	c.st.coldErrors.Add(1)
	c.log.Warn("tier: cold tier error", zap.String("op", op), zap.Error(err))
}

// coldMany looks keys up in cold, MGetColdBatch keys per submission.
// Concurrent MGets look up at the same time: the emulated namespace hands
// out a submission's read slots all or nothing and never while the
// submission holds others (nvmekv/emu slots), so batches queue for slots
// but cannot deadlock.
func (c *Cache) coldMany(keys [][]byte, sizes []int) []ColdItem {
	var res []ColdItem
	for len(keys) > 0 {
		n := min(len(keys), c.o.MGetColdBatch)
		res = append(res, c.cold.GetMany(context.Background(), keys[:n], sizes[:n])...)
		c.st.mgetSubmissions.Add(1)
		keys, sizes = keys[n:], sizes[n:]
	}
	return res
}

// nonNil returns v, or an empty non-nil slice for an empty value: in MGet's
// result nil means a miss.
func nonNil(v []byte) []byte {
	if v == nil {
		return []byte{}
	}
	return v
}

package tier

import (
	"time"

	"context"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/policy"
)

// Get appends key's value to dst. ok is false on a miss. A cold-tier device
// error is counted and logged and reads as a miss (the cache keeps serving).
func (c *Cache) Get(dst, key []byte) ([]byte, bool, error) {
	v, _, ok, _, err := c.View(dst, key, nil)
	return v, ok, err
}

// View is Get for the server: when into (if not nil) gives a slice of the
// value's size, a value in a DRAM record is copied there, under the key's
// shard read lock, and filled is true (the server passes the reply
// buffer's room: one copy, from the record to the reply); into may
// return nil to decline. Otherwise the value is appended to dst. cold
// reports that the answer, hit or miss, took a read of the cold device: a
// caller with more reads lined up can send them together (MGetPrefix) and
// wait for the device once instead of once per key. A key of another kind
// than KindString answers ErrWrongKind (T23), and into is not called.
func (c *Cache) View(dst, key []byte, into func(n int) []byte) (value []byte, filled, ok, cold bool, err error) {
	return c.ViewBig(dst, key, into, nil)
}

// ViewBig is View where a value of more than 1 MiB read from the cold
// tier, when dst is empty and has no room for it, goes into big(n)[:0]
// (big lends a slice of at least n bytes; it may return nil to decline):
// the server lends a recycled buffer rather than have a new slice of the
// value's size allocated and cleared. The value returned is then in that
// slice; big may be called when nothing is returned in it.
func (c *Cache) ViewBig(dst, key []byte, into, big func(n int) []byte) (value []byte, filled, ok, cold bool, err error) {
	return c.ViewBigAt(dst, key, 0, into, big)
}

// ViewBigAt is ViewBig at the caller's time now (unix nanoseconds, from
// NowOf: the server's reading before the command), which saves a clock
// read; 0 reads the clock. A read that has to try again (a copy moving,
// or checked with the remote tier first) reads the clock then.
func (c *Cache) ViewBigAt(dst, key []byte, now int64, into, big func(n int) []byte) (value []byte, filled, ok, cold bool, err error) {
	v, kind, filled, ok, cold, err := c.view(dst, key, now, into, big)
	if ok && kind != KindString {
		return dst, false, false, cold, ErrWrongKind
	}
	return v, filled, ok, cold, err
}

// ViewAny is View for a value of any kind, which it returns beside it
// (appended to dst; shared is always false: the DRAM tiers' records are
// copied out).
func (c *Cache) ViewAny(dst, key []byte) (value []byte, kind Kind, shared, ok, cold bool, err error) {
	v, kind, _, ok, cold, err := c.view(dst, key, 0, nil, nil)
	return v, kind, false, ok, cold, err
}

func (c *Cache) view(dst, key []byte, now int64, into, big func(n int) []byte) (value []byte, kind Kind, filled, ok, cold bool, err error) {
	if len(key) == 0 {
		return dst, 0, false, false, false, ErrEmptyKey
	}
	if !c.enter() {
		return dst, 0, false, false, false, ErrClosed
	}
	lo, _ := hashKey(key)
	v, t, kind, filled, ok := c.getInto(dst, key, lo, now, true, into, big, c.rt != nil)
	c.count(key, t, ok)
	c.exit()
	return v, kind, filled, ok, t == policy.Cold, nil
}

// record counts the access for the promotion policy once per read (*rec
// says it is still due), before the policy decides on a promotion. A hot
// hit is not recorded: the promotion policy decides only for warm and
// cold hits (the LFU counts every DRAM hit).
func (c *Cache) record(rec *bool, lo uint64) {
	if !*rec {
		return
	}
	*rec = false
	c.pro.Record(lo)
}

// served does what follows a read served from memory (no lock held): the
// LFU counts a DRAM hit, and a warm hit the promotion policy deems
// frequent moves up to hot if the LFU counts it more often than the
// records hot demotes (T56).
func (c *Cache) served(p readPlan, lo uint64, sh *shard, n int) {
	if p.tier != policy.Hot && p.tier != policy.Warm {
		return
	}
	if p.tier == policy.Hot {
		c.memAccess(p.e)
		return
	}
	if c.memAccessOutranks(p.e) && c.pro.Promote(lo, n, policy.Warm) == policy.Hot {
		c.promote(p.e, sh, p.ver, n)
	}
}

// get reads key by executing planRead's decisions: it returns the value
// (appended to dst) and the tier it came from. rec says the access is to
// be recorded for the promotion policy.
func (c *Cache) get(dst, key []byte, lo uint64, rec bool) (v []byte, t policy.Tier, kind Kind, ok bool) {
	v, t, kind, _, ok = c.getInto(dst, key, lo, 0, rec, nil, nil, false)
	return v, t, kind, ok
}

// getInto is get with planRead's into: filled says the value went there;
// big is ViewBig's; now is the read's time for its first try (0: the
// clock's).
// With validate, a copy that may be stale is checked against the remote
// tier first (T42); the callers that decide on a key's entry validate it
// in lockEntry instead.
func (c *Cache) getInto(dst, key []byte, lo uint64, now int64, rec bool, into, big func(n int) []byte, validate bool) (v []byte, t policy.Tier, kind Kind, filled, ok bool) {
	sh := c.dir.shard(lo)
	for attempt := 0; attempt < 3; attempt++ {
		if now == 0 {
			now = c.now()
		}
		sh.mu.RLock()
		v, p := c.planRead(dst, key, lo, sh, now, into, validate)
		now = 0 // a retry reads the clock
		sh.mu.RUnlock()
		switch p.act {
		case readValidate:
			c.validate(key, lo, sh, p.ver)
			validate = false // served as it now is, checked or not
			attempt--
			continue
		case readServe:
			if p.tier != policy.Hot {
				c.record(&rec, lo)
			}
			n := len(v) - len(dst)
			if p.filled {
				n = p.size
			}
			c.served(p, lo, sh, n)
			return v, p.tier, p.kind, p.filled, true
		case readMiss:
			c.record(&rec, lo)
			return c.missLocal(dst, key, lo)
		case readAdopt:
			c.record(&rec, lo)
			if c.ks != nil && !c.ks.MayHold(key) || c.coldDeleting(key) {
				return c.missLocal(dst, key, lo) // no record of it in cold (T37), or its delete is queued (T4)
			}
			v, k, ok, retry := c.adopt(dst, key, lo, sh, p.epoch)
			if retry {
				continue
			}
			if !ok {
				return c.missLocal(v, key, lo)
			}
			if validate {
				dst = v[:len(dst)]
				attempt--
				continue // an earlier run's copy: checked against the remote first (T42)
			}
			return v, policy.Cold, k, false, ok
		case readCold:
			c.record(&rec, lo)
			if big != nil && len(dst) == 0 && p.size > joinStep && cap(dst) < p.size {
				if b := big(p.size); cap(b) >= p.size {
					dst = b[:0]
				}
			}
			v, m, found, err := c.cold.Get(context.Background(), dst, key, p.size)
			if err != nil {
				c.coldError("get", err)
				return dst, policy.None, 0, false, false
			}
			if found && m.Version == p.ver {
				c.admitFromCold(key, v[len(dst):], lo, p.ver)
				return v, policy.Cold, p.kind, false, true
			}
			if found && c.pendingVersion(sh, key, m.Version) {
				return v, policy.Cold, kindOfFlags(m.Flags), false, true // durable, being published (T28)
			}
			dst = v[:len(dst)]
			if !found && c.changedSince(sh, key, p.ver) {
				continue // a change replaced the record as it was read (a chunked overwrite's cleanup): read again
			}
			if !found {
				c.lostVersion(key, p.ver, true) // the store reclaimed it
				return dst, policy.None, 0, false, false
			}
		case readRetry:
			c.record(&rec, lo)
		}
	}
	c.st.phantoms.Add(1)
	return dst, policy.None, 0, false, false
}

// missLocal is a read's answer once the local tiers missed key: the remote
// tier's (T40), or a miss.
func (c *Cache) missLocal(dst, key []byte, lo uint64) ([]byte, policy.Tier, Kind, bool, bool) {
	if c.rt != nil {
		if v, k, ok := c.remoteRead(dst, key, lo); ok {
			return v, policy.Remote, k, false, true
		}
	}
	return dst, policy.None, 0, false, false
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
func (c *Cache) adopt(dst, key []byte, lo uint64, sh *shard, epoch uint64) (v []byte, kind Kind, ok, retry bool) {
	v, m, found, err := c.cold.Get(context.Background(), dst, key, -1)
	if err != nil {
		c.coldError("get", err)
		return dst, 0, false, false
	}
	if !found || backend.Expired(m.Expiry, c.now()) {
		return v[:len(dst)], 0, false, false
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.m[viewString(key)] != nil || sh.adoptEpoch(lo) != epoch {
		return v[:len(dst)], 0, false, true
	}
	if c.flushedCopy(m.Version) { // checked under the lock: a Flush sets the floor before it bumps epoch
		c.dropFlushedLocked(sh, key, lo, epoch)
		return v[:len(dst)], 0, false, false
	}
	sh.adoptLocked(key, m, len(v)-len(dst), c.ten.of(key))
	c.st.adopted.Add(1)
	return v, kindOfFlags(m.Flags), true, false
}

// MGet returns one value per key (nil for a miss). The cold lookups of the
// whole batch go to the device as one GetMany submission. The values are
// the caller's; those memory served share one allocation.
func (c *Cache) MGet(keys [][]byte) ([][]byte, error) {
	return c.MGetIn(nil, keys)
}

// MGetIn is MGet copying the values memory serves into ch's chunks (nil:
// fresh memory, the caller's): those values are valid until ch.Release,
// the slice of them until ch's next MGet.
func (c *Cache) MGetIn(ch *Chunks, keys [][]byte) ([][]byte, error) {
	if !c.enter() {
		return nil, ErrClosed
	}
	defer c.exit()
	return c.strings(c.mget(ch, keys)), nil
}

// strings answers nil for each value of another kind than a string, as
// MGET does (T23).
func (c *Cache) strings(vals [][]byte, kinds []Kind) [][]byte {
	for i, k := range kinds {
		if k != KindString {
			vals[i] = nil
		}
	}
	return vals
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
	return c.strings(c.mget(nil, keys)), len(keys), nil
}

// MGetPrefixAny is MGetPrefix for values of any kind: it also returns each
// value's kind (for a miss, KindString).
func (c *Cache) MGetPrefixAny(keys [][]byte, maxBytes int64) ([][]byte, []Kind, int, error) {
	return c.MGetPrefixAnyIn(nil, keys, maxBytes)
}

// MGetPrefixAnyIn is MGetPrefixAny copying into ch's chunks, as MGetIn:
// the values are valid until ch.Release, the slices of them and of their
// kinds until ch's next MGet.
func (c *Cache) MGetPrefixAnyIn(ch *Chunks, keys [][]byte, maxBytes int64) ([][]byte, []Kind, int, error) {
	if !c.enter() {
		return nil, nil, 0, ErrClosed
	}
	defer c.exit()
	keys = keys[:c.prefix(keys, maxBytes)]
	vals, kinds := c.mget(ch, keys)
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
			size = e.valueSize()
		}
		sh.mu.RUnlock()
		if total += size; i > 0 && total > maxBytes {
			return i
		}
	}
	return len(keys)
}

// mgetPending is a key mget reads from cold.
type mgetPending struct {
	i     int
	lo    uint64
	ver   uint64
	known bool
	epoch uint64
	size  int // -1: unknown
}

// mget reads keys, of any kind: one value (nil for a miss) and one kind
// per key. The values memory serves are copied into chunks (ch's, if not
// nil), each value a slice of one.
func (c *Cache) mget(ch *Chunks, keys [][]byte) (out [][]byte, kinds []Kind) {
	out, kinds, need := ch.arrays(len(keys))
	defer func() { ch.keep(need) }()
	type pending = mgetPending
	var slow []int
	type span struct{ i, from, to int }
	var spans []span
	var buf []byte
	// A DRAM record is copied straight into a chunk of mgetChunk bytes
	// (or its own size, if larger), and so is a cold read of a known size.
	fill := chunkFill{ch: ch}
	var filled []byte
	into := func(n int) []byte {
		filled = fill.take(n)
		return filled
	}
	now := c.now()
	// Keys the local tiers miss are read in the remote tier together at
	// the end (T40); without one they are misses at once.
	var remote, revalidate []int
	defer func() {
		for _, i := range revalidate {
			lo, _ := hashKey(keys[i])
			v, t, kind, _, ok := c.getInto(nil, keys[i], lo, 0, false, nil, nil, true)
			if ok {
				out[i], kinds[i] = nonNil(v), kind
			}
			c.count(keys[i], t, ok)
		}
	}()
	miss := func(i int) {
		if c.rt != nil {
			remote = append(remote, i)
			return
		}
		c.count(keys[i], policy.None, false)
	}
	defer func() { c.remoteMany(keys, remote, out, kinds) }()
	for i, key := range keys {
		if len(key) == 0 {
			continue
		}
		lo, _ := hashKey(key)
		sh := c.dir.shard(lo)
		sh.mu.RLock()
		from := len(buf)
		var p readPlan
		buf, p = c.planRead(buf, key, lo, sh, now, into, c.rt != nil)
		sh.mu.RUnlock()
		if p.act != readServe || p.tier != policy.Hot {
			c.pro.Record(lo) // a hot hit has nothing for the promotion policy to decide
		}
		switch p.act {
		case readMiss:
			miss(i)
		case readAdopt:
			need = append(need, pending{i: i, lo: lo, epoch: p.epoch, size: -1})
		case readServe:
			kinds[i] = p.kind
			n := len(buf) - from
			if p.filled {
				out[i], n = nonNil(filled), len(filled)
			} else {
				spans = append(spans, span{i, from, len(buf)})
			}
			c.served(p, lo, sh, n)
			c.count(key, p.tier, true)
		case readCold:
			need = append(need, pending{i: i, lo: lo, ver: p.ver, known: true, size: p.size})
		case readRetry, readValidate:
			slow = append(slow, i) // moving between tiers, or to check: the single-key path does it
		}
	}
	for _, sp := range spans {
		out[sp.i] = nonNil(buf[sp.from:sp.to:sp.to]) // never nil: nil is a miss
	}
	for _, i := range slow {
		lo, _ := hashKey(keys[i])
		v, t, kind, _, ok := c.getInto(nil, keys[i], lo, 0, false, nil, nil, c.rt != nil)
		if ok {
			out[i], kinds[i] = nonNil(v), kind
		}
		c.count(keys[i], t, ok)
	}
	// A key the directory does not know whose cold delete is still queued
	// is a miss: cold may hold the deleted copy (coldDeleting, T4).
	kept := need[:0]
	for _, p := range need {
		if !p.known && c.coldDeleting(keys[p.i]) {
			miss(p.i)
			continue
		}
		kept = append(kept, p)
	}
	need = kept
	if len(need) == 0 {
		return out, kinds
	}
	var res []backend.Result
	if c.cold != nil {
		ck := make([][]byte, len(need))
		sizes := make([]int, len(need))
		dsts := make([][]byte, len(need))
		for j, p := range need {
			ck[j], sizes[j] = keys[p.i], p.size
			if p.size >= 0 {
				dsts[j] = fill.take(p.size)[:0]
			}
		}
		res = c.coldMany(ck, sizes, dsts)
	}
	for j, p := range need {
		key := keys[p.i]
		if res != nil {
			r := res[j]
			switch {
			case r.Err != nil:
				c.coldError("mget", r.Err)
				miss(p.i)
				continue
			case r.Found && p.known && r.Meta.Version == p.ver:
				out[p.i], kinds[p.i] = nonNil(r.Value), kindOfFlags(r.Meta.Flags)
				c.admitFromCold(key, r.Value, p.lo, p.ver)
				c.count(key, policy.Cold, true)
				continue
			case r.Found && !p.known:
				if !backend.Expired(r.Meta.Expiry, now) {
					adopted, flushed := false, false
					sh := c.dir.shard(p.lo)
					sh.mu.Lock()
					switch absent := sh.m[viewString(key)] == nil && sh.adoptEpoch(p.lo) == p.epoch; {
					case absent && c.flushedCopy(r.Meta.Version): // T14
						c.dropFlushedLocked(sh, key, p.lo, p.epoch)
						flushed = true
					case absent:
						sh.adoptLocked(key, r.Meta, len(r.Value), c.ten.of(key))
						c.st.adopted.Add(1)
						adopted = true
						out[p.i], kinds[p.i] = nonNil(r.Value), kindOfFlags(r.Meta.Flags)
					}
					sh.mu.Unlock()
					if adopted && c.rt != nil {
						out[p.i], kinds[p.i] = nil, 0
						revalidate = append(revalidate, p.i) // checked against the remote first (T42)
						continue
					}
					if adopted {
						c.count(key, policy.Cold, true)
						continue
					}
					if flushed {
						miss(p.i)
						continue
					}
				} else {
					miss(p.i)
					continue
				}
			case !r.Found && !p.known:
				miss(p.i)
				continue
			}
		}
		// Rare: the copy moved while we looked, or the directory changed.
		v, t, kind, ok := c.get(nil, key, p.lo, false)
		if ok {
			out[p.i], kinds[p.i] = nonNil(v), kind
		}
		c.count(key, t, ok)
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
	var absent [][]byte
	for _, key := range keys {
		if c.known(key) {
			n++
		} else if c.rt != nil && len(key) > 0 {
			absent = append(absent, key)
		}
	}
	if len(absent) > 0 {
		for _, has := range c.remoteHas(absent) {
			if has {
				n++
			}
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
		e.mark(markRecent) // the caller acts on it soon: keep it (T15)
	}
	sh.mu.RUnlock()
	if e != nil || !c.coldUnknown.Load() {
		return live
	}
	_, _, _, ok := c.get(nil, key, lo, false)
	return ok
}

// lockEntry takes sh's lock (the write lock if write is set) and returns
// key's entry, or nil. When cold may hold keys the directory does not know
// (coldUnknown) and adopt is set, it first adopts key from cold (known); if
// a trim pass forgot the key again before the lock (T15), it unlocks and
// adopts it again, at most twice more: three forgets of one key in a row
// need three trim passes inside that window.
func (c *Cache) lockEntry(sh *shard, key []byte, write, adopt bool) *entry {
	if adopt && c.rt != nil {
		c.ensureRemote(key) // a key only the remote holds (T40)
		c.ensureValid(key)  // a local copy that may be stale (T42)
	}
	return c.lockEntryLocal(sh, key, write, adopt)
}

// lockEntryLocal is lockEntry without the remote tier. A key the
// directory has is returned at once, under the lock; only one it lacks is
// looked up in cold (known), without the lock, and the lock taken again.
func (c *Cache) lockEntryLocal(sh *shard, key []byte, write, adopt bool) *entry {
	for try := 0; ; try++ {
		if write {
			sh.mu.Lock()
		} else {
			sh.mu.RLock()
		}
		e := sh.m[viewString(key)]
		if e != nil || !adopt || !c.coldUnknown.Load() || try == 3 {
			return e
		}
		if write {
			sh.mu.Unlock()
		} else {
			sh.mu.RUnlock()
		}
		known := c.known(key)
		if known && c.knownHook != nil {
			c.knownHook(key)
		}
		if !known {
			if write {
				sh.mu.Lock()
			} else {
				sh.mu.RLock()
			}
			return sh.m[viewString(key)]
		}
	}
}

// TTL returns the remaining time to live (negative: no expiry) and whether
// the key exists.
func (c *Cache) TTL(key []byte) (ttl time.Duration, exists bool) {
	exists = c.withLive(key, func(e *entry, now int64) {
		ttl = -1
		if e.exp != 0 {
			ttl = backend.ExpiryUntil(e.exp, now)
		}
	})
	return ttl, exists
}

// TTLMillis is key's time to live as Redis counts it (PTTL): its
// expiry's millisecond (expiryMillis) less the clock's, -1 without an
// expiry; false when the key is absent (T43).
func (c *Cache) TTLMillis(key []byte) (ms int64, exists bool) {
	exists = c.withLive(key, func(e *entry, now int64) {
		ms = -1
		if e.exp != 0 {
			ms = max(expiryMillis(e.exp)-now/int64(time.Millisecond), 0)
		}
	})
	return ms, exists
}

// withLive runs f with key's entry, under its shard's read lock, and the
// time it is live at (a key only cold holds is adopted first); false, f
// not run, when the key is absent or expired or the cache closed.
func (c *Cache) withLive(key []byte, f func(e *entry, now int64)) bool {
	if len(key) == 0 || !c.enter() {
		return false
	}
	defer c.exit()
	lo, _ := hashKey(key)
	sh := c.dir.shard(lo)
	e := c.lockEntry(sh, key, false, true)
	defer sh.mu.RUnlock()
	now := c.now()
	if e == nil || !e.live(now) {
		return false
	}
	f(e, now)
	return true
}

// Where names the tier holding key's newest value: "hot", "warm", "cold",
// "remote" (only the remote tier holds it), or "" when the key is absent
// (or its value was lost).
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
	c.lockEntryLocal(sh, key, false, true)
	_, p := c.planRead(nil, key, lo, sh, c.now(), nil, false)
	sh.mu.RUnlock()
	switch p.act {
	case readMiss, readAdopt:
		if c.rt != nil && c.remoteHas([][]byte{key})[0] {
			return "remote"
		}
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
func (c *Cache) coldMany(keys [][]byte, sizes []int, dsts [][]byte) []backend.Result {
	var res []backend.Result
	for len(keys) > 0 {
		n := min(len(keys), c.o.MGetColdBatch)
		res = append(res, c.cold.GetMany(context.Background(), keys[:n], sizes[:n], dsts[:n])...)
		c.st.mgetSubmissions.Add(1)
		keys, sizes, dsts = keys[n:], sizes[n:], dsts[n:]
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

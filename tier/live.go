package tier

import (
	"fmt"

	"github.com/tiercache/tiercache/flusher"
	"github.com/tiercache/tiercache/policy"
	"github.com/tiercache/tiercache/tier/dram"
)

// Live is an aggregate value (a hash, list, set or sorted set to the layer
// above) that the DRAM tiers keep as a structure changing in place, on the
// Go heap, instead of as a record: a write touches what it changes (T44).
// The cache never interprets it. It asks for its serialized form — the
// record of its kind, which every other tier and every copy holds — only
// when the value leaves the structure: evicted or demoted, flushed, drained,
// sent to the remote tier, or read by a caller that wants bytes (ViewAny,
// RENAME). A Live is not safe for concurrent use: the cache calls its
// methods, and the layer above changes it, under the key's shard lock
// (readers the read lock, a change the write lock).
type Live interface {
	// HeapBytes is the Go heap the structure takes, measured: the sizes of
	// its allocations as the runtime rounds them. It is what the DRAM
	// tiers charge for it (T45).
	HeapBytes() int64
	// RecordSize is the size of the serialized form; AppendRecord appends
	// exactly that many bytes.
	RecordSize() int
	AppendRecord(dst []byte) []byte
}

// LiveKind is a kind of value the layer above keeps live: its Kind, and
// how its structures are made.
type LiveKind interface {
	Kind() Kind
	// New returns an empty structure.
	New() Live
	// Load makes a structure from its record, which it does not keep; a
	// record that does not decode is an error.
	Load(rec []byte) (Live, error)
}

// EditResult is what an Edit's function did to the structure.
type EditResult uint8

const (
	// Unchanged: nothing changed (the key keeps its version).
	Unchanged EditResult = iota
	// Changed: the structure changed: the key gets a new version.
	Changed
	// Emptied: the structure is empty: the key is removed.
	Emptied
)

// liveSlot is one live structure in its shard's table: an entry reaches
// it by a handle (the index, in entry.loc with entry.where memLive), so
// the directory entry holds no Go pointer to it.
type liveSlot struct {
	v     Live
	e     *entry // the entry whose DRAM copy it is (demotion walks the table)
	bytes int64  // the heap bytes charged for it
}

// liveShard is the table of a directory shard's live structures, changed
// under that shard's write lock.
type liveShard struct {
	slots []liveSlot
	free  []uint32
}

// shardIndex is the index of e's shard.
func shardIndex(e *entry) int { return shardOfTag(tagOfHash(e.node.Hash())) }

// liveSlotOf is e's slot (e.where is memLive; e's shard lock held).
func (c *Cache) liveSlotOf(e *entry) *liveSlot {
	return &c.lt[shardIndex(e)].slots[e.loc-1]
}

// liveOf is e's live structure (e.where is memLive; e's shard lock held).
func (c *Cache) liveOf(e *entry) Live { return c.liveSlotOf(e).v }

// installLiveLocked makes v the DRAM copy of e's version (e's shard write
// lock held): any record e had is released, v takes a slot of the shard's
// table, its heap is charged to hot and e weighs it in the LFU.
func (c *Cache) installLiveLocked(e *entry, v Live) {
	c.releaseLocked(e)
	ls := &c.lt[shardIndex(e)]
	var i uint32
	if n := len(ls.free); n > 0 {
		i = ls.free[n-1]
		ls.free = ls.free[:n-1]
	} else {
		ls.slots = append(ls.slots, liveSlot{})
		i = uint32(len(ls.slots) - 1)
	}
	hb := v.HeapBytes()
	ls.slots[i] = liveSlot{v: v, e: e, bytes: hb}
	e.loc, e.where, e.recSize = dram.Loc(i)+1, memLive, 0
	e.setValueSize(int64(v.RecordSize()))
	e.unmark(markTouched)
	m := c.mem
	m.mu.Lock()
	m.items[memLive]++
	m.bytes[memLive] += hb
	c.liveHeld.Store(m.bytes[memLive])
	m.admitLocked(e, int(hb))
	m.mu.Unlock()
}

// rechargeLocked charges e's live structure again after a change (e's
// shard write lock held): its heap bytes, its LFU weight, e's size.
func (c *Cache) rechargeLocked(e *entry) {
	s := c.liveSlotOf(e)
	e.setValueSize(int64(s.v.RecordSize()))
	hb := s.v.HeapBytes()
	m := c.mem
	m.mu.Lock()
	m.bytes[memLive] += hb - s.bytes
	c.liveHeld.Store(m.bytes[memLive])
	s.bytes = hb
	m.admitLocked(e, int(hb))
	m.mu.Unlock()
}

// dropLiveLocked frees e's live structure's slot and its charge (e's
// shard write lock held); e's copy fields are the caller's to clear.
func (c *Cache) dropLiveLocked(e *entry) {
	ls := &c.lt[shardIndex(e)]
	i := uint32(e.loc - 1)
	hb := ls.slots[i].bytes
	ls.slots[i] = liveSlot{}
	ls.free = append(ls.free, i)
	m := c.mem
	m.mu.Lock()
	m.items[memLive]--
	m.bytes[memLive] -= hb
	c.liveHeld.Store(m.bytes[memLive])
	m.mu.Unlock()
}

// liveRecord appends the serialized form of e's live structure to dst
// (e's shard lock held).
func (c *Cache) liveRecord(dst []byte, e *entry) []byte { return c.liveOf(e).AppendRecord(dst) }

// Edit changes key's aggregate of kind lk in place, in one step (T44): f
// is given the structure and answers what it did. A key that is absent
// (or expired) gets a new empty structure when create is true, and is
// left absent (f not called, exists false) otherwise; a key of another
// kind answers ErrWrongKind. Changed gives the key a new version keeping
// its expiry (a new key has none), Emptied removes it, Unchanged leaves
// it as it was. An error from f is returned as it is, and f must have
// changed nothing then (it checks before it changes). The structure is
// valid only during the call, and f must not call the cache.
//
// In the DRAM tiers f runs once, under the key's shard write lock, on the
// structure the key keeps there (made from its record if it had none:
// from hot, warm, transit or, read first, cold). In writethrough mode the
// key's record is loaded into a structure, f changes it, and its record
// is stored as Update stores a value, durably first (T28): f may then run
// more than once, each time on a fresh structure, and must only note
// what it answers.
func (c *Cache) Edit(key []byte, lk LiveKind, create bool, f func(v Live) (EditResult, error)) (exists bool, err error) {
	return c.EditAt(key, lk, create, c.now(), f)
}

// EditAt is Edit at the time now (unix nanoseconds): the cache's Now,
// read by the caller for the same command (it decides the key's expiry
// as Edit's own reading would; one clock read fewer).
func (c *Cache) EditAt(key []byte, lk LiveKind, create bool, now int64, f func(v Live) (EditResult, error)) (exists bool, err error) {
	switch {
	case len(key) == 0:
		return false, ErrEmptyKey
	case c.writeThrough():
		return c.editRecord(key, lk, create, f)
	}
	k := lk.Kind()
	defer c.remoteAwait(key)
	if !c.enter() {
		return false, ErrClosed
	}
	defer c.exit()
	lo, _ := hashKey(key)
	sh := c.dir.shard(lo)
	tenant := c.ten.of(key)
	c.liveBalance(tenant)
	var read []byte // the value of version readVer, read from cold without the lock
	var readVer uint64
	for try := 0; try < updateTries; try++ {
		e := c.lockEntry(sh, key, true, true)
		var v Live
		t := policy.Hot
		switch {
		case e == nil || !e.live(now):
			if !create {
				sh.mu.Unlock()
				c.count(key, policy.None, false)
				return false, nil
			}
			t = policy.None
		case e.kind != k:
			sh.mu.Unlock()
			return true, ErrWrongKind
		case e.where == memLive:
			v = c.liveOf(e)
		default:
			var rec []byte
			var tt policy.Tier
			var ok bool
			if e.loc != 0 {
				rec, tt, ok = c.mem.bytesOf(e), e.where.tier(), true // Load copies what it keeps
			} else {
				rec, tt, ok = c.tr.get(nil, key, e.ver)
			}
			if !ok && read != nil && readVer == e.ver {
				rec, tt, ok = read, policy.Cold, true
			}
			if !ok {
				// Only cold holds it: read it there without the lock,
				// then look again.
				ver := e.ver
				sh.mu.Unlock()
				val, _, kind, found := c.get(nil, key, lo, try == 0)
				if found && kind == k {
					read, readVer = val, ver
				}
				continue
			}
			if v, err = lk.Load(rec); err != nil {
				sh.mu.Unlock()
				return true, err
			}
			c.installLiveLocked(e, v)
			t = tt
		}
		exists = t != policy.None
		if !exists {
			v = lk.New()
		}
		r, err := f(v)
		c.count(key, t, exists)
		switch {
		case err != nil:
		case !exists && r == Changed:
			e = c.newLiveLocked(sh, e, key, v, k)
		case r == Changed:
			c.changedLiveLocked(sh, e, key, k)
		case r == Emptied && exists:
			c.remoteDelLocked(key)
			c.purgeLocked(sh, key, e)
		case exists:
			c.memAccess(e)
		}
		sh.mu.Unlock()
		c.processVictims()
		c.liveBalance(tenant)
		return exists, err
	}
	return exists, ErrKeyBusy
}

// newLiveLocked stores v, a structure f filled for key that was absent
// (e nil, or an entry not live), as key's first version (sh's write lock
// held), and returns its entry.
func (c *Cache) newLiveLocked(sh *shard, e *entry, key []byte, v Live, k Kind) *entry {
	fresh := e == nil
	if fresh {
		lo, _ := hashKey(key)
		e, _ = newEntry(key, lo, c.ten.of(key))
	}
	c.versionLocked(sh, e, fresh, key, 0, int64(v.RecordSize()), k)
	c.installLiveLocked(e, v)
	c.remotePutLiveLocked(key)
	return e
}

// changedLiveLocked gives e, whose live structure changed, a new version
// keeping its expiry (sh's write lock held): the copies of the old one
// outside DRAM are invalidated (a cold delete queued, T3).
func (c *Cache) changedLiveLocked(sh *shard, e *entry, key []byte, k Kind) {
	s := c.liveSlotOf(e)
	c.versionLocked(sh, e, false, key, e.exp, int64(s.v.RecordSize()), k)
	c.rechargeLocked(e)
	c.remotePutLiveLocked(key)
}

// editRecord is Edit on the key's record (writethrough, T28: each change
// durable before it is published): one Update that loads the record into
// a fresh structure for f and stores the changed structure's record.
func (c *Cache) editRecord(key []byte, lk LiveKind, create bool, f func(v Live) (EditResult, error)) (exists bool, err error) {
	k := lk.Kind()
	err = c.Update(key, func(cur Current) (Change, error) {
		exists = cur.Exists
		var v Live
		switch {
		case !cur.Exists && !create:
			return Change{Op: Keep}, nil
		case !cur.Exists:
			v = lk.New()
		case cur.Kind != k:
			return Change{}, ErrWrongKind
		default:
			var err error
			if v, err = lk.Load(cur.Value); err != nil {
				return Change{}, err
			}
		}
		r, err := f(v)
		switch {
		case err != nil:
			return Change{}, err
		case r == Changed:
			return Change{Op: Store, Value: v.AppendRecord(nil), Kind: k}, nil
		case r == Emptied && cur.Exists:
			return Change{Op: Remove}, nil
		}
		return Change{Op: Keep}, nil
	})
	return exists, err
}

// Read calls f with key's aggregate of kind lk, for a command that only
// reads it: the structure the DRAM tiers keep, under the key's shard read
// lock, or a structure made from its record where another tier holds it
// (a hot record is made live first; a warm one when the promotion policy
// deems it frequent). exists is false (f not called) when the key is
// absent; a key of another kind answers ErrWrongKind. An error from f is
// returned as it is. The structure is valid only during the call, f must
// not change it, and must not call the cache.
func (c *Cache) Read(key []byte, lk LiveKind, f func(v Live) error) (exists bool, err error) {
	return c.ReadAt(key, lk, c.now(), f)
}

// ReadAt is Read at the time now (unix nanoseconds), as EditAt is Edit.
func (c *Cache) ReadAt(key []byte, lk LiveKind, now int64, f func(v Live) error) (exists bool, err error) {
	if len(key) == 0 {
		return false, ErrEmptyKey
	}
	k := lk.Kind()
	if !c.enter() {
		return false, ErrClosed
	}
	defer c.exit()
	lo, _ := hashKey(key)
	sh := c.dir.shard(lo)
	for try := 0; try < 2; try++ {
		sh.mu.RLock()
		e := sh.m[viewString(key)]
		if e == nil || !e.live(now) || c.rt != nil && c.rt.suspect(e) {
			sh.mu.RUnlock()
			break
		}
		if e.kind != k {
			sh.mu.RUnlock()
			c.count(key, policy.Hot, true)
			return true, ErrWrongKind
		}
		if e.where == memLive {
			e.mark(markTouched)
			err := f(c.liveOf(e))
			sh.mu.RUnlock()
			c.memAccess(e)
			c.count(key, policy.Hot, true)
			return true, err
		}
		where, n := e.where, int(e.valueSize())
		sh.mu.RUnlock()
		if where == memNone || c.writeThrough() || where == memWarm && c.pro.Promote(lo, n, policy.Warm) != policy.Hot {
			break
		}
		if !c.makeLive(key, lo, sh, lk) {
			break
		}
	}
	v, t, kind, ok := c.get(nil, key, lo, true)
	c.count(key, t, ok)
	switch {
	case !ok:
		return false, nil
	case kind != k:
		return true, ErrWrongKind
	}
	lv, err := lk.Load(v)
	if err != nil {
		return true, err
	}
	return true, f(lv)
}

// makeLive makes key's DRAM record (of kind lk) a live structure, if it
// still has one (no lock held), and reports whether it did.
func (c *Cache) makeLive(key []byte, lo uint64, sh *shard, lk LiveKind) bool {
	c.liveBalance(c.ten.of(key))
	sh.mu.Lock()
	e := sh.m[viewString(key)]
	ok := e != nil && e.live(c.now()) && e.kind == lk.Kind() && (e.where == memHot || e.where == memWarm)
	if ok {
		v, err := lk.Load(c.mem.bytesOf(e))
		if ok = err == nil; ok {
			c.installLiveLocked(e, v)
			c.st.promotions.Add(1)
		}
	}
	sh.mu.Unlock()
	c.processVictims()
	return ok
}

// evictLiveLocked sends e's live structure out of DRAM (sh's write lock
// held; e is not in the LFU): nowhere if cold holds this version already
// (T18); to cold, its record built now and held in transit until the
// write completed (T5), if cold takes writes; else the key is lost (T7).
func (c *Cache) evictLiveLocked(sh *shard, e *entry) {
	if c.fl != nil && c.coldHolds(e, e.ver) {
		c.releaseLocked(e)
		return
	}
	if !c.coldTakesWrites() {
		c.releaseLocked(e)
		c.loseLocked(sh, viewBytes(e.key), e)
		return
	}
	k, v := c.liveCopy(e)
	c.releaseLocked(e)
	e.coldMayHold()
	c.tr.add(k, v, e.ver, e.exp, policy.Cold)
	c.st.coldWrites.Add(1)
	c.st.flushed.Add(1)
	if err := c.fl.Enqueue(&flusher.Item{Key: k, Value: v, Version: e.ver, Expiry: e.exp, Flags: coldFlags(e.kind)}); err != nil {
		c.tr.remove(k, e.ver)
		c.coldError("evict", fmt.Errorf("tier: write %d bytes to cold: %w", len(v), err))
		c.loseLocked(sh, k, e)
	}
}

// liveCopy is e's key and the record of its live structure, in one
// allocation of their own (a flusher item's copy, as joinKV makes).
func (c *Cache) liveCopy(e *entry) (k, v []byte) {
	s := c.liveSlotOf(e)
	kv := make([]byte, len(e.key), len(e.key)+s.v.RecordSize())
	copy(kv, e.key)
	kv = s.v.AppendRecord(kv)
	n := len(kv)
	return kv[:len(e.key):len(e.key)], kv[len(e.key):n:n]
}

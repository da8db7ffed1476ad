package tier

import (
	"context"
	"fmt"
	"slices"

	"github.com/tiercache/tiercache/flusher"
)

// In writethrough mode a change is made durable in cold before it is
// published (T28): a Set's value is written and synced, a delete's cold
// delete is run and synced, and only then does the directory take the new
// version (or drop the key) and the reply go out. Until then readers see
// the key as it was, and if cold fails, nothing is published: an error
// reply has changed nothing, in this run or after a restart.
//
// Each change in flight holds the key's newest pending version in its
// shard's pend map (taken with the shard's write lock, when the change is
// enqueued, so pending versions grow in enqueue order, which is the order
// the flusher writes them, F3). A change publishes only if its version is
// still the key's newest pending one: a later change of the key overrides
// it, in memory as in cold. While a change is pending, only its own put
// reaches cold (flushCurrent), and the expiry sweep and lost-copy checks
// leave the key alone, so nothing else rewrites or deletes the key's cold
// copy behind it.

// writeThrough reports whether changes are made durable before they are
// published.
func (c *Cache) writeThrough() bool {
	return c.o.Durability == DurabilityWriteThrough && c.fl != nil
}

// pendOp is a writethrough change in flight: its Sync flusher item, the
// version it holds in its shard's pend map, and what publishing it does
// once it is durable (nil: remove the key from memory).
type pendOp struct {
	sh      *shard
	key     []byte
	ver     uint64
	it      *flusher.Item
	publish func()
}

// beginLocked enqueues it as a Sync item and records ver as key's newest
// pending version (sh.mu held for writing).
func (c *Cache) beginLocked(sh *shard, key []byte, ver uint64, it *flusher.Item) (*pendOp, error) {
	if err := c.fl.Begin(it); err != nil {
		return nil, err
	}
	if sh.pend == nil {
		sh.pend = make(map[string]uint64)
	}
	sh.pend[string(key)] = ver
	return &pendOp{sh: sh, key: it.Key, ver: ver, it: it}, nil
}

// pendingLocked reports whether a writethrough change of key is in flight
// (sh.mu held).
func (sh *shard) pendingLocked(key []byte) bool {
	_, ok := sh.pend[viewString(key)]
	return ok
}

// await waits for op's cold write or delete, then takes sh's write lock
// and reports whether op is still its key's newest pending change (and
// so publishes); either way op's pend record is gone. The caller unlocks.
func (op *pendOp) await() (latest bool, err error) {
	err = op.it.Await(context.Background())
	op.sh.mu.Lock()
	return op.latestLocked(), err
}

// latestLocked reports whether op is still its key's newest pending
// change, and removes its pend record (op.sh.mu held for writing).
func (op *pendOp) latestLocked() bool {
	if op.isLatestLocked() {
		delete(op.sh.pend, viewString(op.key))
		return true
	}
	return false
}

// isLatestLocked reports whether op is still its key's newest pending
// change (op.sh.mu held).
func (op *pendOp) isLatestLocked() bool {
	v, ok := op.sh.pend[viewString(op.key)]
	return ok && v == op.ver
}

// publishLocked makes a durable change visible (op.sh.mu held for
// writing): a put's new version, or a delete's removal from memory.
func (c *Cache) publishLocked(op *pendOp) {
	if op.publish != nil {
		op.publish()
		return
	}
	if e := op.sh.m[viewString(op.key)]; e != nil && e.state == stateLive {
		e.coldForgotten() // cold holds nothing of it now: the entry goes at once
		c.purgeLocked(op.sh, op.key, e)
	}
}

// beginPurgeLocked deletes key (entry e, or nil for a key only cold holds)
// as a client asked (DEL, GETDEL, an expiry in the past). Without
// writethrough, or when cold cannot hold the key, it purges at once and
// returns nil; otherwise it starts the durable cold delete and returns the
// change to finish with finishPurge after unlocking sh. sh.mu is held for
// writing.
func (c *Cache) beginPurgeLocked(sh *shard, key []byte, e *entry) (*pendOp, error) {
	if !c.writeThrough() || e != nil && e.cold == coldNone && !e.hdr && !sh.pendingLocked(key) {
		if e != nil {
			c.purgeLocked(sh, key, e)
		}
		return nil, nil
	}
	ver := c.nextVersion()
	k := append([]byte(nil), key...)
	op, err := c.beginLocked(sh, k, ver, &flusher.Item{Key: k, Delete: true, Version: ver})
	if err != nil {
		c.coldError("delete", err)
		return nil, fmt.Errorf("tier: delete a key of %d bytes in cold: %w", len(key), err)
	}
	c.st.coldDeletes.Add(1)
	return op, nil
}

// finishPurge waits for a durable change begun by beginPurgeLocked or
// beginSetLocked, then publishes it, unless a later change of the key is
// pending (it decides). An error means the cold write or delete failed
// and the key was left as it was.
func (c *Cache) finishPurge(op *pendOp) error {
	if op == nil {
		return nil
	}
	latest, err := op.await()
	defer c.processVictims() // a publication placed a DRAM record (runs after the unlock)
	defer op.sh.mu.Unlock()
	if err != nil {
		if op.publish != nil {
			return fmt.Errorf("tier: write %d bytes to cold (nothing was stored): %w", len(op.it.Value), err)
		}
		return fmt.Errorf("tier: delete a key of %d bytes in cold (the key is unchanged): %w", len(op.key), err)
	}
	if latest {
		c.publishLocked(op)
	}
	return nil
}

// setDurable is set's writethrough path once its conditions held (sh.mu
// held for writing, released on return): the value is written to cold and
// synced, and only then placed in memory and published at its version. A
// failed cold write publishes nothing.
func (c *Cache) setDurable(sh *shard, key, k, v []byte, alloc int, exp int64, kind Kind) error {
	op, err := c.beginSetLocked(sh, key, k, v, alloc, exp, kind)
	sh.mu.Unlock()
	if err != nil {
		return err
	}
	return c.finishPurge(op)
}

// beginSetLocked starts the durable write of v (k and v from joinKV, alloc
// its bytes) as key's new version with expiry exp and kind, and returns the
// change to finish with finishPurge after unlocking sh (sh.mu held for
// writing). Until it is published readers see the key as it was.
func (c *Cache) beginSetLocked(sh *shard, key, k, v []byte, alloc int, exp int64, kind Kind) (*pendOp, error) {
	ver := c.nextVersion()
	op, err := c.beginLocked(sh, k, ver, &flusher.Item{Key: k, Value: v, Version: ver, Expiry: exp, Flags: coldFlags(kind)})
	if err != nil {
		return nil, fmt.Errorf("tier: write %d bytes to cold: %w", len(v), err)
	}
	c.st.coldWrites.Add(1)
	op.publish = func() { c.placeDurableLocked(sh, key, k, v, alloc, ver, exp, kind) }
	return op, nil
}

// placeDurableLocked publishes version ver of key, durable in cold (sh.mu
// held for writing): the directory takes it and a memory tier a copy.
func (c *Cache) placeDurableLocked(sh *shard, key, k, v []byte, alloc int, ver uint64, exp int64, kind Kind) {
	c.remotePutLocked(key, v, exp, kind)
	e := sh.m[viewString(key)]
	if e != nil && e.state == stateLive && e.ver >= ver {
		return // a reader adopted this very version from cold meanwhile
	}
	if e == nil {
		var ks string
		lo, _ := hashKey(k)
		e, ks = newEntry(k, lo, c.ten.of(k))
		sh.m[ks] = e
	} else {
		c.tr.forget(key) // the cold put replaced the old record
	}
	old := e.exp
	if e.write(ver, exp, int64(len(v)), kind) {
		sh.addLive(e, 1)
	}
	sh.fileExpiry(e, old)
	c.markValidLocked(e)
	e.cold = coldHolds // written with exp: no moved expiry
	sh.setHeader(e, true)
	c.placeOrDropLocked(e, v) // without room, cold alone holds it
}

// pendingVersion reports whether key's newest pending writethrough change
// is the write of version ver: a reader that found ver in cold before the
// write was published may serve it (it is durable and about to be
// published).
func (c *Cache) pendingVersion(sh *shard, key []byte, ver uint64) bool {
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	v, ok := sh.pend[viewString(key)]
	return ok && v == ver
}

// wtLock serializes the writethrough changes of keys (T30): it takes each
// key's Update stripe lock, in stripe order and each stripe once, and
// returns the function that releases them; without writethrough it takes
// nothing. A change decides against the published version (a SET's NX,
// an INCR's value, an EXPIRE's condition), so while another change of the
// key is in flight, unpublished until its cold sync, a second one would
// decide against a state about to be replaced and be lost with it, or be
// acknowledged while the change that superseded it fails. Holding the
// stripe from the decision to the publication rules both out. Update
// holds its key's stripe already and does not call this.
func (c *Cache) wtLock(keys ...[]byte) func() {
	if !c.writeThrough() {
		return func() {}
	}
	var one [1]uint64
	stripes := one[:0]
	for _, k := range keys {
		lo, _ := hashKey(k)
		stripes = append(stripes, lo%updateStripes)
	}
	slices.Sort(stripes)
	stripes = slices.Compact(stripes)
	for _, s := range stripes {
		c.upd.mu[s].Lock()
	}
	return func() {
		for _, s := range stripes {
			c.upd.mu[s].Unlock()
		}
	}
}

// changedSince reports whether key has a writethrough change in flight or
// no longer has version ver: a cold read of ver that found nothing may
// have raced that change, and must look again rather than answer a miss.
func (c *Cache) changedSince(sh *shard, key []byte, ver uint64) bool {
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	if sh.pendingLocked(key) {
		return true
	}
	e := sh.m[viewString(key)]
	return e == nil || e.ver != ver
}

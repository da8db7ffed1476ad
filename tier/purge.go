package tier

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/tiercache/tiercache/flusher"
)

// purger is the background purge of the entries Flush took out of the
// directory (T14): each shard's old maps (shard.old) are walked outside
// every lock, and their entries purged purgeBatch at a time under the
// shard's write lock, released between batches.
type purger struct {
	mu sync.Mutex
	// running: a purge goroutine runs; done closes when it ends. gen
	// counts the Flushes that handed it maps: a pass that began at gen g
	// purged every map of those Flushes.
	running bool
	done    chan struct{}
	gen     uint64
	floor   uint64 // the newest Flush's floor, recorded in cold when the purge ends
	// pending counts the stale entries not purged yet (Memory counts
	// their heap, Stats.PurgePending reports them).
	pending atomic.Int64
	// recMu serializes the floor's records in cold; recorded is the
	// highest one recorded (or read at Open).
	recMu    sync.Mutex
	recorded uint64
}

// purgeBatch is how many entries the purge handles per hold of a shard's
// lock.
const purgeBatch = 256

// startPurge hands the purge n more stale entries of a Flush with floor
// (the maps are in shard.old already) and starts it unless it runs.
func (c *Cache) startPurge(n int64, floor uint64) {
	p := &c.pg
	p.pending.Add(n)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gen++
	p.floor = floor
	if p.running {
		return
	}
	p.running, p.done = true, make(chan struct{})
	c.wg.Add(1)
	go c.purge()
}

// WaitPurge waits until no background purge of a Flush runs (FLUSHALL
// SYNC), or ctx ends.
func (c *Cache) WaitPurge(ctx context.Context) error {
	p := &c.pg
	p.mu.Lock()
	running, done := p.running, p.done
	p.mu.Unlock()
	if !running {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// purge runs passes over every shard until a pass began after the last
// Flush, then records that Flush's floor in cold: a restart then reads as
// absent the cold copies of keys set while that Flush recorded its first
// floor, which its purge deleted (T14).
func (c *Cache) purge() {
	defer c.wg.Done()
	if c.purgeHook != nil {
		c.purgeHook()
	}
	p := &c.pg
	var batch []*entry
	for {
		p.mu.Lock()
		gen := p.gen
		p.mu.Unlock()
		for i := range c.dir.shards {
			batch = c.purgeShard(&c.dir.shards[i], batch)
		}
		p.mu.Lock()
		if p.gen != gen {
			p.mu.Unlock()
			continue
		}
		floor := p.floor
		p.mu.Unlock()
		if c.cold != nil {
			if err := c.recordFloor(floor); err != nil {
				c.coldError("flush", err)
			}
		}
		p.mu.Lock()
		if p.gen == gen {
			p.running = false
			close(p.done)
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
	}
}

// purgeShard purges the entries of sh's old maps; batch is scratch space,
// returned for the next shard.
func (c *Cache) purgeShard(sh *shard, batch []*entry) []*entry {
	sh.mu.Lock()
	olds := sh.old
	sh.old = nil
	sh.mu.Unlock()
	// Only the purge reads an old map once it left sh.m: it is walked
	// without the lock, and its entries are changed under it.
	for _, old := range olds {
		for _, e := range old {
			if batch = append(batch, e); len(batch) == purgeBatch {
				batch = c.purgeEntries(sh, batch)
			}
		}
		batch = c.purgeEntries(sh, batch)
	}
	return batch
}

// purgeEntries purges the stale entries es of sh under its write lock,
// first waiting (a while at most) for the flusher to hold less than a
// quarter of its bound, so that the purge's cold deletes never make
// writers wait (T25). It returns es emptied.
func (c *Cache) purgeEntries(sh *shard, es []*entry) []*entry {
	if len(es) == 0 {
		return es
	}
	if c.fl != nil && c.fl.Held() > c.flushHigh/2 {
		ctx, cancel := context.WithTimeout(context.Background(), throttleWait)
		c.fl.WaitRoom(ctx, c.flushHigh/4)
		cancel()
	}
	sh.mu.Lock()
	for _, e := range es {
		c.purgeStaleLocked(sh, e)
	}
	sh.mu.Unlock()
	c.pg.pending.Add(-int64(len(es)))
	c.st.purged.Add(uint64(len(es)))
	clear(es)
	return es[:0]
}

// purgeStaleLocked purges e, an entry a Flush took out of sh's map (sh's
// write lock held): its DRAM record goes (a record being flushed becomes
// the flusher item's), it leaves the LFU, and the cold delete of whatever
// cold may hold of its key is queued, unless sh's map names the key again:
// a write after the Flush queues its own put after any earlier item of the
// key (flusher F3), which a delete queued now would overtake. Such a key's
// flushed copy is replaced by its put, or reads as absent (T14).
func (c *Cache) purgeStaleLocked(sh *shard, e *entry) {
	if e.state == stateGone {
		return
	}
	c.releaseLocked(e)
	c.memRemove(e)
	if e.state == stateLive && e.cold != coldNone && c.fl != nil && sh.m[e.key] == nil {
		c.queueColdDelete(viewBytes(e.key), "flush")
	}
	e.cold = coldNone
	e.leave()
}

// queueColdDelete queues the cold delete of key's copy (a version no
// entry names: no tombstone waits for it).
func (c *Cache) queueColdDelete(key []byte, op string) {
	it := &flusher.Item{Key: append([]byte(nil), key...), Delete: true, Version: c.nextVersion()}
	if err := c.fl.Enqueue(it); err != nil {
		c.coldError(op, err)
	}
	c.st.coldDeletes.Add(1)
}

// dropFlushedLocked queues the cold delete of a flushed copy of key that a
// reader found (T14), if sh's map still does not name the key and nothing
// left it since the reader planned (epoch) and no writethrough change of
// it is in flight (sh's write lock held): any write of the key after this
// queues its put behind the delete (F3).
func (c *Cache) dropFlushedLocked(sh *shard, key []byte, epoch uint64) {
	if c.fl == nil || sh.m[viewString(key)] != nil || sh.epoch != epoch || sh.pendingLocked(key) {
		return
	}
	c.queueColdDelete(key, "flush")
}

package tier

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/tiercache/tiercache/flusher"
)

// purger is the background purge of the entries Flush took out of the
// directory (T36): the old maps of each Flush (flushed) are walked outside
// every lock, and their entries purged purgeBatch at a time under their
// shard's write lock, released between batches.
type purger struct {
	mu sync.Mutex
	// queue: the Flushes whose maps wait for the purge; running: a purge
	// goroutine runs, and done closes when it ends.
	queue   []*flushed
	running bool
	done    chan struct{}
	// pending counts the stale entries not purged yet (Memory counts
	// their heap, Stats.PurgePending reports them).
	pending atomic.Int64
	// flushes counts the Flushes whose maps are not purged yet, from
	// before the swap: while it is not 0 no key is forgotten (T37), so a
	// key the purge does not find in the directory was not written since
	// the Flush (purgeStaleLocked).
	flushes atomic.Int64
	// recMu serializes the floor's records in cold; recorded is the
	// highest one recorded (or read at Open).
	recMu    sync.Mutex
	recorded uint64
}

// flushed is what one Flush took out of the directory: each shard's old
// map (nil if it was empty), their n entries, and the Flush's floor.
type flushed struct {
	old   [shardCount]map[string]*entry
	fresh [shardCount]map[string]*entry // the maps that replace them, made before the swap
	n     int64
	floor uint64
}

// purgeBatch is how many entries the purge handles per hold of a shard's
// lock.
const purgeBatch = 256

// startPurge hands the purge fl's maps and starts it unless it runs.
func (c *Cache) startPurge(fl *flushed) {
	p := &c.pg
	p.pending.Add(fl.n)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.queue = append(p.queue, fl)
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

// purge purges the queued Flushes' maps until none is left, then records
// the last one's floor in cold: a restart then reads as absent the cold
// copies of keys set while that Flush recorded its first floor, which its
// purge deleted (T14).
func (c *Cache) purge() {
	defer c.wg.Done()
	if c.purgeHook != nil {
		c.purgeHook()
	}
	p := &c.pg
	var batch []*entry
	var floor uint64
	for {
		p.mu.Lock()
		q := p.queue
		p.queue = nil
		if len(q) == 0 && floor != 0 && c.cold != nil {
			p.mu.Unlock()
			if err := c.recordFloor(floor); err != nil {
				c.coldError("flush", err)
			}
			floor = 0
			continue // a Flush may have queued more meanwhile
		}
		if len(q) == 0 {
			p.running = false
			close(p.done)
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		for _, fl := range q {
			for i := range fl.old {
				batch = c.purgeMap(&c.dir.shards[i], fl.old[i], batch)
				fl.old[i] = nil
			}
			p.flushes.Add(-1)
			floor = fl.floor
		}
	}
}

// purgeMap purges the entries of old, a map a Flush took out of sh; batch
// is scratch space, returned for the next map. Only the purge reads an old
// map: it is walked without the lock, and its entries changed under it.
func (c *Cache) purgeMap(sh *shard, old map[string]*entry, batch []*entry) []*entry {
	for _, e := range old {
		if batch = append(batch, e); len(batch) == purgeBatch {
			batch = c.purgeEntries(sh, batch)
		}
	}
	return c.purgeEntries(sh, batch)
}

// purgeEntries purges the stale entries es of sh under its write lock,
// first pacing itself on the flusher (purgePace). It returns es emptied.
func (c *Cache) purgeEntries(sh *shard, es []*entry) []*entry {
	if len(es) == 0 {
		return es
	}
	c.purgePace()
	sh.mu.Lock()
	for _, e := range es {
		c.purgeStaleLocked(sh, e)
	}
	sh.mu.Unlock()
	c.pg.pending.Add(-int64(len(es)))
	c.st.purged.Add(uint64(len(es)))
	clear(es)
	// The purge never blocks: without a yield, a caller that wakes while
	// it and the collector hold every P waits for the scheduler to preempt
	// it (up to 10 ms, issue 21's figure at a million keys).
	runtime.Gosched()
	return es[:0]
}

// purgePace holds the purge back while the flusher's queue is over half
// its items or holds over half what makes writers wait, until both are
// under a quarter: the purge's cold deletes, which overflow the queue
// instead of waiting (flusher F2), then never make writers wait (T25) nor
// push their evictions out of the queue. A device that keeps it waiting
// throttleWait stalls: like writers (throttle), the purge then stops
// waiting for throttleOffFor.
func (c *Cache) purgePace() {
	if c.fl == nil || c.now() < c.throttleOff.Load() {
		return
	}
	items := c.fl.Options().QueueItems
	if c.fl.Stats().Queue <= int64(items/2) && c.fl.Held() <= c.flushHigh/2 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), throttleWait)
	defer cancel()
	if !c.fl.WaitQueue(ctx, items/4, c.flushHigh/4) {
		c.throttleOff.Store(c.now() + int64(throttleOffFor))
	}
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
	e.leave() // in no index of sh's: Flush dropped the one it was in
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
func (c *Cache) dropFlushedLocked(sh *shard, key []byte, lo, epoch uint64) {
	if c.fl == nil || sh.m[viewString(key)] != nil || sh.adoptEpoch(lo) != epoch || sh.pendingLocked(key) {
		return
	}
	c.queueColdDelete(key, "flush")
}

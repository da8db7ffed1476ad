package tier

import (
	"cmp"
	"context"
	"fmt"
	"time"
)

// Flush removes every key from every tier (FLUSHALL). Other calls wait for
// it only while it swaps the directory's maps, O(shards) whatever the
// number of keys (T14):
//
//   - with a cold tier, it first records in the cold store a floor below
//     every version written after it (Cold.SetFloor, one synced device
//     write that the caller alone waits for);
//   - then, holding every call off, it takes the floor it keeps in memory
//     and gives each shard an empty map: a call after it sees no key;
//   - and hands the old maps to the background purge (purge.go), which
//     frees their DRAM records and their LFU state and queues the cold
//     deletes of their keys; WaitPurge waits for it.
//
// A cold record at or below the floor reads as absent wherever cold is
// read for a key the directory does not name, in this run and after a
// restart, so an earlier run's keys are not read back, listed or cleared
// inline. If the floor cannot be recorded (a cold error, a read-only
// store), Flush returns the error and changes nothing when cold may hold
// keys the directory does not name (an earlier run's, or forgotten, T15);
// otherwise it flushes all the same (every key has an entry, whose cold
// copy the purge deletes), and the error is counted and logged.
//
// In writethrough mode Flush blocks every call until it is done
// (flushBlocking): every key's cold delete is durable before it returns;
// if some fail, Flush returns an error and those keys remain, in memory
// and in cold (the others are gone), now and after a restart.
//
// With a remote tier Flush first clears it for every sidecar (T41).
func (c *Cache) Flush() error {
	if c.rt != nil {
		c.clearRemote()
	}
	return c.flush()
}

// flush is Flush of the local tiers alone (also what a remote resync
// does, T42).
func (c *Cache) flush() error {
	c.flushMu.Lock()
	defer c.flushMu.Unlock()
	if !c.enter() {
		return ErrClosed
	}
	c.exit() // Close waits for flushMu: the cache stays open until Flush returns
	if c.writeThrough() {
		return c.flushBlocking()
	}
	if c.cold != nil {
		if err := c.recordFloor(c.nextVersion()); err != nil {
			c.coldError("flush", err)
			if c.coldUnknown.Load() {
				return fmt.Errorf("tier: flush: %w (keys of an earlier run would come back); nothing was flushed", err)
			}
		}
	}
	// Nothing is allocated while calls are held off: an allocation may
	// have to help the collector mark first, for as long as it is behind.
	fl := &flushed{}
	for i := range fl.fresh {
		fl.fresh[i] = make(map[string]*entry)
	}
	c.holdOff()
	c.pg.flushes.Add(1) // no key is forgotten until its purge ended (T37)
	fl.floor = c.nextVersion()
	c.floor.Store(fl.floor) // before the swap: every entry of the old maps is stale (floor.go)
	for i := range c.dir.shards {
		sh := &c.dir.shards[i]
		sh.mu.Lock()
		if len(sh.m) > 0 {
			fl.n += int64(len(sh.m))
			fl.old[i], sh.m = sh.m, fl.fresh[i]
			sh.resetLive()
			// The old entries' slots stay in the old index (T55).
			sh.exps = nil
			sh.epoch++ // removals: a reader that planned an adoption plans again (T4)
			sh.swaps++
		}
		sh.mu.Unlock()
	}
	c.tr.clear()
	cleared := c.clearColdHeld()
	c.life.Unlock()
	fl.fresh = [shardCount]map[string]*entry{}
	if cleared {
		// The floor went with the records: record it again (a failure
		// leaves nothing to hide, only versions to restart above).
		if err := c.recordFloor(fl.floor); err != nil {
			c.coldError("flush", err)
		}
	}
	c.startPurge(fl)
	return nil
}

// clearColdHeld clears a cold store that can (clearCold) while Flush holds
// calls off, once the maps are swapped: first the cold writes taken before
// the swap complete (at most clearWait), so that none of a flushed key
// lands after the clear, and a put taken after the swap is skipped as not
// current (flushCurrent: the new maps do not name the old versions). So
// Keys is 0 when Flush returns (T37). If the wait times out (a stalled
// device), the store is cleared anyway, and a flushed copy that lands
// later counts until the purge's delete of it completes.
func (c *Cache) clearColdHeld() bool {
	if c.ks == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), clearWait)
	defer cancel()
	c.fl.WaitTaken(ctx)
	return c.clearCold()
}

// clearWait bounds how long Flush, holding calls off, waits for the cold
// writes in flight before it clears the store.
const clearWait = time.Second

// yielder is a context a Flush cancels before it holds calls off.
type yielder struct {
	ctx    context.Context
	cancel context.CancelFunc
}

func newYielder() *yielder {
	ctx, cancel := context.WithCancel(context.Background())
	return &yielder{ctx, cancel}
}

// holdOff takes c.life for writing. Calls in flight that wait for the
// flusher (throttle, waitForFlusher: up to throttleWait, a second;
// admitWrite, awaitRoom, awaitStraight: up to Flusher.Wait) stop
// waiting first, and calls that start meanwhile do not wait, so that
// taking it costs no more than the calls themselves; their waits resume
// once it is held.
func (c *Cache) holdOff() {
	next := newYielder()
	c.yield.Load().cancel()
	c.life.Lock()
	c.yield.Store(next)
}

// recordFloor records floor in the cold store unless one as high is
// recorded already (a purge that ends records its flush's floor, which a
// later Flush may have passed).
func (c *Cache) recordFloor(floor uint64) error {
	p := &c.pg
	p.recMu.Lock()
	defer p.recMu.Unlock()
	if floor <= p.recorded {
		return nil
	}
	if c.floors == nil {
		return nil
	}
	if err := c.floors.SetFloor(context.Background(), floor); err != nil {
		return fmt.Errorf("record the flush in the cold store: %w", err)
	}
	p.recorded = floor
	return nil
}

// flushBlocking is Flush in writethrough mode, every call held off while
// it runs: each key's cold delete durable first (flushDurable), then every
// entry purged, and when cold may hold keys the directory does not name,
// a floor recorded durably above them; if that fails, Flush says so and
// such keys stay readable.
func (c *Cache) flushBlocking() error {
	c.holdOff()
	defer c.life.Unlock()
	if err := c.flushDurable(); err != nil {
		return err
	}
	for i := range c.dir.shards {
		sh := &c.dir.shards[i]
		sh.mu.Lock()
		for k, e := range sh.m {
			if e.state == stateLive {
				c.purgeLocked(sh, []byte(k), e)
			}
		}
		sh.mu.Unlock()
	}
	c.tr.clear()
	if c.coldUnknown.Load() {
		// An earlier run's keys (or forgotten ones, T15) are hidden by a
		// floor, recorded and synced before Flush returns, as in cache
		// mode: deleting them one by one needs their device keys, and a
		// List of an emulated store reads every region that holds a live
		// inline record (logstore E8), once per 3,000 keys.
		cleared := c.clearCold()
		floor := c.nextVersion()
		if err := c.recordFloor(floor); err != nil && !cleared {
			return fmt.Errorf("tier: flush: %w (keys of an earlier run stay readable)", err)
		}
		c.floor.Store(floor)
	}
	return nil
}

// clearCold drops every record of a cold store that can (ColdKeyspace's
// Clear) and reports whether it did: the keys only cold holds, an
// earlier run's and forgotten ones, no longer count in Keys nor are
// walked by Scan (T37). The recorded floor went with them (it is a
// record too): Flush records its floor after this. Cold writes still in
// flight of the flushed keys may land after it; the floor hides them
// and the purge's deletes take them. If it fails, the floor still hides
// the old records (T14), but Keys counts them until they are deleted or
// reclaimed: logged and counted.
func (c *Cache) clearCold() bool {
	if c.ks == nil {
		return false
	}
	p := &c.pg
	p.recMu.Lock()
	defer p.recMu.Unlock()
	if err := c.ks.Clear(context.Background()); err != nil {
		c.coldError("flush", err)
		return false
	}
	p.recorded = 0
	return true
}

// flushDurable is Flush's writethrough part (c.life held for writing, so
// no other call is in flight): every live key's cold delete is run and
// synced (sent together), and a key leaves memory once its delete is
// durable. An error says how many keys remain.
func (c *Cache) flushDurable() error {
	if c.coldReadOnly.Load() {
		return ErrColdReadOnly
	}
	var ops []*pendOp
	pe := &PartialError{Op: "FLUSHALL"}
	for i := range c.dir.shards {
		sh := &c.dir.shards[i]
		sh.mu.Lock()
		for k, e := range sh.m {
			if e.state != stateLive {
				continue
			}
			op, err := c.beginPurgeLocked(sh, []byte(k), e)
			switch {
			case err != nil:
				pe.Failed++
				pe.Err = cmp.Or(pe.Err, err)
			case op != nil:
				ops = append(ops, op)
			default:
				pe.Done++
			}
		}
		sh.mu.Unlock()
	}
	return c.finishAll(ops, pe)
}

// stale reports whether e left the directory with a Flush (its version is
// at or below the floor) and waits for the background purge; the shard
// lock is held. Entries in the directory's maps are never stale.
func (c *Cache) stale(e *entry) bool { return e.ver <= c.floor.Load() }

// flushedCopy reports whether a cold record of version ver was flushed
// (T14): it reads as absent.
func (c *Cache) flushedCopy(ver uint64) bool { return ver <= c.floor.Load() }

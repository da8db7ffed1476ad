package tier

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/flusher"
	"github.com/tiercache/tiercache/policy"
)

// Cache is the three-tier cache. It is safe for concurrent use.
type Cache struct {
	upd *updateLocks // Update's per-key-stripe locks
	// onRemoval is told of keys leaving without a caller (hooks.go, T46).
	onRemoval atomic.Pointer[func(key []byte, why Removal)]
	// sweepHeld, when set and true, holds the background expiry sweep
	// (HoldSweep, T62); heldSweeps counts the sweeps it held.
	sweepHeld  atomic.Pointer[func() bool]
	heldSweeps atomic.Int64
	// flushHigh is the flusher's holding above which writers wait
	// (throttle); throttleOff (unix ns) is when they wait again after a
	// device that stalled.
	flushHigh   int64
	throttleOff atomic.Int64
	// shed: the flusher drops copies when full (flusher.Shed), and writers
	// wait after their write, at most throttleWait (throttle); else they
	// wait before it (admitWrite, T25).
	shed bool
	o    Options
	log  *zap.Logger
	dir  *directory
	mem  *mem // the DRAM tiers: hot and warm logs and their LFU
	tr   *transit
	// lt is each directory shard's table of live structures (live.go),
	// under that shard's lock.
	lt *[shardCount]liveShard
	// liveHeld is the heap bytes of the live structures (mem.bytes[memLive],
	// read without mem.mu); liveMu serializes liveBalance, and liveHand is
	// the shard its demotion looks at next (live_mem.go).
	liveHeld     atomic.Int64
	liveWithheld atomic.Int64 // hot's withheld segments (read without mem.mu)
	liveMu       sync.Mutex
	liveHand     int
	cold         backend.Store  // nil when disabled
	rt           *remoteTier    // the remote tier; nil when none (remote.go)
	floors       backend.Floors // cold's flush floor record; nil when cold keeps none
	// ks is cold's keyspace when it can count and walk its user keys (the
	// emulated store): Keys and Scan take cold-only keys from it (T37).
	ks backend.Keyspace
	// forgetCold: ks is set and MaxKeys is 0, so the directory forgets a
	// key once only cold holds it (T37): as its evicted copy's write
	// completes, else by a trim pass.
	forgetCold bool
	trimSlack  int64 // maxKeys: trimSlack, a test seam
	// over caches overBound's answer; boundChecks counts its calls.
	over        atomic.Bool
	boundChecks atomic.Uint64
	fl          *flusher.Flusher
	pro         *policy.Promotion
	ten         *tenants // the key prefixes that select a key's tenant, and each tenant's counters

	// coldUnknown: a key missing from the directory may still be in cold —
	// the store held data when opened (an earlier run's keys), or the
	// directory forgot cold-only keys to stay within MaxKeys (T15). Set
	// before the first key is forgotten, cleared only by Flush.
	coldUnknown atomic.Bool
	verSeq      atomic.Uint64
	// floor is the newest Flush's version floor (floor.go, T14): entries
	// and cold records at or below it were flushed. Read at Open from the
	// cold store, raised only by Flush.
	floor atomic.Uint64
	// pg is the background purge of the entries Flush took out of the
	// directory (purge.go).
	pg purger
	// coldReadOnly: the cold store reported a write error (it takes no more
	// writes until reopened); keys the LFU evicts are then lost.
	coldReadOnly atomic.Bool

	// life guards Close against in-flight operations: ops hold it shared.
	life   sync.RWMutex
	closed bool
	// yield ends the waits for the flusher of the calls in flight
	// (waitFlusher) when a Flush is about to hold calls off (holdOff).
	yield atomic.Pointer[yielder]
	// flushMu serializes Flush with itself and with Close, which takes it
	// first: a Flush records its floor in cold before it takes life, and
	// must not record it for a cache that then refuses the flush.
	flushMu sync.Mutex

	// sweepMu serializes sweeps (the background goroutine's and Close's
	// drain): a sweep lets a shard's lock go between batches, and another
	// sweep at an earlier time would take the entries it found due and
	// file them again for the next sweep (T55).
	sweepMu sync.Mutex

	lostMu sync.Mutex
	lostq  []lostKey
	kick   chan struct{}
	stop   chan struct{}
	wg     sync.WaitGroup
	// trimNext is the shard the next directory trim starts at (background
	// goroutine only).
	trimNext int

	st counters

	// knownHook, when set (tests only, before the first call), runs
	// between an adoption by known and the shard lock that follows it: the
	// window in which a trim pass may forget the key again (T15).
	knownHook func(key []byte)
	// purgeHook, when set (tests only, before the first Flush), runs in
	// the background purge before it purges anything: a test holds the
	// purge there to see what the cache does while one runs.
	purgeHook func()
}

type lostKey struct {
	key []byte
	ver uint64
}

// Open builds the tiers and starts the background goroutines.
func Open(opts Options) (*Cache, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	ten := newTenants(opts.Tenants, opts.HotBytes+opts.WarmBytes)
	c := &Cache{upd: new(updateLocks), o: opts, log: opts.Logger, dir: newDirectory(len(ten.names)), tr: newTransit(), ten: ten,
		lt:   new([shardCount]liveShard),
		kick: make(chan struct{}, 1), stop: make(chan struct{})}
	c.dir.setClock(c.now)
	c.verSeq.Store(uint64(time.Now().UnixNano()))
	c.yield.Store(newYielder())
	var err error
	if c.pro, err = policy.NewPromotion(opts.Promotion); err != nil {
		return nil, err
	}
	fail := func(err error) (*Cache, error) {
		if c.cold != nil {
			_ = c.cold.Close()
		}
		if c.mem != nil {
			_ = c.mem.closeLogs()
		}
		return nil, err
	}
	if opts.OpenCold != nil {
		cold, err := opts.OpenCold(backend.Params{MaxValue: opts.MaxValue, Batch: opts.MGetColdBatch,
			Strict: opts.Durability == DurabilityWriteThrough, WarmNode: opts.WarmNode(), Tenants: opts.backendTenants(), Logger: opts.Logger})
		if err != nil { // cold may be a typed nil: not kept
			return fail(fmt.Errorf("tier: open cold tier: %w", err))
		}
		c.cold = cold
	}
	if c.cold != nil && opts.Durability == DurabilityWriteThrough && !c.cold.Stats().Strict {
		// Writethrough promises that an acknowledged write survives: a
		// store that drops live records to make room cannot keep it (T29).
		return fail(fmt.Errorf("%w: writethrough needs a cold store that never drops a live record (%s is not strict)",
			ErrInvalidOptions, c.cold.Stats().Backend))
	}
	if c.cold != nil {
		// Versions stay above the floor of the last Flush recorded in the
		// store, whatever the clock says now (T14).
		var floor uint64
		if f, ok := c.cold.(backend.Floors); ok {
			c.floors = f
			if floor, err = f.Floor(context.Background()); err != nil {
				return fail(fmt.Errorf("tier: open cold tier: %w", err))
			}
		}
		c.floor.Store(floor)
		c.pg.recorded = floor
		if c.verSeq.Load() < floor {
			c.verSeq.Store(floor)
		}
		c.coldUnknown.Store(c.cold.Stats().PreExisting)
		c.trimSlack = trimSlack
		if c.ks = coldKeyspace(c.cold); c.ks != nil && opts.MaxKeys == 0 {
			c.forgetCold = true
			c.coldUnknown.Store(true) // keys are forgotten from the start
		}
		c.noteColdWritable()
		fo := opts.Flusher
		fo.Store = c.cold
		fo.Current = c.flushCurrent
		fo.OnDone = c.flushDone
		fo.OnDrop = c.flushDropped
		fo.OnRelease = releaseWrite
		if fo.Weights = opts.flushWeights(); fo.Weights != nil {
			fo.ClassOf = c.ten.of
		}
		if opts.Flash.BytesPerSec > 0 || opts.Flash.RejectFirst {
			fl, err := policy.NewFlash(opts.Flash)
			if err != nil {
				return fail(err)
			}
			fo.Admit = fl
			fo.Hash = func(k []byte) uint64 { lo, _ := hashKey(k); return lo }
		}
		if c.fl, err = flusher.New(fo); err != nil {
			return fail(err)
		}
		c.flushHigh = c.fl.Options().QueueBytes / 2
		c.shed = c.fl.Options().Overload == flusher.Shed
	}
	hot, warm, err := c.o.openLogs()
	if err == nil {
		if c.mem, err = newMem(hot, warm, c.ten, opts.HotBytes+opts.WarmBytes); err != nil {
			hot.Close()
			if warm != nil {
				warm.Close()
			}
		}
	}
	if err != nil {
		if c.fl != nil {
			_ = c.fl.Close()
		}
		return fail(fmt.Errorf("tier: open the DRAM tiers: %w", err))
	}
	if opts.OpenRemote != nil {
		pre := c.cold != nil && c.cold.Stats().PreExisting
		if err := c.openRemote(pre); err != nil {
			_ = c.mem.closeLogs()
			if c.fl != nil {
				_ = c.fl.Close()
			}
			return fail(fmt.Errorf("tier: open the remote tier: %w", err))
		}
	}
	c.wg.Add(1)
	go c.background()
	c.log.Info("tier: cache open", zap.Int64("hot_bytes", opts.HotBytes), zap.Int64("warm_bytes", opts.WarmBytes),
		zap.Int64("dram_capacity", c.mem.capacity()), zap.Int("tenants", len(opts.Tenants)),
		zap.Bool("cold", c.cold != nil), zap.Bool("cold_preexisting", c.cold != nil && c.cold.Stats().PreExisting),
		zap.Bool("cold_keys_forgotten", c.forgetCold), zap.String("durability", string(opts.Durability)),
		zap.Bool("remote", c.rt != nil))
	return c, nil
}

// enter starts an operation; the returned func ends it. It fails after Close.
func (c *Cache) enter() bool {
	c.life.RLock()
	if c.closed {
		c.life.RUnlock()
		return false
	}
	return true
}

func (c *Cache) exit() { c.life.RUnlock() }

func (c *Cache) now() int64 { return c.o.Clock() }

func (c *Cache) nextVersion() uint64 { return c.verSeq.Add(1) }

// Close stops the cache: in drain mode it first writes every hot and warm
// value to cold; in every mode it waits for the flusher to finish what it
// holds (and for its callbacks) before closing hot, warm and cold.
// Idempotent.
func (c *Cache) Close() error {
	c.flushMu.Lock()
	c.life.Lock()
	if c.closed {
		c.life.Unlock()
		c.flushMu.Unlock()
		return nil
	}
	c.closed = true
	c.life.Unlock()
	c.flushMu.Unlock()

	var errs []error
	// The remote tier first: its goroutine drops invalidated keys' local
	// copies while the tiers are open; its queue sends what is pending.
	errs = append(errs, c.closeRemote())
	if c.o.Durability == DurabilityDrain && c.fl != nil {
		if err := c.drainToCold(); err != nil {
			errs = append(errs, err)
		}
	}
	// The logs stay mapped until nothing can call them any more: the
	// background goroutine's lost-copy checks and the flusher's completion
	// callbacks release records (T9). A background purge of a Flush runs
	// to its end (its cold deletes are queued before the flusher drains).
	close(c.stop)
	c.wg.Wait()
	if c.fl != nil {
		// Keys lost so far are purged while the flusher still takes the
		// cold deletes that purging queues; once it is closed they would
		// be refused, and the cold copies they delete could come back
		// after a restart.
		if err := c.fl.Drain(context.Background()); err != nil {
			errs = append(errs, err)
		}
		c.processLost()
		errs = append(errs, c.fl.Close()) // every callback has returned
	}
	c.processLost()
	errs = append(errs, c.mem.closeLogs())
	if c.cold != nil {
		if s, ok := c.cold.(flusher.Syncer); ok {
			errs = append(errs, s.Sync(context.Background()))
		}
		errs = append(errs, c.cold.Close())
	}
	return errors.Join(errs...)
}

// drainToCold enqueues a durable put of every live key whose newest version
// is not known to be in cold, and of every key whose newest version is in
// cold with an expiry that Expire, Persist or GetEx changed since (T17),
// then waits for the flusher to write them.
func (c *Cache) drainToCold() error {
	// Keys that expired since the last sweep go first: their cold copies
	// are deleted (the flusher runs the deletes before Drain returns),
	// or a restart would bring them back.
	now := c.now() // one reading: a key is either swept or drained
	c.sweep(now)
	var buf []byte
	var n int
	var retimed []string // in cold with another expiry, and in no memory tier
	for i := range c.dir.shards {
		sh := &c.dir.shards[i]
		sh.mu.Lock()
		for k, e := range sh.m {
			if !e.live(now) || (e.coldHas(e.ver) && !e.expMoved) {
				continue
			}
			key := []byte(k)
			v, _, ok := c.memLookup(buf[:0], key, e)
			if !ok {
				if e.coldHas(e.ver) {
					retimed = append(retimed, k)
				}
				continue // else on its way to cold already, or lost
			}
			buf = v
			if c.drainPut(key, v, e) {
				n++
			}
		}
		sh.mu.Unlock()
	}
	// Keys only cold holds are read back from it, without a shard lock held
	// across the read. Nothing else writes any more (the cache is closed),
	// but a flusher completion may still change an entry, so the version
	// is checked again under the lock.
	for _, k := range retimed {
		key := []byte(k)
		v, m, found, err := c.cold.Get(context.Background(), buf[:0], key, -1)
		if err != nil || !found {
			c.log.Warn("tier: cannot read a key back from cold to rewrite its expiry; it keeps the expiry it was written with",
				zap.ByteString("key", key), zap.Bool("found", found), zap.Error(err))
			continue
		}
		buf = v
		lo, _ := hashKey(key)
		sh := c.dir.shard(lo)
		sh.mu.Lock()
		if e := sh.m[k]; e != nil && e.live(now) && e.ver == m.Version && c.drainPut(key, v, e) {
			n++
		}
		sh.mu.Unlock()
	}
	c.log.Info("tier: draining to cold", zap.Int("keys", n), zap.Int("expiry_rewrites", len(retimed)))
	return c.fl.Drain(context.Background())
}

// drainPut enqueues a durable put of v as key's version e.ver with its
// current expiry (shard lock held).
func (c *Cache) drainPut(key, v []byte, e *entry) bool {
	e.coldMayHold()
	it := &flusher.Item{Key: key, Value: append([]byte(nil), v...), Version: e.ver, Expiry: e.exp, Flags: coldFlags(e.kind), Sync: true}
	return c.fl.Enqueue(it) == nil
}

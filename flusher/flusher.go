package flusher

import (
	"context"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Flusher moves items to the cold store in batches from a bounded queue. See
// the package documentation for its invariants.
type Flusher struct {
	o Options

	mu       sync.Mutex
	q        []*Item             // pending, oldest first; nil slots were dropped
	head     int                 // index of the first slot in q that may be non-nil
	dropFrom int                 // slots of q before it are nil or not droppable (Sync, deletes)
	n        int                 // non-nil items in q
	bytes    int64               // value+key bytes of the items in q
	flying   int64               // value+key bytes of the batches in flight
	held     atomic.Int64        // bytes + flying, for WaitRoom's check without the lock
	heapHeld atomic.Int64        // the heapSize of the items queued and in flight
	inflight map[uint64]struct{} // key hashes of items submitted and not completed (F3)
	seed     maphash.Seed        // of the key hashes
	dels     map[string]int      // deletes enqueued and not completed, by key (F8)
	batches  int                 // batches in flight
	// taken numbers the batches taken so far; flyingIDs are the numbers
	// of those in flight (WaitTaken).
	taken     uint64
	flyingIDs []uint64
	closing   bool
	syncN     int     // Sync items pending: their batch closes at once
	victims   []*Item // dropped by Enqueue, handed to OnDrop by the dispatcher
	drainReq  int     // > 0 while someone waits for an empty queue: close batches now
	sh        *shares // the classes' weighted shares (F14), nil without Weights

	kick chan struct{} // wakes the dispatcher
	bufs chan *runBufs // spare batch slices (getBufs)
	idle *sync.Cond    // signalled when a batch completes
	wg   sync.WaitGroup

	st   stats
	errs errLog
}

type stats struct {
	enqueued, batches, written, bytes, drops, rejected, superseded, errors, overflow, deleteCalls atomic.Uint64
	throttled, throttleNs                                                                         atomic.Uint64
}

// Stats is a snapshot of the flusher's counters.
type Stats struct {
	Queue      int64  // items pending
	QueueBytes int64  // bytes pending
	InFlight   int64  // batches submitted and not completed
	Enqueued   uint64 // items accepted by Enqueue
	Batches    uint64 // submissions made
	Written    uint64 // items the store acknowledged
	Bytes      uint64 // key+value bytes the store acknowledged
	Drops      uint64 // items dropped because the queue was full (Shed)
	Rejected   uint64 // items refused by flash admission
	Superseded uint64 // items skipped because a newer copy existed
	Errors     uint64 // items the store failed
	Overflow   uint64 // items queued past the bounds: Sync items and deletes, and every put in Backpressure mode
	// DeleteCalls counts calls to the store for deletes: one per batch's
	// deletes with a ManyDeleter store, else one per delete.
	DeleteCalls uint64
	// Throttled counts WaitRoom calls that had to wait, ThrottleWait the
	// time they waited in all.
	Throttled    uint64
	ThrottleWait time.Duration
}

// New starts a flusher.
func New(o Options) (*Flusher, error) {
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	f := &Flusher{o: o, inflight: make(map[uint64]struct{}), seed: maphash.MakeSeed(), dels: make(map[string]int), kick: make(chan struct{}, 1),
		bufs: make(chan *runBufs, o.InFlight+1), sh: newShares(o.Weights)}
	f.idle = sync.NewCond(&f.mu)
	f.wg.Add(1)
	go f.dispatch()
	return f, nil
}

// Enqueue queues it without ever blocking. It returns ErrRejected when flash
// admission refused the item and ErrClosed after Close; in Shed mode
// ErrDropped when a droppable item alone exceeds QueueBytes (OnDrop is not
// called for those). In Shed mode, to make room, it may drop the oldest
// droppable pending item; OnDrop is then called for the victim later, on a
// flusher goroutine. In Backpressure mode it queues past the bounds
// (Stats.Overflow) and drops nothing.
func (f *Flusher) Enqueue(it *Item) error {
	if !it.Sync && !it.Delete && f.o.Admit != nil && !f.o.Admit.Admit(f.o.Hash(it.Key), len(it.Value)) {
		f.st.rejected.Add(1)
		return ErrRejected
	}
	f.mu.Lock()
	if f.closing {
		f.mu.Unlock()
		return ErrClosed
	}
	shed := f.o.Overload == Shed
	if shed && !it.Sync && !it.Delete && it.size() > f.o.QueueBytes {
		f.mu.Unlock()
		f.st.drops.Add(1)
		return ErrDropped
	}
	full := f.n > 0 && (f.n >= f.o.QueueItems || f.bytes+it.size() > f.o.QueueBytes)
	if full && (it.Sync || it.Delete || !shed) {
		f.st.overflow.Add(1) // never dropped, never the cause of a drop
		full = false
	}
	if f.sh != nil && f.o.ClassOf != nil {
		it.class = f.o.ClassOf(it.Key)
	}
	for full {
		full = f.n > 0 && (f.n >= f.o.QueueItems || f.bytes+it.size() > f.o.QueueBytes)
		if !full {
			break
		}
		v := f.dropOldestLocked(it)
		if v == nil {
			f.st.overflow.Add(1)
			break
		}
		f.st.drops.Add(1)
		if v == it { // its class is past its share (F14)
			f.mu.Unlock()
			f.wake()
			return ErrDropped
		}
		f.victims = append(f.victims, v)
	}
	it.enq = time.Now().UnixNano()
	it.kh = maphash.Bytes(f.seed, it.Key)
	f.q = append(f.q, it)
	f.n++
	f.bytes += it.size()
	f.sh.add(it, 1)
	f.heapHeld.Add(it.heapSize())
	f.heldLocked()
	if it.Sync {
		f.syncN++
	}
	if it.Delete {
		f.dels[string(it.Key)]++
	}
	f.st.enqueued.Add(1)
	wake := it.Sync || f.n == 1 || len(f.victims) > 0 || f.n >= f.o.BatchItems || f.bytes >= f.o.BatchBytes
	f.mu.Unlock()
	if wake {
		f.wake()
	}
	return nil
}

// DeletePending reports whether a delete of key was enqueued and has not
// completed yet (F8): until it has, the store may still hold the copy it
// deletes.
func (f *Flusher) DeletePending(key []byte) bool {
	f.mu.Lock()
	n := f.dels[string(key)]
	f.mu.Unlock()
	return n > 0
}

// Wait enqueues a Sync copy of it and waits until the store acknowledged it
// (a put or a delete) and made it durable; it returns the store's error.
// ctx bounds the wait, not the write.
func (f *Flusher) Wait(ctx context.Context, it *Item) error {
	if err := f.Begin(it); err != nil {
		return err
	}
	return it.Await(ctx)
}

// Begin enqueues it as a Sync item, to be waited for with it.Await: a
// caller that must order the item with its own state (enqueue under a lock
// it holds) waits after releasing it.
func (f *Flusher) Begin(it *Item) error {
	it.Sync = true
	it.done = make(chan error, 1)
	return f.Enqueue(it)
}

// Await waits for an item enqueued by Begin: nil once the store
// acknowledged it and made it durable (or skipped it as superseded), else
// the store's error. ctx bounds the wait, not the write.
func (it *Item) Await(ctx context.Context) error {
	select {
	case err := <-it.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Drain waits until every item enqueued before the call has completed.
func (f *Flusher) Drain(ctx context.Context) error {
	f.mu.Lock()
	f.drainReq++
	f.mu.Unlock()
	f.wake()
	defer f.wakeWaitersWhen(ctx)()
	f.mu.Lock()
	defer f.mu.Unlock()
	defer func() { f.drainReq-- }()
	for f.n > 0 || f.batches > 0 {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		f.idle.Wait()
	}
	return nil
}

// WaitTaken waits until every batch taken before the call has completed,
// its OnDone callbacks returned, and reports true; false if ctx ended
// first. Batches taken meanwhile are not waited for (F12).
func (f *Flusher) WaitTaken(ctx context.Context) bool {
	defer f.wakeWaitersWhen(ctx)()
	f.mu.Lock()
	defer f.mu.Unlock()
	upTo := f.taken
	for len(f.flyingIDs) > 0 && slices.Min(f.flyingIDs) <= upTo {
		if ctx.Err() != nil {
			return false
		}
		f.idle.Wait()
	}
	return true
}

// Close stops accepting items, writes every pending one, waits for all
// completions and stops the goroutines. It is idempotent.
func (f *Flusher) Close() error {
	f.mu.Lock()
	if f.closing {
		f.mu.Unlock()
		f.wg.Wait()
		return nil
	}
	f.closing = true
	f.idle.Broadcast() // WaitRoom gives up
	f.mu.Unlock()
	f.wake()
	f.wg.Wait()
	return nil
}

// Options returns the options in force (defaults filled in).
func (f *Flusher) Options() Options { return f.o }

// Stats returns a snapshot of the counters.
func (f *Flusher) Stats() Stats {
	f.mu.Lock()
	s := Stats{Queue: int64(f.n), QueueBytes: f.bytes, InFlight: int64(f.batches)}
	f.mu.Unlock()
	s.Enqueued = f.st.enqueued.Load()
	s.Batches = f.st.batches.Load()
	s.Written = f.st.written.Load()
	s.Bytes = f.st.bytes.Load()
	s.Drops = f.st.drops.Load()
	s.Rejected = f.st.rejected.Load()
	s.Superseded = f.st.superseded.Load()
	s.Errors = f.st.errors.Load()
	s.Overflow = f.st.overflow.Load()
	s.DeleteCalls = f.st.deleteCalls.Load()
	s.Throttled = f.st.throttled.Load()
	s.ThrottleWait = time.Duration(f.st.throttleNs.Load())
	return s
}

// Held is the key and value bytes the flusher holds: queued, and in the
// batches in flight.
func (f *Flusher) Held() int64 { return f.held.Load() }

// HeapHeld is the part of Held on the Go heap: Held less the values of
// OffHeap items.
func (f *Flusher) HeapHeld() int64 { return f.heapHeld.Load() }

func (f *Flusher) heldLocked() { f.held.Store(f.bytes + f.flying) }

// WaitRoom returns once the flusher holds at most limit bytes (F10), or
// when ctx ends or the flusher closes: a writer that calls it after each
// write that may end in cold keeps the queue from filling, so evictions
// wait for the device instead of being dropped (F2). It returns false if
// it gave up with the flusher still over limit.
func (f *Flusher) WaitRoom(ctx context.Context, limit int64) bool {
	if f.held.Load() <= limit {
		return true
	}
	start := time.Now()
	f.st.throttled.Add(1)
	defer func() { f.st.throttleNs.Add(uint64(time.Since(start))) }()
	return f.waitBelow(ctx, math.MaxInt, limit)
}

// WaitQueue returns once at most items items are queued and the flusher
// holds at most bytes (F11), false if ctx ended or the flusher closed
// first. Deletes never wait nor drop (F2) but overflow QueueItems, and
// past it every Enqueue of a put drops one: a producer of many deletes
// (the purge after a FLUSHALL) waits here between batches so that they do
// not push evictions out. Its waits are not counted as Throttled.
func (f *Flusher) WaitQueue(ctx context.Context, items int, bytes int64) bool {
	return f.waitBelow(ctx, items, bytes)
}

// waitBelow waits until at most items are queued and at most bytes held.
func (f *Flusher) waitBelow(ctx context.Context, items int, bytes int64) bool {
	f.mu.Lock()
	over := f.n > items || f.bytes+f.flying > bytes
	f.mu.Unlock()
	if !over {
		return true
	}
	defer f.wakeWaitersWhen(ctx)()
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.n > items || f.bytes+f.flying > bytes {
		if f.closing || ctx.Err() != nil {
			return false
		}
		f.idle.Wait()
	}
	return true
}

// wakeWaitersWhen makes the end of ctx wake the goroutines waiting on idle
// (Drain, WaitRoom), which then see ctx.Err(); call the returned func when
// done waiting.
func (f *Flusher) wakeWaitersWhen(ctx context.Context) func() bool {
	return context.AfterFunc(ctx, func() {
		f.mu.Lock()
		f.idle.Broadcast()
		f.mu.Unlock()
	})
}

func (f *Flusher) wake() {
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

func (f *Flusher) dropped(it *Item, why Reason) {
	if it.done != nil {
		it.done <- fmt.Errorf("%w: %s", ErrDropped, why)
	}
	if f.o.OnDrop != nil {
		f.o.OnDrop(it, why)
	}
	f.release(it)
}

// dropOldestLocked removes the oldest pending item that may be dropped (not
// Sync, not a delete) and returns it, or nil if there is none. It looks
// from dropFrom, not from head: a queue whose oldest items are deletes (a
// burst of overwrites of keys cold holds) would otherwise be scanned past
// them on every drop, under the lock Enqueue needs.
func (f *Flusher) dropOldestLocked(in *Item) *Item {
	if f.sh != nil {
		return f.dropHeaviestLocked(in)
	}
	for i := max(f.head, f.dropFrom); i < len(f.q); i++ {
		it := f.q[i]
		if it == nil || it.Sync || it.Delete {
			continue
		}
		return f.dropAtLocked(i, &f.dropFrom)
	}
	f.dropFrom = len(f.q)
	return nil
}

// dropAtLocked removes the item in slot i, which is droppable, setting
// *from, the dropFrom that found it, past it.
func (f *Flusher) dropAtLocked(i int, from *int) *Item {
	it := f.q[i]
	f.q[i] = nil
	f.n--
	f.bytes -= it.size()
	f.sh.add(it, -1)
	f.heapHeld.Add(-it.heapSize())
	f.heldLocked()
	*from = i + 1
	f.compactLocked()
	return it
}

func (f *Flusher) compactLocked() {
	for f.head < len(f.q) && f.q[f.head] == nil {
		f.head++
	}
	if f.head == len(f.q) {
		f.q = f.q[:0]
		f.head, f.dropFrom = 0, 0
		f.sh.resetDrops()
	} else if len(f.q)-f.head > 2*f.n+1024 || (f.head > 1024 && f.head > len(f.q)/2) {
		w, from := 0, 0
		for i, it := range f.q[f.head:] {
			if f.head+i == f.dropFrom {
				from = w // where dropFrom's slot lands
			}
			if it != nil {
				f.q[w] = it
				w++
			}
		}
		if f.dropFrom >= len(f.q) {
			from = w
		}
		clear(f.q[w:])
		f.q = f.q[:w]
		f.head, f.dropFrom = 0, from
		f.sh.resetDrops()
	}
}

// dropHeaviestLocked is dropOldestLocked with weighted shares (F14): the
// oldest droppable item of the class furthest past its share of the
// queue, else of the next past it; in itself when its class is past its
// share with nothing droppable queued; nil (overflow) when no class past
// its share has a droppable item. A class flooding the queue drops its
// own items, never those of a class within its share.
func (f *Flusher) dropHeaviestLocked(in *Item) *Item {
	for _, c := range f.sh.pastShare(in.class, f.o.QueueItems, f.o.QueueBytes) {
		cl := &f.sh.cls[c]
		for i := max(f.head, cl.dropFrom); i < len(f.q); i++ {
			it := f.q[i]
			if it == nil || it.class != c || it.Sync || it.Delete {
				continue
			}
			return f.dropAtLocked(i, &cl.dropFrom)
		}
		cl.dropFrom = len(f.q)
		if c == in.class && !in.Sync && !in.Delete {
			return in
		}
	}
	return nil
}

package behind

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/flusher"
)

// Options configure a Queue. Zero values take the defaults.
type Options struct {
	Store backend.Shared // required

	QueueItems int           // pending changes before the oldest is dropped (default 65536)
	QueueBytes int64         // pending key and value bytes before the oldest is dropped (default 64 MiB)
	BatchItems int           // a batch closes at this many changes (default 256)
	BatchBytes int64         // ... or at this many key and value bytes (default 4 MiB)
	BatchDelay time.Duration // ... or when its oldest change waited this long, while another batch is in flight (default 1 ms; with none in flight a change goes at once)
	InFlight   int           // batches sent and not answered at once (default 4)
	// CloseWait bounds how long Close sends what is pending (default 2 s).
	CloseWait time.Duration
	// Retries is how many times a change the store failed is sent again
	// (default 10; -1: never), the first RetryBackoff after the failure
	// (default 50 ms), each next one twice as long after, up to 5 s
	// (W7): a failover's writes land on the new master. Attempts are made
	// only while the store is Available.
	Retries      int
	RetryBackoff time.Duration
	Logger       *zap.Logger
}

func (o *Options) ensureDefaults() {
	if o.QueueItems == 0 {
		o.QueueItems = 65536
	}
	if o.QueueBytes == 0 {
		o.QueueBytes = 64 << 20
	}
	if o.BatchItems == 0 {
		o.BatchItems = 256
	}
	if o.BatchBytes == 0 {
		o.BatchBytes = 4 << 20
	}
	if o.BatchDelay == 0 {
		o.BatchDelay = time.Millisecond
	}
	if o.InFlight == 0 {
		o.InFlight = 4
	}
	if o.CloseWait == 0 {
		o.CloseWait = 2 * time.Second
	}
	if o.Retries == 0 {
		o.Retries = 10
	}
	if o.RetryBackoff == 0 {
		o.RetryBackoff = 50 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
}

type kind uint8

const (
	put kind = iota
	del
	retime
)

// Fill gives a lazy put's value as it is when sent: appended to dst,
// with its expiry and flags; ok false sends nothing (the key is gone: a
// delete of it is queued behind).
type Fill func(dst, key []byte) (value []byte, exp int64, flags uint32, ok bool)

// change is a key's pending change, in the queue's FIFO by first call.
type change struct {
	key        string
	kind       kind
	value      []byte
	fill       Fill // a lazy put's (PutLazy), nil otherwise
	exp        int64
	flags      uint32
	at         time.Time // when the key's first pending change was made
	tries      int       // sends the store failed (W7)
	resets     uint64    // the queue's resets when the change was made
	after      time.Time // a retried change is not sent before (W7)
	prev, next *change
}

func (c *change) size() int64 { return int64(len(c.key) + len(c.value)) }

// Queue is a write-behind queue to a shared store. Safe for concurrent use.
type Queue struct {
	o Options

	mu         sync.Mutex
	pend       map[string]*change // the pending change of each key
	head, tail *change            // pending changes, oldest first
	n          int
	bytes      int64
	flying     map[string]bool // keys with a change in flight
	batches    int             // batches in flight
	flyBytes   int64           // key and value bytes of the batches in flight
	closed     bool
	resets     uint64 // Resets so far: a change made before one is not retried (W7)
	// hurry: a caller waits for a key (Wait): the next batch goes
	// without waiting for BatchDelay.
	hurry   atomic.Bool
	changed chan struct{} // closed and replaced when a batch completes (Wait)

	kick chan struct{}
	stop chan struct{}
	wg   sync.WaitGroup

	st struct {
		enqueued, merged, sent, dropped, failed, retried, batches atomic.Uint64
	}
}

// Stats are a Queue's counters.
type Stats struct {
	Queued        int64  // changes pending
	QueuedBytes   int64  // their key and value bytes
	InFlight      int64  // batches sent and not answered
	InFlightBytes int64  // their key and value bytes
	Enqueued      uint64 // changes made
	Merged        uint64 // changes merged into a pending change of their key
	Sent          uint64 // changes the store took
	Dropped       uint64 // changes dropped: queue full, or pending at Close
	Failed        uint64 // changes the store failed Retries+1 times (given up)
	Retried       uint64 // sends the store failed, queued again (W7)
	Batches       uint64 // batches sent
}

// New starts a queue.
func New(o Options) *Queue {
	o.ensureDefaults()
	q := &Queue{o: o, pend: map[string]*change{}, flying: map[string]bool{}, changed: make(chan struct{}),
		kick: make(chan struct{}, 1), stop: make(chan struct{})}
	q.wg.Add(1)
	go q.dispatch()
	return q
}

// Put records a put of key=value with expiry exp (unix ns, 0: none) and
// the writer's flags (W1).
func (q *Queue) Put(key, value []byte, exp int64, flags uint32) {
	q.add(key, kind(put), value, exp, flags)
}

// PutLazy records a put of key whose value fill gives when the put is
// sent (W6): a value that changes in place (a live aggregate) is then
// serialized once per send, not once per change; it weighs its key's
// bytes in the queue.
func (q *Queue) PutLazy(key []byte, fill Fill) { q.addChange(key, put, nil, 0, 0, fill) }

// Delete records a delete of key (W1).
func (q *Queue) Delete(key []byte) { q.add(key, del, nil, 0, 0) }

// Retime records a new expiry of key (W1).
func (q *Queue) Retime(key []byte, exp int64) { q.add(key, retime, nil, exp, 0) }

func (q *Queue) add(key []byte, k kind, value []byte, exp int64, flags uint32) {
	q.addChange(key, k, value, exp, flags, nil)
}

func (q *Queue) addChange(key []byte, k kind, value []byte, exp int64, flags uint32, fill Fill) {
	q.st.enqueued.Add(1)
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		q.st.dropped.Add(1)
		return
	}
	if p := q.pend[string(key)]; p != nil {
		q.bytes -= p.size()
		switch {
		case k == retime && p.kind == put:
			p.exp = exp
		case k == retime && p.kind == del:
			// an expiry of a key deleted: nothing to change
		default:
			p.kind, p.exp, p.flags, p.fill = k, exp, flags, fill
			p.value = append(p.value[:0:0], value...)
		}
		q.bytes += p.size()
		q.st.merged.Add(1)
		q.mu.Unlock()
		return
	}
	c := &change{key: string(key), kind: k, value: append([]byte(nil), value...), exp: exp, flags: flags, fill: fill, at: time.Now(), resets: q.resets}
	q.appendLocked(c)
	wake := q.n == 1 || q.n >= q.o.BatchItems || q.bytes >= q.o.BatchBytes
	q.mu.Unlock()
	if wake {
		q.wake()
	}
}

// appendLocked makes c its key's pending change, the newest, dropping the
// oldest while the queue is full (W1).
func (q *Queue) appendLocked(c *change) {
	for q.n > 0 && (q.n >= q.o.QueueItems || q.bytes+c.size() > q.o.QueueBytes) {
		q.removeLocked(q.head)
		q.st.dropped.Add(1)
	}
	q.pend[c.key] = c
	if q.tail == nil {
		q.head, q.tail = c, c
	} else {
		c.prev, q.tail.next, q.tail = q.tail, c, c
	}
	q.n++
	q.bytes += c.size()
}

func (q *Queue) removeLocked(c *change) {
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		q.head = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		q.tail = c.prev
	}
	c.prev, c.next = nil, nil
	delete(q.pend, c.key)
	q.n--
	q.bytes -= c.size()
}

func (q *Queue) wake() {
	select {
	case q.kick <- struct{}{}:
	default:
	}
}

// Pending reports whether a change of key is queued or in flight (W3).
func (q *Queue) Pending(key []byte) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pend[string(key)] != nil || q.flying[string(key)]
}

// QueuedValue reports whether a put or a delete of key waits to be sent
// (not yet in flight, W3): the key's value in the store is decided by it.
// A queued new expiry carries no value, so it does not count.
func (q *Queue) QueuedValue(key []byte) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	c := q.pend[string(key)]
	return c != nil && c.kind != retime
}

// Wait returns true once no change of key is queued or in flight, false
// if ctx ended first (W3).
func (q *Queue) Wait(ctx context.Context, key []byte) bool {
	for {
		q.mu.Lock()
		busy := q.pend[string(key)] != nil || q.flying[string(key)]
		ch := q.changed
		q.mu.Unlock()
		if !busy {
			return true
		}
		q.hurry.Store(true)
		q.wake()
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// Reset drops every pending change (a FLUSHALL made them moot), counted as
// dropped; changes in flight complete, and are not retried if they fail
// (W7).
func (q *Queue) Reset() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.resets++
	for q.head != nil {
		q.removeLocked(q.head)
		q.st.dropped.Add(1)
	}
}

// Stats returns the queue's counters.
func (q *Queue) Stats() Stats {
	q.mu.Lock()
	s := Stats{Queued: int64(q.n), QueuedBytes: q.bytes, InFlight: int64(q.batches), InFlightBytes: q.flyBytes}
	q.mu.Unlock()
	s.Enqueued, s.Merged, s.Sent = q.st.enqueued.Load(), q.st.merged.Load(), q.st.sent.Load()
	s.Dropped, s.Failed, s.Batches = q.st.dropped.Load(), q.st.failed.Load(), q.st.batches.Load()
	s.Retried = q.st.retried.Load()
	return s
}

// dispatch sends batches until Close.
func (q *Queue) dispatch() {
	defer q.wg.Done()
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		wait := q.sendReady(false)
		t.Reset(wait)
		select {
		case <-q.stop:
			q.drain()
			return
		case <-q.kick:
		case <-t.C:
		}
	}
}

// sendReady sends every batch that is ready (full, or its oldest change
// waited BatchDelay, or all with force) while InFlight allows, and
// returns how long to wait before looking again.
func (q *Queue) sendReady(force bool) time.Duration {
	for {
		if !q.o.Store.Available() {
			return 10 * time.Millisecond // W4: nothing is sent; changes wait
		}
		q.mu.Lock()
		if q.batches >= q.o.InFlight || q.head == nil {
			q.mu.Unlock()
			return time.Hour
		}
		// Idle (no batch in flight), a change goes at once; while batches
		// are in flight, changes gather for up to BatchDelay.
		if !force && q.batches > 0 && !q.hurry.Swap(false) && q.n < q.o.BatchItems && q.bytes < q.o.BatchBytes {
			if d := q.o.BatchDelay - time.Since(q.head.at); d > 0 {
				q.mu.Unlock()
				return d
			}
		}
		batch, retryIn := q.takeLocked(force)
		if len(batch) == 0 { // every pending key has a change in flight, or waits to be retried
			q.mu.Unlock()
			return retryIn
		}
		q.batches++
		q.mu.Unlock()
		q.st.batches.Add(1)
		q.wg.Add(1)
		go q.send(batch)
	}
}

// takeLocked takes up to BatchItems pending changes, oldest first, of keys
// with no change in flight (W2) and not waiting to be retried (W7, unless
// force), and marks their keys in flight; retryIn is how long until the
// first change that waits to be retried may go (an hour if none).
func (q *Queue) takeLocked(force bool) (batch []*change, retryIn time.Duration) {
	retryIn = time.Hour
	now := time.Now()
	var bytes int64
	for c := q.head; c != nil && len(batch) < q.o.BatchItems && bytes < q.o.BatchBytes; {
		next := c.next
		switch {
		case q.flying[c.key]:
		case !force && now.Before(c.after):
			retryIn = min(retryIn, c.after.Sub(now))
		default:
			q.removeLocked(c)
			q.flying[c.key] = true
			batch = append(batch, c)
			bytes += c.size()
			q.flyBytes += c.size()
		}
		c = next
	}
	return batch, retryIn
}

// send writes one batch: its puts, deletes and retimes side by side; the
// changes the store failed are queued again (W7).
func (q *Queue) send(batch []*change) {
	defer q.wg.Done()
	ctx := context.Background()
	var puts []*flusher.Item
	var putOf, delOf, retOf []*change
	var dels, rets [][]byte
	var exps []int64
	var skipped uint64
	for _, c := range batch {
		switch {
		case c.kind == put && c.fill != nil:
			v, exp, flags, ok := c.fill(nil, []byte(c.key))
			if !ok {
				skipped++
				continue
			}
			q.mu.Lock()
			q.flyBytes += int64(len(v) - len(c.value))
			c.value = v
			q.mu.Unlock()
			puts, putOf = append(puts, &flusher.Item{Key: []byte(c.key), Value: v, Expiry: exp, Flags: flags}), append(putOf, c)
		case c.kind == put:
			puts, putOf = append(puts, &flusher.Item{Key: []byte(c.key), Value: c.value, Expiry: c.exp, Flags: c.flags}), append(putOf, c)
		case c.kind == del:
			dels, delOf = append(dels, []byte(c.key)), append(delOf, c)
		case c.kind == retime:
			rets, exps, retOf = append(rets, []byte(c.key)), append(exps, c.exp), append(retOf, c)
		}
	}
	var fmu sync.Mutex
	var failed []*change
	fail := func(c *change) {
		fmu.Lock()
		failed = append(failed, c)
		fmu.Unlock()
	}
	var wg sync.WaitGroup
	run := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	if len(puts) > 0 {
		run(func() {
			q.o.Store.PutMany(ctx, puts)
			for i, it := range puts {
				if it.Err != nil {
					fail(putOf[i])
				}
			}
		})
	}
	if len(dels) > 0 {
		run(func() {
			for i, err := range q.o.Store.DeleteMany(ctx, dels) {
				if err != nil {
					fail(delOf[i])
				}
			}
		})
	}
	if len(rets) > 0 {
		run(func() {
			for i, err := range q.o.Store.RetimeMany(ctx, rets, exps) {
				if err != nil {
					fail(retOf[i])
				}
			}
		})
	}
	wg.Wait()
	q.st.sent.Add(uint64(len(batch)-len(failed)) - skipped)
	q.mu.Lock()
	for _, c := range batch {
		delete(q.flying, c.key)
		q.flyBytes -= c.size()
	}
	for _, c := range failed {
		q.retryLocked(c)
	}
	q.batches--
	close(q.changed)
	q.changed = make(chan struct{})
	q.mu.Unlock()
	q.wake()
}

// retryLocked queues c, which the store failed, again (W7): after a
// backoff, unless it failed Retries+1 times (given up, counted failed)
// or a change of its key made since decides. A new expiry made since
// carries no value: it becomes c (a put or a delete) with that expiry.
func (q *Queue) retryLocked(c *change) {
	if c.resets != q.resets { // a Reset (FLUSHALL) since: the change is moot
		q.st.dropped.Add(1)
		return
	}
	if p := q.pend[c.key]; p != nil {
		if p.kind == retime && c.kind != retime {
			q.bytes -= p.size()
			p.kind, p.value, p.flags, p.fill = c.kind, c.value, c.flags, c.fill
			if c.kind == del {
				p.exp = 0
			}
			q.bytes += p.size()
		}
		return
	}
	if c.tries++; c.tries > q.o.Retries {
		q.st.failed.Add(1)
		return
	}
	q.st.retried.Add(1)
	c.after = time.Now().Add(min(q.o.RetryBackoff<<(c.tries-1), maxRetryBackoff))
	if c.fill != nil {
		c.value = nil // filled again when sent
	}
	q.appendLocked(c)
}

// maxRetryBackoff bounds the wait before a change is sent again (W7).
const maxRetryBackoff = 5 * time.Second

// drain sends what is pending for at most CloseWait, then drops the rest
// (W5).
func (q *Queue) drain() {
	deadline := time.Now().Add(q.o.CloseWait)
	for time.Now().Before(deadline) {
		q.sendReady(true)
		q.mu.Lock()
		idle := q.head == nil && q.batches == 0
		ch := q.changed
		q.mu.Unlock()
		if idle {
			return
		}
		select {
		case <-ch:
		case <-time.After(10 * time.Millisecond):
		}
	}
	q.mu.Lock()
	for q.head != nil {
		q.removeLocked(q.head)
		q.st.dropped.Add(1)
	}
	q.mu.Unlock()
}

// Close sends what is pending within CloseWait and waits for every batch
// in flight (W5).
func (q *Queue) Close() {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.closed = true
	q.mu.Unlock()
	close(q.stop)
	q.wg.Wait()
}

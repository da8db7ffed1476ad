package uring

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// User data of the owner's own SQEs: the read of its wake-up eventfd, and
// the cancel-everything of Close after CloseGrace.
const (
	efdTag    = ^uint64(0)
	cancelTag = ^uint64(0) - 1
)

// Front lets many goroutines share one Ring. One goroutine, the owner, does
// every ring operation (locked to its OS thread when SingleIssuer); other
// goroutines queue requests with Submit or Do, and the owner prepares them in
// batches, submits, reaps and calls Done. An owner sleeping in the kernel
// (requests in flight) is woken through an eventfd the ring itself reads; an
// idle owner sleeps on a channel.
type Front struct {
	opts FrontOptions
	log  *zap.Logger

	mu        sync.Mutex
	room      *sync.Cond // Submit waits here for queue room
	pending   []*Request // queued groups, flattened; guarded by mu
	ctl       []func(*Ring)
	closed    bool         // guarded by mu
	nq        atomic.Int64 // len(pending), readable without mu
	nattn     atomic.Int64 // control functions or Close wait for the owner
	sleeping  atomic.Int32 // sleepAwake, sleepKernel or sleepChan
	wakeCh    chan struct{}
	inDone    atomic.Bool // the owner is running Done callbacks
	closeOnce sync.Once
	done      chan struct{}
	closeErr  error

	// Set by the owner during start, read-only afterwards.
	efd      int
	maxGroup int
	sqe128   bool
	sqpoll   bool
	cqe32    bool
	features uint32

	// Owner goroutine only.
	ring     *Ring
	backlog  []*Request // taken from pending, not yet in the SQ
	bpos     int
	slots    []*Request
	gens     []uint32
	pins     []runtime.Pinner
	pinned   []bool // pins[i] holds something
	free     []int32
	efdBuf   *[8]byte
	efdPin   runtime.Pinner
	efdArmed bool
	closing  bool
	cancels  []uint64  // user data of requests to cancel (Do's context ended)
	closeBy  time.Time // when Close cancels what is still in flight
	cancelAt bool      // the cancel-everything SQE has been placed
	reaped   bool      // the last round reaped without entering
	oneP     bool      // GOMAXPROCS was 1 when last read (onlyOneP)
	pChecks  uint32

	// Stall tracking (owner only; off when StallAfter < 0).
	stallOn  bool
	epoch    time.Time
	now      int64        // ns since epoch, updated once per place round
	placed   []placedInfo // per slot
	checkDue atomic.Bool  // set by stallTicker: run checkStalls

	stats frontStats
}

// placedInfo is what stall reports say of a slot's request.
type placedInfo struct {
	at      int64 // placed, in ns since Front.epoch
	fd      int32
	op      uint8
	stalled bool // reported
}

type frontStats struct {
	submitted, completed, enters, wakeups, enterErrors, stalled atomic.Uint64
	oldest                                                      atomic.Int64 // ns
	lastErr                                                     atomic.Value // error
}

// FrontStats are counters of a Front.
type FrontStats struct {
	Submitted   uint64 // requests put into the SQ
	Completed   uint64 // Done callbacks made
	Enters      uint64 // io_uring_enter calls by the owner
	Wakeups     uint64 // wake-ups of a sleeping owner (eventfd or channel)
	EnterErrors uint64 // io_uring_enter failures other than EINTR/EBUSY/EAGAIN
	LastError   error  // the last such failure
	// Stalled counts requests that were in flight longer than StallAfter.
	Stalled uint64
	// OldestInFlight is the age of the oldest request in flight when the
	// owner last looked (every min(StallAfter/4, 1 s)); 0 when nothing was
	// in flight or stall tracking is off.
	OldestInFlight time.Duration
}

// NewFront starts the owner goroutine, which creates the ring.
func NewFront(opts FrontOptions) (*Front, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	f := &Front{opts: opts, log: opts.Logger, done: make(chan struct{}), efd: -1, wakeCh: make(chan struct{}, 1)}
	f.room = sync.NewCond(&f.mu)
	started := make(chan error, 1)
	go f.run(started)
	if err := <-started; err != nil {
		<-f.done
		return nil, err
	}
	return f, nil
}

// Where the owner sleeps (Front.sleeping).
const (
	sleepAwake  int32 = iota
	sleepKernel       // in io_uring_enter: wake it through the eventfd the ring reads
	sleepChan         // idle, on wakeCh
)

// wake signals a sleeping owner.
func (f *Front) wake() {
	s := f.sleeping.Load()
	if s == sleepAwake || !f.sleeping.CompareAndSwap(s, sleepAwake) {
		return
	}
	f.stats.wakeups.Add(1)
	if s == sleepChan {
		select {
		case f.wakeCh <- struct{}{}:
		default: // a wake-up is already pending
		}
		return
	}
	if err := sysEventfdSignal(f.efd); err != nil {
		f.log.Error("uring: front: signal eventfd", zap.Error(err))
	}
}

// Submit queues reqs as ONE contiguous group: they land adjacently in the SQ
// in order, so IO_LINK chains inside a group stay intact. It never waits for
// the kernel; it waits for queue room when MaxQueued requests are already
// queued (except from a Done callback). It returns ErrClosed after Close and
// ErrTooLarge if the group exceeds the SQ (or CQ) size.
func (f *Front) Submit(reqs ...*Request) error {
	if len(reqs) == 0 {
		return nil
	}
	if err := f.check(reqs); err != nil {
		return err
	}
	f.mu.Lock()
	for !f.closed && len(f.pending) >= f.opts.MaxQueued && !f.inDone.Load() {
		f.room.Wait()
	}
	if f.closed {
		f.mu.Unlock()
		return ErrClosed
	}
	f.enqueue(reqs)
	f.mu.Unlock()
	f.wake()
	return nil
}

func (f *Front) check(reqs []*Request) error {
	if len(reqs) > f.maxGroup {
		return fmt.Errorf("%w: %d requests, at most %d", ErrTooLarge, len(reqs), f.maxGroup)
	}
	for i, r := range reqs {
		if r == nil || r.Prep == nil {
			return fmt.Errorf("%w: request %d of the group is nil or has no Prep", ErrBadRequest, i)
		}
	}
	return nil
}

// enqueue appends a group; f.mu is held.
func (f *Front) enqueue(reqs []*Request) {
	for i, r := range reqs {
		r.groupLen = 0
		if i == 0 {
			r.groupLen = int32(len(reqs))
		}
	}
	f.pending = append(f.pending, reqs...)
	f.nq.Add(int64(len(reqs)))
}

// Do submits reqs as one group and waits for all completions; the results
// are in order. A request's own Done is called too. If ctx ends after
// submission, Do asks the kernel to cancel the requests
// (IORING_OP_ASYNC_CANCEL), still waits for every completion (the memory
// stays in use until then) and returns ctx.Err(). Do must not be called from
// a Done callback.
func (f *Front) Do(ctx context.Context, reqs ...*Request) ([]Result, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	call := &doCall{results: make([]Result, len(reqs)), left: len(reqs), done: make(chan struct{})}
	for i, r := range reqs {
		if r != nil {
			r.call, r.callIdx = call, int32(i)
		}
	}
	if err := f.Submit(reqs...); err != nil {
		for _, r := range reqs {
			if r != nil {
				r.call = nil
			}
		}
		return nil, err
	}
	select {
	case <-call.done:
		return call.results, nil
	case <-ctx.Done():
	}
	f.control(func(r *Ring) { f.cancel(call, reqs) })
	<-call.done
	return call.results, ctx.Err()
}

// cancel runs on the owner: requests of call still queued are completed with
// ECANCELED when their group comes up; those in flight get an ASYNC_CANCEL.
func (f *Front) cancel(call *doCall, reqs []*Request) {
	for _, req := range reqs {
		if req.call != call {
			continue // already completed
		}
		if !req.inFlight {
			req.cancelled = true
			continue
		}
		f.cancels = append(f.cancels, f.userData(req.slot))
	}
}

// control runs fn on the owner goroutine with the ring and waits for it.
// It returns ErrClosed after Close. Not from a Done callback.
func (f *Front) control(fn func(*Ring)) error {
	ran := make(chan struct{})
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return ErrClosed
	}
	f.ctl = append(f.ctl, func(r *Ring) { fn(r); close(ran) })
	f.nattn.Add(1)
	f.mu.Unlock()
	f.wake()
	<-ran
	return nil
}

// Close stops accepting requests, waits for every queued and in-flight
// request to complete, then closes the ring. Close is idempotent.
func (f *Front) Close() error {
	f.closeOnce.Do(func() {
		f.mu.Lock()
		f.closed = true
		f.nattn.Add(1) // make the owner look
		f.room.Broadcast()
		f.mu.Unlock()
		f.wake()
		<-f.done
	})
	<-f.done
	return f.closeErr
}

// Options are the options the Front runs with, defaults filled in.
func (f *Front) Options() FrontOptions { return f.opts }

// Features are the ring's IORING_FEAT_* bits.
func (f *Front) Features() uint32 { return f.features }

// SQE128 reports 128-byte SQEs.
func (f *Front) SQE128() bool { return f.sqe128 }

// CQE32 reports 32-byte CQEs.
func (f *Front) CQE32() bool { return f.cqe32 }

// MaxGroup is the largest group Submit accepts.
func (f *Front) MaxGroup() int { return f.maxGroup }

// Probe asks the kernel which opcodes it supports (on the owner goroutine).
func (f *Front) Probe() (*Probe, error) {
	var p *Probe
	var err error
	if cerr := f.control(func(r *Ring) { p, err = r.Probe() }); cerr != nil {
		return nil, cerr
	}
	return p, err
}

// RegisterBuffers registers fixed buffers (on the owner goroutine); see
// Ring.RegisterBuffers.
func (f *Front) RegisterBuffers(bufs [][]byte) error {
	var err error
	if cerr := f.control(func(r *Ring) { err = r.RegisterBuffers(bufs) }); cerr != nil {
		return cerr
	}
	return err
}

// UnregisterBuffers drops the fixed buffers (on the owner goroutine).
func (f *Front) UnregisterBuffers() error {
	var err error
	if cerr := f.control(func(r *Ring) { err = r.UnregisterBuffers() }); cerr != nil {
		return cerr
	}
	return err
}

// RegisterFiles registers fixed files (on the owner goroutine); see
// Ring.RegisterFiles.
func (f *Front) RegisterFiles(fds []int) error {
	var err error
	if cerr := f.control(func(r *Ring) { err = r.RegisterFiles(fds) }); cerr != nil {
		return cerr
	}
	return err
}

// UnregisterFiles drops the fixed files (on the owner goroutine).
func (f *Front) UnregisterFiles() error {
	var err error
	if cerr := f.control(func(r *Ring) { err = r.UnregisterFiles() }); cerr != nil {
		return cerr
	}
	return err
}

// Stats returns the Front's counters.
func (f *Front) Stats() FrontStats {
	s := FrontStats{
		Submitted:      f.stats.submitted.Load(),
		Completed:      f.stats.completed.Load(),
		Enters:         f.stats.enters.Load(),
		Wakeups:        f.stats.wakeups.Load(),
		EnterErrors:    f.stats.enterErrors.Load(),
		Stalled:        f.stats.stalled.Load(),
		OldestInFlight: time.Duration(f.stats.oldest.Load()),
	}
	if err, ok := f.stats.lastErr.Load().(error); ok {
		s.LastError = err
	}
	return s
}

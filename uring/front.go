package uring

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
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
// batches, submits, reaps and calls Done. A sleeping owner is woken through
// an eventfd the ring itself reads.
type Front struct {
	opts FrontOptions
	log  *zap.Logger

	mu        sync.Mutex
	room      *sync.Cond // Submit waits here for queue room
	pending   []*Request // queued groups, flattened; guarded by mu
	ctl       []func(*Ring)
	closed    bool         // guarded by mu
	nq        atomic.Int64 // len(pending)+len(ctl), readable without mu
	sleeping  atomic.Bool  // the owner is (about to be) blocked in the kernel
	inDone    atomic.Bool  // the owner is running Done callbacks
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
	closeBy  time.Time // when Close cancels what is still in flight
	cancelAt bool      // the cancel-everything SQE has been placed
	reaped   bool      // the last round reaped without entering

	stats frontStats
}

type frontStats struct {
	submitted, completed, enters, wakeups, enterErrors atomic.Uint64
	lastErr                                            atomic.Value // error
}

// FrontStats are counters of a Front.
type FrontStats struct {
	Submitted   uint64 // requests put into the SQ
	Completed   uint64 // Done callbacks made
	Enters      uint64 // io_uring_enter calls by the owner
	Wakeups     uint64 // eventfd signals to wake a sleeping owner
	EnterErrors uint64 // io_uring_enter failures other than EINTR/EBUSY/EAGAIN
	LastError   error  // the last such failure
}

// NewFront starts the owner goroutine, which creates the ring.
func NewFront(opts FrontOptions) (*Front, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	f := &Front{opts: opts, log: opts.Logger, done: make(chan struct{}), efd: -1}
	f.room = sync.NewCond(&f.mu)
	started := make(chan error, 1)
	go f.run(started)
	if err := <-started; err != nil {
		<-f.done
		return nil, err
	}
	return f, nil
}

// start runs on the owner goroutine: ring, eventfd and slot table.
func (f *Front) start() error {
	r, err := New(f.opts.Ring)
	if err != nil {
		return err
	}
	efd, err := sysEventfd()
	if err != nil {
		r.Close()
		return fmt.Errorf("uring: front: create eventfd: %w", err)
	}
	f.ring, f.efd = r, efd
	f.sqe128, f.cqe32, f.features = r.SQE128(), r.CQE32(), r.Features()
	f.sqpoll = r.SetupFlags()&setupSQPoll != 0
	nslots := int(r.CQEntries()) - 1 // one CQE is the eventfd read's
	f.slots = make([]*Request, nslots)
	f.gens = make([]uint32, nslots)
	f.pins = make([]runtime.Pinner, nslots)
	f.pinned = make([]bool, nslots)
	f.free = make([]int32, nslots)
	for i := range f.free {
		f.free[i] = int32(nslots - 1 - i)
	}
	f.maxGroup = min(int(r.SQEntries()), nslots, f.opts.MaxBatch)
	f.efdBuf = new([8]byte)
	f.efdPin.Pin(f.efdBuf)
	return nil
}

func (f *Front) run(started chan<- error) {
	defer close(f.done)
	if f.opts.Ring.SingleIssuer {
		// Every io_uring_enter must come from the thread that created the
		// ring, or the kernel answers EEXIST: stay on this thread.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	if err := f.start(); err != nil {
		started <- err
		return
	}
	started <- nil
	f.loop()
	f.shutdown()
}

func (f *Front) loop() {
	for {
		f.take()
		f.place()
		if n := f.reap(); n > 0 {
			// Done callbacks may have queued more: look once more before
			// entering, but do not hold placed SQEs back for long.
			if f.ring.SQReady() > 0 && f.reaped {
				f.enter(0)
				f.reaped = false
			} else {
				f.reaped = true
			}
			continue
		}
		f.reaped = false
		var timeout time.Duration
		if f.closing && f.nq.Load() == 0 && len(f.backlog) == 0 {
			if len(f.free) == len(f.slots) {
				return
			}
			if timeout = f.closeWait(); timeout < 0 {
				continue // the cancel SQE was placed
			}
		}
		if len(f.backlog) > 0 && f.ring.SQSpace() < int(f.backlog[f.bpos].groupLen) {
			// The next group waits for SQ space, and nothing may be in
			// flight to wake us: free the SQ first instead of sleeping.
			if f.sqpoll {
				// The SQPOLL thread consumes the SQ in its own time (and
				// may have posted every completion already).
				if err := f.ring.WaitSQSpace(); err != nil {
					f.log.Error("uring: front: wait for SQ space", zap.Error(err))
				}
			} else {
				f.enter(0)
			}
			continue
		}
		f.sleeping.Store(true)
		if f.nq.Load() > 0 && len(f.backlog) == 0 {
			f.sleeping.Store(false)
			continue
		}
		f.enterTimeout(1, timeout)
		f.sleeping.Store(false)
	}
}

// closeWait is called while closing with requests still in flight. Past
// CloseGrace it places one cancel-everything SQE and returns -1; otherwise
// it returns how long the owner may sleep (0 = without limit).
func (f *Front) closeWait() time.Duration {
	if f.opts.CloseGrace < 0 || f.cancelAt {
		return 0
	}
	if f.closeBy.IsZero() {
		f.closeBy = time.Now().Add(f.opts.CloseGrace)
	}
	left := time.Until(f.closeBy)
	if left > 0 {
		return left
	}
	s := f.ring.NextSQE()
	if s == nil {
		return 0 // the next enter frees the SQ
	}
	s.PrepCancel(0, CancelAny|CancelAll)
	s.UserData = cancelTag
	f.cancelAt = true
	f.log.Warn("uring: front: cancelling requests still in flight after the close grace period",
		zap.Int("in_flight", len(f.slots)-len(f.free)), zap.Duration("grace", f.opts.CloseGrace))
	return -1
}

// enter submits the SQ and waits for wait completions.
func (f *Front) enter(wait uint32) { f.enterTimeout(wait, 0) }

// enterTimeout is enter that gives up waiting after timeout (0 = no limit).
func (f *Front) enterTimeout(wait uint32, timeout time.Duration) {
	_, err := f.ring.SubmitAndWaitTimeout(wait, timeout)
	f.stats.enters.Add(1)
	if err == nil || errors.Is(err, ErrBusy) || errors.Is(err, ErrTimeout) {
		return // on ErrBusy the loop reaps and enters again
	}
	f.stats.enterErrors.Add(1)
	f.stats.lastErr.Store(err)
	f.log.Error("uring: front: io_uring_enter failed", zap.Error(err))
	time.Sleep(time.Millisecond) // do not spin on a persistent failure
}

// take moves queued groups into the backlog (only when the backlog is
// empty, so Submit's backpressure works) and runs control functions.
func (f *Front) take() {
	if f.nq.Load() == 0 {
		return
	}
	f.mu.Lock()
	f.closing = f.closed
	ctl := f.ctl
	f.ctl = nil
	took := false
	if len(f.backlog) == 0 && len(f.pending) > 0 {
		f.backlog, f.pending = f.pending, f.backlog[:0]
		took = true
	}
	f.nq.Store(int64(len(f.pending)))
	if took {
		f.room.Broadcast()
	}
	f.mu.Unlock()
	for _, fn := range ctl {
		fn(f.ring)
	}
}

// place puts backlog groups into the SQ while they fit whole.
func (f *Front) place() {
	if !f.efdArmed && !f.closing {
		s := f.ring.NextSQE()
		if s == nil {
			return // cannot happen: the loop submits the whole SQ every round
		}
		s.PrepRead(int32(f.efd), f.efdBuf[:], 0)
		s.UserData = efdTag
		f.efdArmed = true
	}
	budget := f.opts.MaxBatch
	for f.bpos < len(f.backlog) {
		first := f.backlog[f.bpos]
		n := int(first.groupLen)
		group := f.backlog[f.bpos : f.bpos+n]
		if anyCancelled(group) {
			for _, req := range group {
				f.finish(req, Result{Res: -int32(syscall.ECANCELED)})
			}
			f.bpos += n
			continue
		}
		if n > f.ring.SQSpace() || n > len(f.free) || n > budget {
			return
		}
		budget -= n
		for i, req := range group {
			f.startReq(req, i == n-1)
		}
		f.bpos += n
	}
	clear(f.backlog) // all placed: drop the pointers, reuse the array
	f.backlog, f.bpos = f.backlog[:0], 0
}

func anyCancelled(group []*Request) bool {
	for _, r := range group {
		if r.cancelled {
			return true
		}
	}
	return false
}

// startReq takes a slot, pins the request's memory and prepares its SQE.
func (f *Front) startReq(req *Request, last bool) {
	slot := f.free[len(f.free)-1]
	f.free = f.free[:len(f.free)-1]
	f.slots[slot] = req
	f.gens[slot]++
	req.slot = slot
	p := &f.pins[slot]
	for _, b := range req.Pin {
		if len(b) > 0 {
			p.Pin(&b[0])
			f.pinned[slot] = true
		}
	}
	for _, o := range req.PinObjects {
		p.Pin(o)
		f.pinned[slot] = true
	}
	s := f.ring.NextSQE()
	req.Prep(s)
	s.Flags &^= FlagCQESkipSuccess
	if last {
		s.Flags &^= FlagIOLink | FlagIOHardlink
	}
	s.UserData = f.userData(slot)
	f.stats.submitted.Add(1)
}

func (f *Front) userData(slot int32) uint64 { return uint64(f.gens[slot])<<32 | uint64(uint32(slot)) }

// reap delivers every CQE in the CQ.
func (f *Front) reap() int {
	f.inDone.Store(true)
	n := f.ring.ForEachCQE(f.complete)
	f.inDone.Store(false)
	return n
}

func (f *Front) complete(c *CQE) {
	switch c.UserData {
	case efdTag:
		f.efdArmed = false
		return
	case cancelTag:
		return
	}
	slot := int32(uint32(c.UserData))
	req := f.slots[slot]
	if req == nil || f.userData(slot) != c.UserData {
		f.log.Error("uring: front: completion for an unknown request", zap.Uint64("user_data", c.UserData))
		return
	}
	f.slots[slot] = nil
	if f.pinned[slot] {
		f.pins[slot].Unpin()
		f.pinned[slot] = false
	}
	f.free = append(f.free, slot)
	req.slot = -1
	f.finish(req, Result{Res: c.Res, Flags: c.Flags, Big: c.Big()})
}

// finish delivers a result to Done and to a waiting Do.
func (f *Front) finish(req *Request, res Result) {
	call, idx := req.call, req.callIdx
	req.call, req.cancelled, req.slot = nil, false, -1
	f.stats.completed.Add(1)
	if req.Done != nil {
		req.Done(res)
	}
	if call != nil {
		call.results[idx] = res
		call.left--
		if call.left == 0 {
			close(call.done)
		}
	}
}

// shutdown retires the eventfd read, then closes the ring and the eventfd.
func (f *Front) shutdown() {
	if f.efdArmed {
		// The read completes once the counter is non-zero; it is not re-armed.
		if err := sysEventfdSignal(f.efd); err != nil {
			f.log.Error("uring: front: signal eventfd", zap.Error(err))
		}
		for f.efdArmed {
			f.enter(1)
			f.reap()
		}
	}
	f.closeErr = errors.Join(f.ring.Close(), sysClose(f.efd))
	f.efdPin.Unpin()
}

// wake signals a sleeping owner.
func (f *Front) wake() {
	if f.sleeping.Load() && f.sleeping.CompareAndSwap(true, false) {
		f.stats.wakeups.Add(1)
		if err := sysEventfdSignal(f.efd); err != nil {
			f.log.Error("uring: front: signal eventfd", zap.Error(err))
		}
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
		if req.slot < 0 {
			req.cancelled = true
			continue
		}
		ud := f.userData(req.slot)
		c := &Request{Prep: func(s *SQE) { s.PrepCancel(ud, 0) }, groupLen: 1, slot: -1}
		f.backlog = append(f.backlog, c)
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
	f.nq.Add(1)
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
		f.nq.Add(1) // make the owner look
		f.room.Broadcast()
		f.mu.Unlock()
		f.wake()
		<-f.done
	})
	<-f.done
	return f.closeErr
}

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
		Submitted:   f.stats.submitted.Load(),
		Completed:   f.stats.completed.Load(),
		Enters:      f.stats.enters.Load(),
		Wakeups:     f.stats.wakeups.Load(),
		EnterErrors: f.stats.enterErrors.Load(),
	}
	if err, ok := f.stats.lastErr.Load().(error); ok {
		s.LastError = err
	}
	return s
}

package uring

import (
	"errors"
	"fmt"
	"runtime"
	"syscall"
	"time"

	"go.uber.org/zap"
)

// The owner goroutine of a Front: it alone touches the ring. Each round it
// takes the queued requests (one swap under the mutex), places whole groups
// into the SQ, reaps and calls Done, and sleeps in io_uring_enter (submit +
// wait in one call) when there is nothing else to do.

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
	if f.stallOn = f.opts.StallAfter > 0; f.stallOn {
		f.epoch = time.Now()
		f.placed = make([]placedInfo, nslots)
	}
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
	if f.stallOn {
		go f.stallTicker()
	}
	f.loop()
	f.shutdown()
}

func (f *Front) loop() {
	for {
		if f.stallOn && f.checkDue.Load() {
			f.checkDue.Store(false)
			f.checkStalls()
		}
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
				if !f.opts.Ring.SingleIssuer || f.onlyOneP() {
					// Let the goroutines that Done woke run now: what they
					// submit is then taken in this round, not after an
					// eventfd wake-up of a sleeping owner. With one P
					// (GOMAXPROCS=1) a locked owner must yield too: asleep
					// in io_uring_enter it holds the only P, so they could
					// run only after sysmon took it back (20 us or more),
					// one request per wake-up (U15).
					runtime.Gosched()
				}
			}
			continue
		}
		f.reaped = false
		var timeout time.Duration
		if f.closing && f.nq.Load() == 0 && f.nattn.Load() == 0 && len(f.backlog) == 0 {
			if len(f.free) == len(f.slots) {
				return
			}
			if timeout = f.closeWait(); timeout < 0 {
				continue // the cancel SQE was placed
			}
		}
		if len(f.backlog) > 0 {
			n := int(f.backlog[f.bpos].groupLen)
			if n <= f.ring.SQSpace() && n <= len(f.free) {
				continue // it fits now (SQ space or slots came free since place)
			}
			if n > f.ring.SQSpace() {
				// The next group waits for SQ space, and nothing may be in
				// flight to wake us: free the SQ instead of sleeping.
				if f.sqpoll {
					// The SQPOLL thread consumes the SQ in its own time
					// (and may have posted every completion already).
					if err := f.ring.WaitSQSpace(n); err != nil {
						f.log.Error("uring: front: wait for SQ space", zap.Error(err))
					}
				} else {
					f.enter(0)
				}
				continue
			}
			// Only slots are missing: requests are in flight, their
			// completions (or a submitter) wake us.
		}
		if len(f.free) == len(f.slots) && f.ring.SQReady() == 0 && len(f.backlog) == 0 && !f.closing {
			// Idle: nothing the kernel could complete for us. Sleep on a
			// channel; a submitter's wake-up is then a goroutine switch,
			// often on its own thread, not an eventfd write and a thread wake.
			if f.stallOn {
				f.stats.oldest.Store(0) // nothing in flight
			}
			f.sleeping.Store(sleepChan)
			if f.nq.Load() > 0 || f.nattn.Load() > 0 {
				f.sleeping.Store(sleepAwake)
				continue
			}
			<-f.wakeCh
			f.sleeping.Store(sleepAwake)
			continue
		}
		f.sleeping.Store(sleepKernel)
		if (f.nq.Load() > 0 && len(f.backlog) == 0) || f.nattn.Load() > 0 {
			f.sleeping.Store(sleepAwake)
			continue
		}
		f.enterTimeout(1, timeout)
		f.sleeping.Store(sleepAwake)
	}
}

// stallTicker marks a stall check due every stallCheckEvery and wakes an
// owner sleeping in the kernel, so that checkStalls runs while nothing
// completes. (A timeout on the owner's own wait would arm a kernel timer on
// every sleep, and a clock read per loop round would cost more than this.)
func (f *Front) stallTicker() {
	t := time.NewTicker(f.opts.stallCheckEvery())
	defer t.Stop()
	for {
		select {
		case <-t.C:
			f.checkDue.Store(true)
			if f.sleeping.Load() == sleepKernel {
				f.wake()
			}
		case <-f.done:
			return
		}
	}
}

// checkStalls, when stallTicker says it is due, publishes the age of the
// oldest request in flight and reports each request in flight for longer
// than StallAfter once (a warning and FrontStats.Stalled). Nothing is
// cancelled: the request may still complete, and its caller decides.
//
// OldestInFlight is published before Stalled grows, so a reader that sees a
// request counted as stalled also sees an age of at least StallAfter.
func (f *Front) checkStalls() {
	now := int64(time.Since(f.epoch))
	oldest := int64(0)
	for i, req := range f.slots {
		if req != nil {
			oldest = max(oldest, now-f.placed[i].at)
		}
	}
	f.stats.oldest.Store(oldest)
	if oldest < int64(f.opts.StallAfter) {
		return
	}
	for i, req := range f.slots {
		if req == nil {
			continue
		}
		p := &f.placed[i]
		if age := now - p.at; age >= int64(f.opts.StallAfter) && !p.stalled {
			p.stalled = true
			f.log.Warn("uring: front: request stalled in the kernel: in flight longer than StallAfter (not cancelled)",
				zap.Uint8("opcode", p.op), zap.Int32("fd", p.fd),
				zap.Duration("in_flight", time.Duration(age)), zap.Duration("stall_after", f.opts.StallAfter))
			// Counted after the warning: whoever sees the count finds the
			// warning logged (TestFrontStall waits on the count).
			f.stats.stalled.Add(1)
		}
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

// onlyOneP reports whether the program runs with GOMAXPROCS=1 (as Go picks
// under a CPU limit of one core). GOMAXPROCS can change while the program
// runs (Go follows the cgroup's limit), and reading it takes the
// scheduler's global lock: it is read again every 256 calls.
func (f *Front) onlyOneP() bool {
	if f.pChecks%256 == 0 {
		f.oneP = runtime.GOMAXPROCS(0) == 1
	}
	f.pChecks++
	return f.oneP
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
	if f.nq.Load() == 0 && f.nattn.Load() == 0 {
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
	f.nattn.Store(0)
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
	for len(f.cancels) > 0 {
		// Cancels take no slot: their CQE (cancelTag) only needs CQ room,
		// and the kernel keeps an overflow rather than drop it (FEAT_NODROP).
		s := f.ring.NextSQE()
		if s == nil {
			return
		}
		s.PrepCancel(f.cancels[len(f.cancels)-1], 0)
		s.UserData = cancelTag
		f.cancels = f.cancels[:len(f.cancels)-1]
	}
	budget := f.opts.MaxBatch
	if f.stallOn && f.bpos < len(f.backlog) {
		f.now = int64(time.Since(f.epoch)) // the placing time of this round's requests
	}
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
	req.slot, req.inFlight = slot, true
	if pinRequest(&f.pins[slot], req) {
		f.pinned[slot] = true
	}
	s := f.ring.NextSQE()
	req.Prep(s)
	if f.stallOn {
		f.placed[slot] = placedInfo{at: f.now, fd: s.Fd, op: s.Opcode}
	}
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
	if f.stallOn && f.placed[slot].stalled {
		p := f.placed[slot]
		f.log.Warn("uring: front: a stalled request completed",
			zap.Uint8("opcode", p.op), zap.Int32("fd", p.fd), zap.Int32("res", c.Res),
			zap.Duration("in_flight", time.Since(f.epoch)-time.Duration(p.at)))
	}
	if f.pinned[slot] {
		f.pins[slot].Unpin()
		f.pinned[slot] = false
	}
	f.free = append(f.free, slot)
	req.inFlight = false
	f.finish(req, Result{Res: c.Res, Flags: c.Flags, Big: c.Big()})
}

// finish delivers a result to Done and to a waiting Do.
func (f *Front) finish(req *Request, res Result) {
	call, idx := req.call, req.callIdx
	req.call, req.cancelled = nil, false
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

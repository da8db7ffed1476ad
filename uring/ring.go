package uring

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
)

// Ring is one io_uring instance: its fd, the mmap'd SQ and CQ rings and the
// SQE array. It is NOT safe for concurrent use: exactly one goroutine uses
// it, and on a SingleIssuer ring that goroutine must be locked
// (runtime.LockOSThread) to the OS thread that called New. Other packages use
// it through Front.
type Ring struct {
	fd       int
	flags    uint32 // setup flags the kernel accepted
	features uint32
	closed   bool

	ringMem []byte // SQ ring; also the CQ ring with FeatSingleMmap
	cqMem   []byte // CQ ring (aliases ringMem with FeatSingleMmap)
	sqeMem  []byte // the SQE array

	// SQ ring. sqHead is written by the kernel, sqTail by us.
	sqHead, sqTail, sqFlags *uint32
	sqMask, sqEntries       uint32
	sqeTail                 uint32 // next SQE NextSQE hands out (not yet published)
	sqeShift                uint   // 6 or 7

	// CQ ring. cqTail is written by the kernel, cqHead by us.
	cqHead, cqTail, cqOverflow *uint32
	cqMask, cqEntries          uint32
	cqesOff                    uint32
	cqeShift                   uint // 4 or 5

	scratch CQE            // the CQE handed out by PeekCQE/WaitCQE/ForEachCQE
	waitArg getEventsArg   // EXT_ARG for WaitCQE; on the heap, never on a stack
	waitTs  kernelTimespec // its timeout

	regBufs [][]byte // registered buffers, kept reachable while registered
}

// New sets up a ring. When io_uring is unavailable the error wraps
// ErrUnavailable and says why in one sentence.
func New(opts Options) (*Ring, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	p := opts.params()
	fd, err := sysSetup(opts.Entries, &p)
	if err == syscall.EINVAL && (opts.NoSQArray || opts.SubmitAll) {
		// Older kernels reject flags they do not know (NO_SQARRAY is 6.6,
		// SUBMIT_ALL 5.18): both are optional, so set up without them.
		o := opts
		o.NoSQArray, o.SubmitAll = false, false
		p = o.params()
		fd, err = sysSetup(opts.Entries, &p)
	}
	if err != nil {
		return nil, setupError(err, p.Flags)
	}
	r := &Ring{fd: fd, flags: p.Flags, features: p.Features}
	if err := r.mapRings(&p); err != nil {
		return nil, errors.Join(err, r.Close())
	}
	return r, nil
}

// mapRings maps the rings described by p (one mmap for both rings with
// FeatSingleMmap) and sets up the pointers into them.
func (r *Ring) mapRings(p *params) error {
	r.sqeShift, r.cqeShift = 6, 4
	if p.Flags&setupSQE128 != 0 {
		r.sqeShift = 7
	}
	if p.Flags&setupCQE32 != 0 {
		r.cqeShift = 5
	}
	sqSize := int(p.SQOff.Array) + int(p.SQEntries)*4
	cqSize := int(p.CQOff.Cqes) + int(p.CQEntries)<<r.cqeShift
	var err error
	if p.Features&FeatSingleMmap != 0 {
		r.ringMem, err = sysMmap(r.fd, offSQRing, max(sqSize, cqSize))
		if err != nil {
			return fmt.Errorf("uring: mmap rings (%d bytes): %w", max(sqSize, cqSize), err)
		}
		r.cqMem = r.ringMem
	} else {
		if r.ringMem, err = sysMmap(r.fd, offSQRing, sqSize); err != nil {
			return fmt.Errorf("uring: mmap SQ ring (%d bytes): %w", sqSize, err)
		}
		if r.cqMem, err = sysMmap(r.fd, offCQRing, cqSize); err != nil {
			return fmt.Errorf("uring: mmap CQ ring (%d bytes): %w", cqSize, err)
		}
	}
	sqeSize := int(p.SQEntries) << r.sqeShift
	if r.sqeMem, err = sysMmap(r.fd, offSQEs, sqeSize); err != nil {
		return fmt.Errorf("uring: mmap SQE array (%d bytes): %w", sqeSize, err)
	}
	r.sqHead = u32At(r.ringMem, p.SQOff.Head)
	r.sqTail = u32At(r.ringMem, p.SQOff.Tail)
	r.sqFlags = u32At(r.ringMem, p.SQOff.Flags)
	r.sqMask = *u32At(r.ringMem, p.SQOff.RingMask)
	r.sqEntries = *u32At(r.ringMem, p.SQOff.RingEntries)
	r.sqeTail = atomic.LoadUint32(r.sqTail)
	if p.Flags&setupNoSQArray == 0 {
		// Identity index array: SQE slot i is always published as index i.
		for i := uint32(0); i < r.sqEntries; i++ {
			*u32At(r.ringMem, p.SQOff.Array+4*i) = i
		}
	}
	r.cqHead = u32At(r.cqMem, p.CQOff.Head)
	r.cqTail = u32At(r.cqMem, p.CQOff.Tail)
	r.cqOverflow = u32At(r.cqMem, p.CQOff.Overflow)
	r.cqMask = *u32At(r.cqMem, p.CQOff.RingMask)
	r.cqEntries = *u32At(r.cqMem, p.CQOff.RingEntries)
	r.cqesOff = p.CQOff.Cqes
	return nil
}

// Close unmaps the rings and closes the ring fd. The kernel cancels requests
// still in flight. Close is idempotent.
func (r *Ring) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	var errs []error
	if r.sqeMem != nil {
		errs = append(errs, sysMunmap(r.sqeMem))
	}
	if r.cqMem != nil && (r.ringMem == nil || &r.cqMem[0] != &r.ringMem[0]) {
		errs = append(errs, sysMunmap(r.cqMem))
	}
	if r.ringMem != nil {
		errs = append(errs, sysMunmap(r.ringMem))
	}
	errs = append(errs, sysClose(r.fd))
	r.sqeMem, r.cqMem, r.ringMem = nil, nil, nil
	r.regBufs = nil
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("uring: close ring: %w", err)
	}
	return nil
}

// Fd is the ring's file descriptor.
func (r *Ring) Fd() int { return r.fd }

// Features are the IORING_FEAT_* bits the kernel reported.
func (r *Ring) Features() uint32 { return r.features }

// SetupFlags are the IORING_SETUP_* flags the ring was created with (NoSQArray
// is absent when the kernel did not have it).
func (r *Ring) SetupFlags() uint32 { return r.flags }

// SQE128 reports 128-byte SQEs.
func (r *Ring) SQE128() bool { return r.flags&setupSQE128 != 0 }

// CQE32 reports 32-byte CQEs.
func (r *Ring) CQE32() bool { return r.flags&setupCQE32 != 0 }

// SQEntries is the SQ size.
func (r *Ring) SQEntries() uint32 { return r.sqEntries }

// CQEntries is the CQ size.
func (r *Ring) CQEntries() uint32 { return r.cqEntries }

// NextSQE returns the next free SQE, zeroed (all 64 or 128 bytes), or nil if
// the SQ is full. It becomes visible to the kernel at the next Submit.
func (r *Ring) NextSQE() *SQE {
	head := atomic.LoadUint32(r.sqHead)
	if r.sqeTail-head >= r.sqEntries {
		return nil
	}
	s := sqeAt(r.sqeMem, r.sqeTail&r.sqMask, r.sqeShift)
	clear(sqeBytes(s, 1<<r.sqeShift))
	r.sqeTail++
	return s
}

// SQSpace is the number of SQEs NextSQE can still hand out.
func (r *Ring) SQSpace() int {
	return int(r.sqEntries - (r.sqeTail - atomic.LoadUint32(r.sqHead)))
}

// SQReady is the number of SQEs handed out and not yet consumed by the kernel.
func (r *Ring) SQReady() int { return int(r.sqeTail - atomic.LoadUint32(r.sqHead)) }

// flush publishes the SQEs handed out so far and returns how many the kernel
// has not consumed yet.
func (r *Ring) flush() uint32 {
	atomic.StoreUint32(r.sqTail, r.sqeTail)
	return r.sqeTail - atomic.LoadUint32(r.sqHead)
}

// cqNeedsEnter reports that completions wait in the kernel (CQ overflow
// list, or deferred task work) and only an enter with GETEVENTS brings them.
func (r *Ring) cqNeedsEnter() bool {
	return atomic.LoadUint32(r.sqFlags)&(sqCQOverflow|sqTaskrun) != 0
}

// Submit hands the prepared SQEs to the kernel without waiting and returns
// how many it took (on an SQPOLL ring: how many were published).
func (r *Ring) Submit() (int, error) { return r.submit(0, false) }

// SubmitAndWait submits and waits until at least n completions are in the CQ.
func (r *Ring) SubmitAndWait(n uint32) (int, error) { return r.submit(n, n > 0) }

// SubmitAndWaitTimeout is SubmitAndWait that gives up after timeout
// (IORING_ENTER_EXT_ARG) with an error wrapping ErrTimeout and ETIME when
// nothing was submitted; timeout <= 0 waits without limit.
func (r *Ring) SubmitAndWaitTimeout(n uint32, timeout time.Duration) (int, error) {
	if timeout <= 0 || n == 0 {
		return r.submit(n, n > 0)
	}
	if r.features&FeatExtArg == 0 {
		return 0, fmt.Errorf("uring: a wait timeout needs IORING_FEAT_EXT_ARG (Linux 5.11): %w", syscall.ENOTSUP)
	}
	r.setTimeout(timeout)
	return r.enterLoop(n, true, &r.waitArg)
}

// setTimeout fills the ring's EXT_ARG with a relative timeout.
func (r *Ring) setTimeout(d time.Duration) {
	r.waitTs = kernelTimespec{Sec: int64(d / time.Second), Nsec: int64(d % time.Second)}
	r.waitArg = getEventsArg{Ts: ptrAddr(unsafePointer(&r.waitTs))}
}

func (r *Ring) submit(waitNr uint32, getEvents bool) (int, error) {
	return r.enterLoop(waitNr, getEvents, nil)
}

func (r *Ring) enterLoop(waitNr uint32, getEvents bool, arg *getEventsArg) (int, error) {
	if r.closed {
		return 0, ErrClosed
	}
	sqpoll := r.flags&setupSQPoll != 0
	for {
		toSubmit := r.flush()
		var flags uint32
		if sqpoll && atomic.LoadUint32(r.sqFlags)&sqNeedWakeup != 0 {
			flags |= enterSQWakeup
		}
		if getEvents || r.cqNeedsEnter() {
			flags |= enterGetEvents
		}
		if flags == 0 && (sqpoll || toSubmit == 0) {
			return int(toSubmit), nil // nothing needs the kernel
		}
		if arg != nil {
			flags |= enterExtArg
		}
		n, err := sysEnter(r.fd, toSubmit, waitNr, flags, arg)
		switch {
		case err == nil:
			if sqpoll {
				return int(toSubmit), nil
			}
			return n, nil
		case err == syscall.EINTR:
			continue // nothing was submitted (else n > 0 and no error)
		case err == syscall.ETIME:
			return 0, fmt.Errorf("%w: %w", ErrTimeout, err)
		case err == syscall.EAGAIN || err == syscall.EBUSY:
			return 0, fmt.Errorf("%w: io_uring_enter: %w", ErrBusy, err)
		default:
			return 0, fmt.Errorf("uring: io_uring_enter(submit %d, wait %d): %w", toSubmit, waitNr, err)
		}
	}
}

// WaitSQSpace publishes the prepared SQEs and waits until the SQ has at
// least n free entries (n is capped at the SQ size). Only an SQPOLL ring
// needs it: there the kernel thread consumes SQEs in its own time (and posts
// their completions before it advances the SQ head); it is woken if it
// sleeps. On other rings it returns at once.
func (r *Ring) WaitSQSpace(n int) error {
	if r.closed {
		return ErrClosed
	}
	if r.flags&setupSQPoll == 0 {
		return nil
	}
	n = min(n, int(r.sqEntries))
	r.flush()
	for r.SQSpace() < n {
		flags := enterSQWait // returns at once unless the SQ is full
		if atomic.LoadUint32(r.sqFlags)&sqNeedWakeup != 0 {
			flags |= enterSQWakeup
		}
		if _, err := sysEnter(r.fd, 0, 0, flags, nil); err != nil && err != syscall.EINTR {
			return fmt.Errorf("uring: io_uring_enter(SQ_WAIT): %w", err)
		}
		if r.SQSpace() < n {
			runtime.Gosched() // the SQ thread is consuming: give it the CPU
		}
	}
	return nil
}

// peek copies the CQE at the head into r.scratch, nil if the CQ is empty.
func (r *Ring) peek() *CQE {
	head := atomic.LoadUint32(r.cqHead)
	if head == atomic.LoadUint32(r.cqTail) {
		return nil
	}
	r.load(head)
	return &r.scratch
}

func (r *Ring) load(head uint32) {
	c := cqeAt(r.cqMem, r.cqesOff, head&r.cqMask, r.cqeShift)
	r.scratch = CQE{UserData: c.UserData, Res: c.Res, Flags: c.Flags}
	if r.cqeShift == 5 {
		r.scratch.big = c.Big // only a CQE32 ring has these 16 bytes
	}
}

// PeekCQE returns the CQE at the head of the CQ, or nil if there is none. It
// enters the kernel only when completions wait in the overflow list or in
// deferred task work. The CQE stays valid until the next Peek/Wait/ForEach;
// call CQESeen to consume it.
func (r *Ring) PeekCQE() *CQE {
	if r.closed {
		return nil
	}
	if c := r.peek(); c != nil {
		return c
	}
	if r.cqNeedsEnter() {
		r.getEvents()
		return r.peek()
	}
	return nil
}

// getEvents enters with GETEVENTS and min_complete 0: the kernel flushes its
// CQ overflow list and runs pending task work into the CQ.
func (r *Ring) getEvents() {
	for {
		_, err := sysEnter(r.fd, 0, 0, enterGetEvents, nil)
		if err != syscall.EINTR {
			return
		}
	}
}

// CQESeen consumes the CQE at the head of the CQ.
func (r *Ring) CQESeen() {
	atomic.StoreUint32(r.cqHead, atomic.LoadUint32(r.cqHead)+1)
}

// ForEachCQE calls fn for every CQE in the CQ (including those flushed from
// the overflow list), consumes them and returns how many there were. fn must
// not use r's CQ.
func (r *Ring) ForEachCQE(fn func(*CQE)) int {
	if r.closed {
		return 0
	}
	n := 0
	for {
		head := atomic.LoadUint32(r.cqHead)
		tail := atomic.LoadUint32(r.cqTail)
		if head == tail {
			if !r.cqNeedsEnter() {
				return n
			}
			r.getEvents()
			if atomic.LoadUint32(r.cqTail) == head {
				return n
			}
			continue
		}
		for ; head != tail; head++ {
			r.load(head)
			fn(&r.scratch)
			n++
			atomic.StoreUint32(r.cqHead, head+1)
		}
	}
}

// WaitCQE submits what is prepared and waits for a completion; timeout <= 0
// waits without limit. With a timeout it uses IORING_ENTER_EXT_ARG and
// returns an error wrapping ErrTimeout (and ETIME) when it expires. The CQE
// is not consumed: call CQESeen.
func (r *Ring) WaitCQE(timeout time.Duration) (*CQE, error) {
	if r.closed {
		return nil, ErrClosed
	}
	if timeout > 0 && r.features&FeatExtArg == 0 {
		return nil, fmt.Errorf("uring: WaitCQE with a timeout needs IORING_FEAT_EXT_ARG (Linux 5.11): %w", syscall.ENOTSUP)
	}
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	sqpoll := r.flags&setupSQPoll != 0
	submit := true
	for {
		if c := r.PeekCQE(); c != nil {
			return c, nil
		}
		var toSubmit uint32
		if submit {
			toSubmit = r.flush()
		}
		flags := enterGetEvents
		if sqpoll && atomic.LoadUint32(r.sqFlags)&sqNeedWakeup != 0 {
			flags |= enterSQWakeup
		}
		var arg *getEventsArg
		if timeout > 0 {
			left := time.Until(deadline)
			if left <= 0 {
				return nil, fmt.Errorf("%w (%v): %w", ErrTimeout, timeout, syscall.ETIME)
			}
			r.setTimeout(left)
			arg = &r.waitArg
			flags |= enterExtArg
		}
		_, err := sysEnter(r.fd, toSubmit, 1, flags, arg)
		switch {
		case err == nil, err == syscall.EINTR:
		case err == syscall.ETIME:
			if c := r.PeekCQE(); c != nil {
				return c, nil
			}
			return nil, fmt.Errorf("%w (%v): %w", ErrTimeout, timeout, err)
		case err == syscall.EAGAIN || err == syscall.EBUSY:
			submit = false // completions first; the SQEs stay published
		default:
			return nil, fmt.Errorf("uring: io_uring_enter(wait): %w", err)
		}
	}
}

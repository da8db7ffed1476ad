package uring

import (
	"errors"
	"runtime"
	"syscall"
	"time"
)

// RunEach runs independent requests on r from the calling goroutine, the
// way fio does at its default iodepth_batch=1: each request's SQE is
// handed to the kernel by an io_uring_enter of its own as soon as it is
// prepared, so the device starts on the first while the next are being
// prepared, and while the SQ and CQ have room no request waits for
// another. It keeps at most min(SQEntries, CQEntries) in flight, submits
// the next as each completes, and returns once every request's Done has
// run, on this goroutine, exactly once (U16).
//
// Prep may not link (FlagIOLink and FlagIOHardlink are cleared, and
// FlagCQESkipSuccess: every completion is needed) nor set
// UserData; Pin and PinObjects are pinned until the completion, as on a
// Front. Done must not use r. The caller's thread does the waiting: there
// is no owner goroutine and no hand-off to another thread, which is what
// a batch of reads from one goroutine gains over a Front (nvmekv/emu
// measures it). r must be a plain ring (not SingleIssuer unless this
// thread created it, not SQPOLL) that nothing else uses meanwhile, with
// an empty SQ and CQ.
//
// w watches for stalls: see RunWatch.
//
// If io_uring_enter fails other than transiently, the requests not yet
// prepared complete with -ECANCELED and the error is returned; those
// already prepared are still waited for (their buffers may belong to the
// kernel until then), retrying the enter every millisecond. A ring that is
// closed, or an SQPOLL ring, runs nothing: every request completes with
// -ECANCELED.
func (r *Ring) RunEach(reqs []*Request, w RunWatch) error {
	var refuse error
	switch {
	case r.closed:
		refuse = ErrClosed
	case r.flags&setupSQPoll != 0:
		refuse = errors.New("uring: RunEach needs a ring without SQPOLL")
	}
	if refuse != nil {
		for _, q := range reqs {
			q.Done(Result{Res: -int32(syscall.ECANCELED)})
		}
		return refuse
	}
	depth := int(min(r.sqEntries, r.cqEntries))
	var pins []runtime.Pinner
	if needPins(reqs) {
		pins = make([]runtime.Pinner, len(reqs))
	}
	var failed error
	next, inFlight := 0, 0
	watch := w.StallAfter > 0 && w.Stalled != nil && r.features&FeatExtArg != 0
	reported := false
	for next < len(reqs) || inFlight > 0 {
		for failed == nil && next < len(reqs) && inFlight < depth {
			s := r.NextSQE()
			if s == nil {
				break // the kernel has not consumed the SQ yet: reap first
			}
			q := reqs[next]
			if pins != nil {
				pinRequest(&pins[next], q)
			}
			q.Prep(s)
			s.Flags &^= FlagIOLink | FlagIOHardlink | FlagCQESkipSuccess
			s.UserData = uint64(next)
			next++
			inFlight++
			if _, err := r.Submit(); err != nil && !errors.Is(err, ErrBusy) {
				failed = err // the SQE stays in the SQ: the wait below submits it
			}
		}
		if failed != nil {
			for ; next < len(reqs); next++ {
				reqs[next].Done(Result{Res: -int32(syscall.ECANCELED)})
			}
		}
		if inFlight == 0 {
			break
		}
		var err error
		if watch {
			_, err = r.SubmitAndWaitTimeout(1, w.StallAfter)
		} else {
			_, err = r.SubmitAndWait(1)
		}
		switch {
		case err == nil || errors.Is(err, ErrBusy):
		case errors.Is(err, ErrTimeout):
			if !reported {
				reported = true
				w.Stalled(inFlight)
			}
		default:
			if failed == nil {
				failed = err
			}
			time.Sleep(time.Millisecond) // do not spin on a persistent failure
		}
		n := r.ForEachCQE(func(c *CQE) {
			i := int(c.UserData)
			res := Result{Res: c.Res, Flags: c.Flags}
			if r.CQE32() {
				res.Big = c.Big()
			}
			if pins != nil {
				pins[i].Unpin()
			}
			reqs[i].Done(res)
		})
		inFlight -= n
		if n > 0 {
			reported = false
		}
	}
	return failed
}

// RunWatch is RunEach's stall watch. When StallAfter > 0 and requests are
// in flight with none completing for StallAfter, RunEach calls Stalled
// once with how many are in flight (again only after a completion came
// and a new stall began); nothing is cancelled, RunEach keeps waiting. A
// ring without IORING_FEAT_EXT_ARG (Linux < 5.11) cannot time its waits
// and does not watch.
type RunWatch struct {
	StallAfter time.Duration
	Stalled    func(inFlight int)
}

func needPins(reqs []*Request) bool {
	for _, q := range reqs {
		if len(q.Pin) > 0 || len(q.PinObjects) > 0 {
			return true
		}
	}
	return false
}

// pinRequest pins what q lists for the kernel (Request.Pin, PinObjects)
// and reports whether it pinned anything.
func pinRequest(p *runtime.Pinner, q *Request) bool {
	pinned := false
	for _, b := range q.Pin {
		if len(b) > 0 {
			p.Pin(&b[0])
			pinned = true
		}
	}
	for _, o := range q.PinObjects {
		p.Pin(o)
		pinned = true
	}
	return pinned
}

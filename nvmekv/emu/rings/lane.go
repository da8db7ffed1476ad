package rings

import (
	"syscall"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/uring"
)

// QuickReads is how many reads may be in flight on the quick ring; more go
// to the main ring.
const QuickReads = 4

// setupQuick adds the quick ring for reads while few are in flight. The
// main ring is SINGLE_ISSUER|DEFER_TASKRUN: its owner is locked to one
// thread, so a lone request costs two thread hand-offs (the submitter's
// thread to the owner's, and back for the completion), each tens of µs on
// a VM whose idle vCPUs halt. A plain ring's owner runs on whichever thread
// has its P, usually the submitter's, and hands nothing off. Measured on
// this project's 2-vCPU VM (BenchmarkRetrieve4KQD1, 3 interleaved rounds):
// 55-68 µs per lone 4 KiB Retrieve on the main ring, 33-42 µs on a plain
// one, fio at iodepth 1 ~26 µs; at QD 64 the plain ring gave 0.88x the main
// ring's throughput, which is why the main ring stays. The same buffers are
// registered on both, with the same indices. Without a quick ring (it could
// not be made) every read takes the main ring, as before.
func (r *Rings) setupQuick(o Options) {
	ro := uring.Options{Entries: 64} // ample for the at most QuickReads reads it carries at once
	r.d.Ring(&ro)
	q, err := uring.NewFront(uring.FrontOptions{Ring: ro, StallAfter: o.StallAfter, Logger: o.Logger})
	if err != nil {
		r.log.Warn("rings: no second ring for lone reads; all reads share the main ring", zap.Error(err))
		return
	}
	if r.fixed {
		if err := q.RegisterBuffers(r.bufs); err != nil {
			r.log.Warn("rings: cannot register buffers on the lone-read ring, using unregistered reads there", zap.Error(err))
		} else {
			r.quickFixed = true
		}
	}
	r.quick = q
}

// InFlight is how many reads are in flight on the main ring and on the
// quick ring (the counts Lane decides by).
func (r *Rings) InFlight() (main, quick int) {
	return int(r.mainBusy.Load()), int(r.quickBusy.Load())
}

// Lane is the ring a wave of reads runs on, taken by Rings.Lane and given
// back by Release once every read of the wave completed.
type Lane struct {
	r     *Rings
	n     int
	front *uring.Front // nil on a batch ring
	br    *batchRing
	quick bool
}

// Lane picks the ring for a wave of n reads (E15, E16, E19):
//
//   - with Options.IOPoll, a free polled ring, whatever n;
//   - a wave of at least BatchMin reads, while no read is in flight on the
//     main ring, a free batch ring;
//   - while no read is in flight on the main ring, the quick ring, if the
//     wave keeps it at most QuickReads reads;
//   - else the main ring.
//
// A wave takes the quick ring only while no read is in flight on the main
// ring: under load the two owners would compete for the Ps (an owner
// waiting in io_uring_enter holds its P until sysmon retakes it), and at QD
// 64 that cost more than half the throughput.
func (r *Rings) Lane(n int) Lane {
	if br := r.takeBatch(n); br != nil {
		return Lane{r: r, n: n, br: br}
	}
	if r.quick != nil && r.mainBusy.Load() == 0 {
		if int(r.quickBusy.Add(int32(n))) <= QuickReads {
			return Lane{r: r, n: n, front: r.quick, quick: true}
		}
		r.quickBusy.Add(-int32(n))
	}
	r.mainBusy.Add(int32(n))
	return Lane{r: r, n: n, front: r.main}
}

// Fixed reports whether the registered buffers may be used on this lane.
func (l *Lane) Fixed() bool {
	switch {
	case l.br != nil:
		return l.br.fixed
	case l.quick:
		return l.r.quickFixed
	}
	return l.r.fixed
}

// Quick reports the quick ring (E15), Batch a batch or polled ring (E16,
// E19).
func (l *Lane) Quick() bool { return l.quick }
func (l *Lane) Batch() bool { return l.br != nil }

// Run submits reqs on the lane. Every request's Done runs exactly once: on
// a batch ring before Run returns, on the main or quick ring from its
// owner goroutine; a request that could not be submitted completes with
// -ECANCELED, and Run returns why.
func (l *Lane) Run(reqs []*uring.Request) error {
	if l.br != nil {
		return l.br.ring.RunEach(reqs, l.br.watch)
	}
	err := l.front.Submit(reqs...)
	if err != nil {
		for _, q := range reqs {
			q.Done(uring.Result{Res: -int32(syscall.ECANCELED)})
		}
	}
	return err
}

// Release gives the lane back once every read of its wave completed.
func (l *Lane) Release() {
	switch {
	case l.br != nil:
		l.r.batch <- l.br
	case l.quick:
		l.r.quickBusy.Add(-int32(l.n))
	default:
		l.r.mainBusy.Add(-int32(l.n))
	}
}

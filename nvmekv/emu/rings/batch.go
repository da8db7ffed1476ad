package rings

import (
	"errors"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/uring"
)

// batchRing is a plain ring that a wave of at least BatchMin disk reads
// takes for itself: its caller submits each read with an io_uring_enter of
// its own and waits on the ring on its own thread (uring.Ring.RunEach), so
// neither the reads nor their completions pass through the main ring's
// owner (E16).
type batchRing struct {
	ring  *uring.Ring
	fixed bool // the buffers are registered, at the main ring's indices
	watch uring.RunWatch
}

const (
	// BatchMin is the smallest wave that takes a batch ring. A smaller one
	// (a lone Retrieve from one of many goroutines, a few pipelined GETs)
	// stays on the shared ring, where many callers' reads share an enter
	// and a wake-up: 4 goroutines doing Dos of 16 at once ran no faster
	// with a batch ring taken by whichever found the main ring idle (0.76x
	// fio against 0.80x), nor did the sidecar's 4 connections pipelining
	// 16 cold GETs each.
	BatchMin = 32
	// BatchRings is how many waves may run on batch rings at once (each
	// keeps its caller's thread in io_uring_enter); more go to the main
	// ring.
	BatchRings = 1
	// PollRings is how many polled rings there are with Options.IOPoll,
	// which every wave takes while one is free (E19).
	PollRings = 2
)

// setupBatch makes the batch rings, each with the buffers registered at
// the same indices as on the main ring. Without them (a ring could not be
// made) every wave takes the main ring, as before.
func (r *Rings) setupBatch(o Options) {
	n := BatchRings
	if o.IOPoll {
		n = PollRings
	}
	r.batch = make(chan *batchRing, n)
	for range n {
		ro := uring.Options{Entries: uint32(r.maxWave), IOPoll: o.IOPoll}
		r.d.Ring(&ro)
		ring, err := uring.New(ro)
		if err != nil {
			r.log.Warn("rings: no ring of its own for batches of reads; they share the main ring",
				zap.Bool("iopoll", o.IOPoll), zap.Error(err))
			return
		}
		b := &batchRing{ring: ring}
		if after := r.main.Options().StallAfter; after > 0 {
			b.watch = uring.RunWatch{StallAfter: after, Stalled: func(n int) {
				r.log.Warn("rings: reads on the batch ring stalled in the kernel: none completed for StallAfter (not cancelled; the Retrieve waits)",
					zap.Int("in_flight", n), zap.Duration("stall_after", after), zap.String("path", r.d.Path()))
				r.batchStalled.Add(uint64(n)) // after the warning, as the Front counts
			}}
		}
		if r.fixed {
			if err := ring.RegisterBuffers(r.bufs); err != nil {
				r.log.Warn("rings: cannot register buffers on a batch ring, using unregistered reads there", zap.Error(err))
			} else {
				b.fixed = true
			}
		}
		r.batch <- b
	}
}

// takeBatch returns a free batch ring for a wave of n reads, or nil: the
// wave is small, every batch ring is busy, or reads are in flight on the
// main ring. Batches from several goroutines at once run faster there:
// its owner reaps every completion in one place, while a batch ring's
// completions are task work on its caller's thread, which the kernel must
// wake (4 goroutines each reading 16 at a time: 0.61x fio with batch
// rings, 0.80x without). A polled ring is taken whatever the wave.
func (r *Rings) takeBatch(n int) *batchRing {
	if r.batch == nil || !r.iopoll && (n < BatchMin || r.mainBusy.Load() != 0) {
		return nil
	}
	select {
	case b := <-r.batch:
		return b
	default:
		return nil
	}
}

// closeBatch closes the batch rings (the caller made sure none is taken).
func (r *Rings) closeBatch() error {
	if r.batch == nil {
		return nil
	}
	var errs []error
	for {
		select {
		case b := <-r.batch:
			errs = append(errs, b.ring.Close())
		default:
			return errors.Join(errs...)
		}
	}
}

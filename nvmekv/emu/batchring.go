package emu

import (
	"errors"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/uring"
)

// batchRing is a plain ring that a wave of at least batchMin disk reads
// takes for itself: its caller submits each read with an io_uring_enter of
// its own and waits on the ring on its own thread (uring.Ring.RunEach), so
// neither the reads nor their completions pass through the main ring's
// owner (E16).
type batchRing struct {
	ring  *uring.Ring
	fixed bool // the read slab is registered, at the main ring's index
	watch uring.RunWatch
}

const (
	// batchMin is the smallest wave that takes a batch ring. A smaller one
	// (a lone Retrieve from one of many goroutines, a few pipelined GETs)
	// stays on the shared ring, where many callers' reads share an enter
	// and a wake-up: 4 goroutines doing Dos of 16 at once ran no faster
	// with a batch ring taken by whichever found the main ring idle (0.76x
	// fio against 0.80x), nor did the sidecar's 4 connections pipelining
	// 16 cold GETs each.
	batchMin = 32
	// batchRings is how many waves may run on batch rings at once (each
	// keeps its caller's thread in io_uring_enter); more go to the main
	// ring.
	batchRings = 1
	// pollRings is how many polled rings there are with Options.IOPoll,
	// which every wave takes while one is free (E19).
	pollRings = 2
)

// setupBatch makes the batch rings, each with regs registered at the same
// indices as on the main ring. Without them (a ring could not be made)
// every wave takes the main ring, as before.
func (e *Namespace) setupBatch(regs [][]byte) {
	n := batchRings
	if e.opts.IOPoll {
		n = pollRings
	}
	e.batch = make(chan *batchRing, n)
	for range n {
		o := uring.Options{Entries: uint32(e.wave), IOPoll: e.opts.IOPoll}
		e.disk.Ring(&o)
		r, err := uring.New(o)
		if err != nil {
			e.log.Warn("emu: no ring of its own for batches of reads; they share the main ring",
				zap.Bool("iopoll", e.opts.IOPoll), zap.Error(err))
			return
		}
		b := &batchRing{ring: r}
		if after := e.front.Options().StallAfter; after > 0 {
			b.watch = uring.RunWatch{StallAfter: after, Stalled: func(n int) {
				e.log.Warn("emu: reads on the batch ring stalled in the kernel: none completed for StallAfter (not cancelled; the Retrieve waits)",
					zap.Int("in_flight", n), zap.Duration("stall_after", after), zap.String("path", e.opts.Path))
				e.batchStalled.Add(uint64(n)) // after the warning, as the Front counts
			}}
		}
		if e.fixed {
			if err := r.RegisterBuffers(regs); err != nil {
				e.log.Warn("emu: cannot register buffers on a batch ring, using unregistered reads there", zap.Error(err))
			} else {
				b.fixed = true
			}
		}
		e.batch <- b
	}
}

// takeBatch returns a free batch ring for a wave of n reads, or nil: the
// wave is small, every batch ring is busy, or reads are in flight on the
// main ring. Batches from several goroutines at once run faster there:
// its owner reaps every completion in one place, while a batch ring's
// completions are task work on its caller's thread, which the kernel must
// wake (4 goroutines each reading 16 at a time: 0.61x fio with batch
// rings, 0.80x without).
func (e *Namespace) takeBatch(n int) *batchRing {
	if e.batch == nil || !e.opts.IOPoll && (n < batchMin || e.mainBusy.Load() != 0) {
		return nil
	}
	select {
	case b := <-e.batch:
		return b
	default:
		return nil
	}
}

// closeBatch closes the batch rings (Close holds ioMu, so none is taken).
func (e *Namespace) closeBatch() error {
	if e.batch == nil {
		return nil
	}
	var errs []error
	for {
		select {
		case b := <-e.batch:
			errs = append(errs, b.ring.Close())
		default:
			return errors.Join(errs...)
		}
	}
}

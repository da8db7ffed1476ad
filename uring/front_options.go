package uring

import (
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// FrontOptions configure a Front.
type FrontOptions struct {
	// Ring configures the ring the Front owns. SubmitAll is always set.
	Ring Options
	// Logger gets enter errors; default zap.NewNop().
	Logger *zap.Logger
	// MaxBatch is the most SQEs the owner prepares before entering the
	// kernel; default the SQ size.
	MaxBatch int
	// MaxQueued is how many requests may wait for the owner before Submit
	// blocks (backpressure; Submit from a Done callback never blocks);
	// default 4×the SQ size.
	MaxQueued int
	// CloseGrace is how long Close lets in-flight requests finish before it
	// asks the kernel to cancel all of them (IORING_OP_ASYNC_CANCEL with
	// CANCEL_ANY|CANCEL_ALL; e.g. a read on a pipe nobody writes); default
	// 5 s, -1 = never cancel (Close may then wait forever).
	CloseGrace time.Duration
	// StallAfter is how long a request may be in flight before the Front
	// reports it as stalled: one warning in the log per request and a count
	// in FrontStats.Stalled. Nothing is cancelled. Disk I/O that is still
	// in flight after StallAfter has hit a kernel or device problem (Linux
	// 6.18 can strand work punted to io-wq; see the package doc). Requests
	// that wait on purpose (a read on an idle pipe or socket) want it off.
	// Default 30 s; negative = off.
	StallAfter time.Duration
}

// MinStallAfter is the shortest FrontOptions.StallAfter: the owner looks for
// stalls every StallAfter/4, and a tick much below 1 ms would cost more
// than the check is worth.
const MinStallAfter = 4 * time.Millisecond

// EnsureDefaults fills unset fields with their defaults.
func (o *FrontOptions) EnsureDefaults() {
	o.Ring.EnsureDefaults()
	o.Ring.SubmitAll = true
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.MaxBatch == 0 {
		o.MaxBatch = int(o.Ring.Entries)
	}
	if o.MaxQueued == 0 {
		o.MaxQueued = 4 * int(o.Ring.Entries)
	}
	if o.CloseGrace == 0 {
		o.CloseGrace = 5 * time.Second
	}
	if o.StallAfter == 0 {
		o.StallAfter = 30 * time.Second
	}
}

// stallCheckEvery is how often the owner looks for stalled requests, and
// so how late a stall may be seen: a quarter of StallAfter, at most 1 s.
func (o *FrontOptions) stallCheckEvery() time.Duration {
	return min(o.StallAfter/4, time.Second)
}

// Validate reports every problem at once. Call EnsureDefaults first.
func (o *FrontOptions) Validate() error {
	errs := []error{o.Ring.Validate()}
	if o.MaxBatch < 0 {
		errs = append(errs, fmt.Errorf("%w: MaxBatch %d must not be negative", ErrBadOptions, o.MaxBatch))
	}
	if o.MaxQueued < 0 {
		errs = append(errs, fmt.Errorf("%w: MaxQueued %d must not be negative", ErrBadOptions, o.MaxQueued))
	}
	if o.StallAfter > 0 && o.StallAfter < MinStallAfter {
		errs = append(errs, fmt.Errorf("%w: StallAfter %v must be at least %v, or negative (off)", ErrBadOptions, o.StallAfter, MinStallAfter))
	}
	return errors.Join(errs...)
}

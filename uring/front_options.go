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
}

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
	return errors.Join(errs...)
}

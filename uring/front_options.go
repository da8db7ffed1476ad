package uring

import (
	"errors"
	"fmt"

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

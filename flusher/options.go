package flusher

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// Store is the cold store the flusher writes to. The tier package adapts an
// *nvmekv.KV to it: PutMany sends every item of a batch as its own linked
// chain (chunks, then header) in one submission and sets items[i].Err.
type Store interface {
	PutMany(ctx context.Context, items []*Item) error
	Delete(ctx context.Context, key []byte) error
}

// ManyDeleter is a Store that deletes several keys in one call (few device
// submissions): errs[i] is keys[i]'s outcome, as Delete would return it. A
// batch's deletes then cost one call, not one device round trip each.
type ManyDeleter interface {
	DeleteMany(ctx context.Context, keys [][]byte) []error
}

// Admitter is the flash admission policy (policy.Flash implements it).
type Admitter interface {
	Admit(h uint64, size int) bool
}

// Options configure a Flusher. Zero values take the defaults.
type Options struct {
	Store Store // required

	QueueItems int           // pending items past which the queue is full (default 4096)
	QueueBytes int64         // pending key and value bytes past which it is full (default 64 MiB)
	BatchItems int           // a batch closes at this many items (default 64)
	BatchBytes int64         // ... or at this many value bytes (default 4 MiB)
	BatchDelay time.Duration // ... or when its oldest item waited this long (default 2 ms)
	InFlight   int           // batches submitted and not yet completed at once (default 8)

	// Admit filters puts at Enqueue (nil admits all). Sync items bypass it.
	Admit Admitter
	// Hash returns the admission hash of a key (default: FNV-1a 64).
	Hash func(key []byte) uint64
	// Current is asked just before submission whether a put is still the
	// newest copy of its key; false skips it (counted as Superseded). It
	// may update the item's Expiry, which is written as it then is. nil
	// submits everything.
	Current func(it *Item) bool
	// OnDone is called once per submitted item after its completion (err nil
	// on success), on a flusher goroutine; it must not block.
	OnDone func(it *Item, err error)
	// OnDrop is called once per item that was dropped (queue full) or
	// skipped as superseded, on a flusher goroutine (never inside Enqueue);
	// it must not block.
	OnDrop func(it *Item, why Reason)
	// OnRelease, if set, is called once per item Enqueue accepted, after
	// its OnDone or OnDrop, once the flusher no longer touches the item:
	// the caller may reuse it (a pool of items). It is not called for an
	// item whose Begin or Wait someone awaits. It must not block.
	OnRelease func(it *Item)

	// Overload is what a full queue does with a put: Backpressure (the
	// default) queues it anyway and drops nothing, its writers waiting for
	// room (WaitRoom, at most Wait each); Shed drops the oldest droppable
	// put (F2).
	Overload Overload
	// Wait is the longest a writer waits for room in Backpressure mode
	// before its write is refused (the caller's to enforce; default 2 s).
	Wait time.Duration

	// Weights gives each class of items (ClassOf their key: a tenant) a weighted
	// share of the flusher (F14): of each batch's items while other classes
	// have items pending, and of the queue, whose drops take the class
	// furthest over its share. A class at or past len(Weights), or weighted
	// 0, weighs 1. nil: one FIFO, classes ignored.
	Weights []int
	// ClassOf is a key's class (nil: 0 for every key). Every item of one
	// key is of its class, so a share never reorders one key's writes (F3).
	ClassOf func(key []byte) uint8

	// Timeout bounds one batch's device round trip (default 30 s).
	Timeout time.Duration
	Logger  *zap.Logger
}

// Overload is what a full queue does with a put.
type Overload uint8

// Overload modes.
const (
	// Backpressure queues past the bounds and never drops: the writers
	// wait for room before they write (WaitRoom), so the queue stays near
	// its bounds, and a writer that waited Wait gets an error instead.
	Backpressure Overload = iota
	// Shed drops the oldest droppable put (counted, OnDrop): latency
	// over completeness.
	Shed
)

func (m Overload) String() string {
	switch m {
	case Backpressure:
		return "backpressure"
	case Shed:
		return "shed"
	}
	return fmt.Sprintf("Overload(%d)", uint8(m))
}

// ParseOverload reads "backpressure" or "shed".
func ParseOverload(s string) (Overload, error) {
	switch s {
	case "backpressure":
		return Backpressure, nil
	case "shed":
		return Shed, nil
	}
	return 0, fmt.Errorf("%w: overload %q is not backpressure or shed", ErrInvalidOptions, s)
}

// Reason says why an item never reached the store.
type Reason uint8

// Reasons for OnDrop.
const (
	Dropped    Reason = iota + 1 // the queue was full and this was the oldest droppable item (Shed)
	Superseded                   // Current said a newer copy exists
)

func (r Reason) String() string {
	switch r {
	case Dropped:
		return "dropped"
	case Superseded:
		return "superseded"
	}
	return "unknown"
}

// EnsureDefaults fills zero fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.QueueItems == 0 {
		o.QueueItems = 4096
	}
	if o.QueueBytes == 0 {
		o.QueueBytes = 64 << 20
	}
	if o.BatchItems == 0 {
		o.BatchItems = 64
	}
	if o.BatchBytes == 0 {
		o.BatchBytes = 4 << 20
	}
	if o.BatchDelay == 0 {
		o.BatchDelay = 2 * time.Millisecond
	}
	if o.InFlight == 0 {
		o.InFlight = 8
	}
	if o.Hash == nil {
		o.Hash = fnv64
	}
	if o.Timeout == 0 {
		o.Timeout = 30 * time.Second
	}
	if o.Wait == 0 {
		o.Wait = 2 * time.Second
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
}

// Validate reports every invalid field at once.
func (o *Options) Validate() error {
	var errs []error
	if o.Store == nil {
		errs = append(errs, fmt.Errorf("%w: Store is required", ErrInvalidOptions))
	}
	return errors.Join(append(errs, o.ValidateTuning())...)
}

// ValidateTuning reports every invalid field a configuration sets (all
// but Store), so that a caller can refuse its configuration before it
// opens anything (F15).
func (o *Options) ValidateTuning() error {
	var errs []error
	if o.QueueItems < 1 {
		errs = append(errs, fmt.Errorf("%w: QueueItems %d must be positive", ErrInvalidOptions, o.QueueItems))
	}
	if o.QueueBytes < 1 {
		errs = append(errs, fmt.Errorf("%w: QueueBytes %d must be positive", ErrInvalidOptions, o.QueueBytes))
	}
	if o.BatchItems < 1 || o.BatchItems > 4096 {
		errs = append(errs, fmt.Errorf("%w: BatchItems %d is outside [1, 4096]", ErrInvalidOptions, o.BatchItems))
	}
	if o.BatchBytes < 1 {
		errs = append(errs, fmt.Errorf("%w: BatchBytes %d must be positive", ErrInvalidOptions, o.BatchBytes))
	}
	if o.BatchDelay < 0 {
		errs = append(errs, fmt.Errorf("%w: BatchDelay %v must not be negative", ErrInvalidOptions, o.BatchDelay))
	}
	if o.InFlight < 1 || o.InFlight > 64 {
		errs = append(errs, fmt.Errorf("%w: InFlight %d is outside [1, 64]", ErrInvalidOptions, o.InFlight))
	}
	if o.Overload > Shed {
		errs = append(errs, fmt.Errorf("%w: Overload %v is not Backpressure or Shed", ErrInvalidOptions, o.Overload))
	}
	if o.Wait < 0 {
		errs = append(errs, fmt.Errorf("%w: Wait %v must not be negative", ErrInvalidOptions, o.Wait))
	}
	if len(o.Weights) > maxClasses {
		errs = append(errs, fmt.Errorf("%w: %d Weights, at most %d classes", ErrInvalidOptions, len(o.Weights), maxClasses))
	}
	for i, w := range o.Weights {
		if w < 0 || w > maxWeight {
			errs = append(errs, fmt.Errorf("%w: Weights[%d] %d is outside [0, %d]", ErrInvalidOptions, i, w, maxWeight))
		}
	}
	if o.Timeout < 0 {
		errs = append(errs, fmt.Errorf("%w: Timeout %v must not be negative", ErrInvalidOptions, o.Timeout))
	}
	return errors.Join(errs...)
}

func fnv64(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

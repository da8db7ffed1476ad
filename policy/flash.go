package policy

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// FlashOptions configure a Flash admission policy.
type FlashOptions struct {
	// BytesPerSec is the sustained flash write budget in bytes per second;
	// 0 means unlimited. Like CacheLib's dynamic random admission, the budget
	// protects device endurance: writes beyond it are rejected, not delayed.
	BytesPerSec int64
	// Burst in bytes the bucket may hold (default: one second of budget, at
	// least 8 MiB).
	Burst int64
	// RejectFirst rejects an item the first time it is offered and admits it
	// the next time (a doorkeeper), so a key evicted once is not written.
	RejectFirst bool
	// Counters sizes the RejectFirst doorkeeper (default 1<<20).
	Counters int
	// Clock returns unix nanoseconds (test seam; default time.Now).
	Clock func() int64
}

// EnsureDefaults fills zero fields with their defaults.
func (o *FlashOptions) EnsureDefaults() {
	if o.Burst == 0 && o.BytesPerSec > 0 {
		o.Burst = max(o.BytesPerSec, 8<<20)
	}
	if o.Counters == 0 {
		o.Counters = 1 << 20
	}
	if o.Clock == nil {
		o.Clock = func() int64 { return time.Now().UnixNano() }
	}
}

// Validate reports every invalid field at once.
func (o *FlashOptions) Validate() error {
	var errs []error
	if o.BytesPerSec < 0 {
		errs = append(errs, fmt.Errorf("%w: BytesPerSec %d must not be negative", ErrInvalidOptions, o.BytesPerSec))
	}
	if o.Burst < 0 {
		errs = append(errs, fmt.Errorf("%w: Burst %d must not be negative", ErrInvalidOptions, o.Burst))
	}
	if o.Counters < 16 {
		errs = append(errs, fmt.Errorf("%w: Counters %d must be at least 16", ErrInvalidOptions, o.Counters))
	}
	return errors.Join(errs...)
}

// Flash decides which warm evictions are written to flash: a token bucket of
// BytesPerSec plus optional reject-on-first-sight. Safe for concurrent use.
// It satisfies flusher.Admitter.
type Flash struct {
	o      FlashOptions
	mu     sync.Mutex
	tokens float64
	last   int64
	door   *doorkeeper
	seen   atomic.Int64 // offers since the doorkeeper was last cleared
}

// NewFlash builds a Flash admission policy.
func NewFlash(o FlashOptions) (*Flash, error) {
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	f := &Flash{o: o, tokens: float64(o.Burst), last: o.Clock()}
	if o.RejectFirst {
		f.door = newDoorkeeper(o.Counters)
	}
	return f, nil
}

// Admit reports whether an item of size bytes with key hash h may be written
// now; an admitted item consumes size bytes of budget.
func (f *Flash) Admit(h uint64, size int) bool {
	if f.door != nil {
		if f.seen.Add(1)%int64(f.o.Counters) == 0 {
			f.door.clear() // age it: after Counters offers it would admit everything
		}
		if !f.door.testAndSet(h) {
			return false
		}
	}
	if f.o.BytesPerSec == 0 {
		return true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.o.Clock()
	if now > f.last {
		f.tokens += float64(now-f.last) * float64(f.o.BytesPerSec) / 1e9
		if f.tokens > float64(f.o.Burst) {
			f.tokens = float64(f.o.Burst)
		}
		f.last = now
	}
	if f.tokens < float64(size) {
		return false
	}
	f.tokens -= float64(size)
	return true
}

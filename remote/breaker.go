package remote

import (
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// breaker is the remote tier's circuit breaker (R5): closed, it lets every
// call through and opens after `failures` round trips in a row failed;
// open, it lets none through for its backoff; then half-open, it still
// lets none through until the health loop's probe (a PING of every node)
// succeeds, which closes it, or fails, which opens it again for twice as
// long, up to maxBackoff. It logs once per change of state.
type breaker struct {
	failures int
	base     time.Duration
	log      *zap.Logger

	mu      sync.Mutex
	st      int // closed, open, halfOpen
	run     int // failures in a row
	backoff time.Duration
	until   time.Time

	closedFast atomic.Bool // st == closed, read without the lock
	opens      atomic.Uint64
}

const (
	closed = iota
	open
	halfOpen
)

func (b *breaker) init(failures int, base time.Duration, log *zap.Logger) {
	b.failures, b.base, b.log, b.backoff = failures, base, log, base
	b.closedFast.Store(true)
}

// allow reports whether a call may make a round trip now.
func (b *breaker) allow() bool {
	if b.closedFast.Load() {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.st == open && !time.Now().Before(b.until) {
		b.st = halfOpen
	}
	return b.st == closed
}

// probing reports whether the health loop's probe is due (half-open, or
// open past its backoff).
func (b *breaker) probing() bool {
	if b.closedFast.Load() {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.st == open && !time.Now().Before(b.until) {
		b.st = halfOpen
	}
	return b.st == halfOpen
}

func (b *breaker) success() {
	if b.closedFast.Load() {
		b.mu.Lock()
		b.run = 0
		b.mu.Unlock()
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.st == closed {
		b.run = 0
		return
	}
	b.st, b.run, b.backoff = closed, 0, b.base
	b.closedFast.Store(true)
	b.log.Info("remote tier available again: breaker closed")
}

func (b *breaker) failure(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.st {
	case closed:
		if b.run++; b.run < b.failures {
			return
		}
		b.backoff = b.base
	case halfOpen:
		b.backoff = min(2*b.backoff, maxBackoff)
	case open:
		return
	}
	b.openLocked(err)
}

// open opens the breaker now (a store that could not connect at start).
func (b *breaker) open(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.st != open {
		b.openLocked(err)
	}
}

func (b *breaker) openLocked(err error) {
	was := b.st
	b.st, b.run, b.until = open, 0, time.Now().Add(b.backoff)
	b.closedFast.Store(false)
	b.opens.Add(1)
	if was == closed {
		b.log.Warn("remote tier unavailable: breaker open, serving the local tiers", zap.Duration("retry_in", b.backoff), zap.Error(err))
	}
}

func (b *breaker) state() string {
	if b.closedFast.Load() {
		return "closed"
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.st {
	case open:
		if !time.Now().Before(b.until) {
			return "half-open"
		}
		return "open"
	case halfOpen:
		return "half-open"
	}
	return "closed"
}

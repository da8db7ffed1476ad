package main

import (
	"math"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/tier"
)

// memLimitEvery is how often the Go memory limit follows the directory's
// growth.
const memLimitEvery = time.Second

// memLimiter sets the process's Go memory limit (runtime/debug
// SetMemoryLimit, what GOMEMLIMIT sets) to the sum of the heap budgets of
// the caches running in the process (one in the sidecar; tests run
// several), so that the collector keeps the heap near what the tiers hold
// instead of letting it grow to twice that (GOGC=100). A GOMEMLIMIT from
// the environment is left as it is.
type memLimiter struct {
	mu      sync.Mutex
	caches  map[*tier.Cache]int64 // the budget last read from each
	set     int64                 // the limit in force, 0 = none set by us
	stop    chan struct{}
	stopped chan struct{}
}

var procMemLimit = &memLimiter{caches: map[*tier.Cache]int64{}}

// userMemLimit reports whether the environment sets GOMEMLIMIT.
func userMemLimit() bool { return os.Getenv("GOMEMLIMIT") != "" }

// add starts following c's budget and logs the limit set.
func (l *memLimiter) add(c *tier.Cache, log *zap.Logger) {
	if userMemLimit() {
		log.Info("memory: GOMEMLIMIT is set in the environment; the Go memory limit is left as it says",
			zap.String("GOMEMLIMIT", os.Getenv("GOMEMLIMIT")))
		return
	}
	m := c.Memory()
	l.mu.Lock()
	l.caches[c] = m.HeapBudget
	limit := l.applyLocked()
	if l.stop == nil {
		l.stop, l.stopped = make(chan struct{}), make(chan struct{})
		go l.follow(l.stop, l.stopped)
	}
	l.mu.Unlock()
	log.Info("memory: Go memory limit set from the configuration",
		zap.Int64("limit_bytes", limit), zap.Int64("hot_bytes", m.HotBytes),
		zap.Int64("directory_bytes", m.DirectoryBytes), zap.Int64("flusher_bytes", m.FlusherBytes),
		zap.Int64("warm_bytes_off_heap", m.WarmBytes), zap.Int("directory_bytes_per_key", tier.DirEntryBytes))
}

// remove stops following c; with no cache left the limit is lifted.
func (l *memLimiter) remove(c *tier.Cache) {
	l.mu.Lock()
	if _, ok := l.caches[c]; !ok {
		l.mu.Unlock()
		return
	}
	delete(l.caches, c)
	var stop, stopped chan struct{}
	if len(l.caches) == 0 {
		stop, stopped = l.stop, l.stopped
		l.stop, l.stopped = nil, nil
	}
	l.applyLocked()
	l.mu.Unlock()
	if stop != nil {
		close(stop)
		<-stopped
	}
}

// applyLocked sets the limit to the sum of the budgets (none: no limit).
func (l *memLimiter) applyLocked() int64 {
	var sum int64
	for _, b := range l.caches {
		sum += b
	}
	if sum == 0 {
		sum = math.MaxInt64
	}
	if sum != l.set {
		debug.SetMemoryLimit(sum)
		l.set = sum
	}
	return sum
}

// follow re-reads every budget each memLimitEvery: the directory grows
// with the keys.
func (l *memLimiter) follow(stop, stopped chan struct{}) {
	defer close(stopped)
	t := time.NewTicker(memLimitEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		l.mu.Lock()
		for c := range l.caches {
			l.caches[c] = c.Memory().HeapBudget
		}
		l.applyLocked()
		l.mu.Unlock()
	}
}

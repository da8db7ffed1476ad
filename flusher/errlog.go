package flusher

import (
	"sync"
	"time"

	"go.uber.org/zap"
)

// errLogEvery is the least time between two logged cold-write failures.
// A full or failed device fails every write: one line per item would flood
// the log (thousands per second) without saying more than the first.
const errLogEvery = 10 * time.Second

// errLog rate-limits the flusher's cold-write failure warnings: the first
// failure is logged at once, later ones at most every errLogEvery, each
// line with how many failed since the line before (F6).
type errLog struct {
	mu         sync.Mutex
	last       time.Time // when a line was last logged
	suppressed int       // failures since then, not logged
}

// failed records one failed item and logs it if the interval allows.
func (l *errLog) failed(log *zap.Logger, it *Item, now time.Time) {
	l.mu.Lock()
	if !l.last.IsZero() && now.Sub(l.last) < errLogEvery {
		l.suppressed++
		l.mu.Unlock()
		return
	}
	n := l.suppressed
	l.last, l.suppressed = now, 0
	l.mu.Unlock()
	log.Warn("flusher: cold write failed", zap.Int("key_bytes", len(it.Key)), zap.Int("value_bytes", len(it.Value)),
		zap.Bool("delete", it.Delete), zap.Int("failed_since_last_report", n), zap.Duration("report_every", errLogEvery),
		zap.Error(it.Err))
}

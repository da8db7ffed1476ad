package main

import (
	"math"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/nvmekv/emu"
	"github.com/tiercache/tiercache/server"
)

// loadReport follows the opening of the cache: the cold store's recovery
// reports (coldstore.Config.Progress) feed INFO's loading fields
// (progress) and a log line every second until the open ends (C9).
type loadReport struct {
	log   *zap.Logger
	start time.Time

	mu   sync.Mutex
	last emu.Progress // the latest report; Method "" until the first

	stop, done chan struct{}
}

// loadLogEvery is how often the log says how far the open got.
const loadLogEvery = time.Second

// newLoadReport starts the log's ticker; end stops it.
func newLoadReport(log *zap.Logger) *loadReport {
	l := &loadReport{log: log, start: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	go l.logEvery(loadLogEvery)
	return l
}

// report is coldstore.Config.Progress: called on the opening goroutine
// once per region scanned or 4096 checkpoint entries, never per record.
func (l *loadReport) report(p emu.Progress) {
	l.mu.Lock()
	l.last = p
	l.mu.Unlock()
}

func (l *loadReport) latest() emu.Progress {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

// progress is server.NewLoading's progress, for INFO.
func (l *loadReport) progress() server.LoadProgress {
	p := l.latest()
	return server.LoadProgress{Method: p.Method, LoadedBytes: p.Done, TotalBytes: p.Total, Keys: int64(p.Keys)}
}

// fields are a log line's progress fields.
func (l *loadReport) fields(p emu.Progress) []zap.Field {
	method := p.Method
	if method == "" {
		method = "none" // no store to recover, or not begun yet
	}
	return []zap.Field{zap.String("method", method), zap.Float64("percent", percent(p)),
		zap.Int("keys", p.Keys), zap.Duration("elapsed", time.Since(l.start).Round(time.Millisecond))}
}

// percent is p's percentage to a tenth, as the log prints it; 0 before
// any report.
func percent(p emu.Progress) float64 {
	if p.Method == "" {
		return 0
	}
	return math.Round(p.Percent()*10) / 10
}

func (l *loadReport) logEvery(d time.Duration) {
	defer close(l.done)
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			l.log.Info("loading: opening the cache", l.fields(l.latest())...)
		}
	}
}

// end stops the ticker and, when the open succeeded, logs how long it took
// and how the cold store's index was rebuilt (checkpoint, scan, fresh, or
// none without an emulated store).
func (l *loadReport) end(err error) {
	close(l.stop)
	<-l.done
	if err == nil {
		l.log.Info("loading: cache open", l.fields(l.latest())...)
	}
}

package main

import (
	"fmt"
	"math"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/nvmekv/emu"
	"github.com/tiercache/tiercache/server"
)

// loadReport follows the opening of the cache (or of kvtarget's store):
// the cold store's recovery reports (coldstore.Config.Progress,
// emu.Options.Progress) feed INFO's loading fields (progress) and, until
// the open ends, a log line every second, or on a terminal a status line
// that updates in place (C9, C14), and the service manager's STATUS=
// (C13).
type loadReport struct {
	log   *zap.Logger
	noun  string // what opens: "cache" or "store"
	start time.Time
	out   progressOut

	mu       sync.Mutex
	last     emu.Progress // the latest report; Method "" until the first
	notified emu.Progress // the last one the manager was told of

	stop, done chan struct{}
}

// progressOut is where a long open shows its progress besides the log.
type progressOut struct {
	tty    *termLine // stderr's status line; nil off a terminal
	notify *notifier // sd_notify; nil without a service manager
}

// loadLogEvery is how often the log says how far the open got.
const loadLogEvery = time.Second

// newLoadReport starts the ticker; end stops it.
func newLoadReport(log *zap.Logger, noun string, out progressOut) *loadReport {
	l := &loadReport{log: log, noun: noun, start: time.Now(), out: out, stop: make(chan struct{}), done: make(chan struct{})}
	go l.logEvery(loadLogEvery)
	return l
}

// report is coldstore.Config.Progress: called on the opening goroutine
// once per region scanned or 4096 checkpoint entries, never per record.
func (l *loadReport) report(p emu.Progress) {
	l.mu.Lock()
	first := l.last.Method == ""
	l.last = p
	l.mu.Unlock()
	l.out.tty.set(l.text(p), first)
}

// text is the status line: "loading: opening the cache: 42.0% (scan),
// 1234 keys, 3.2s".
func (l *loadReport) text(p emu.Progress) string {
	method := p.Method
	if method == "" {
		method = "starting"
	}
	return fmt.Sprintf("loading: opening the %s: %.1f%% (%s), %d keys, %v", l.noun, percent(p), method, p.Keys,
		time.Since(l.start).Round(100*time.Millisecond))
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
			p := l.latest()
			if l.out.tty != nil {
				l.out.tty.set(l.text(p), true)
			} else {
				l.log.Info("loading: opening the "+l.noun, l.fields(p)...)
			}
			l.mu.Lock()
			advanced := p != l.notified
			l.notified = p
			l.mu.Unlock()
			l.out.notify.loading(l.text(p), advanced)
		}
	}
}

// end stops the ticker and, when the open succeeded, logs how long it took
// and how the cold store's index was rebuilt (checkpoint, scan, fresh, or
// none without an emulated store).
func (l *loadReport) end(err error) {
	close(l.stop)
	<-l.done
	l.out.tty.clear()
	if err == nil {
		l.log.Info("loading: "+l.noun+" open", l.fields(l.latest())...)
	}
}

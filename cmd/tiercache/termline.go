package main

import (
	"io"
	"os"
	"sync"
	"time"

	"go.uber.org/zap"
)

// termLine is stderr when it is a terminal: log lines go through it, and
// below them one status line (how far a long open got) is rewritten in
// place, as a terminal user expects of a progress display. Before each log
// line the status line is erased and after it drawn again, so the two
// never mix (C14). Off a terminal there is no termLine: progress is a log
// line a second.
type termLine struct {
	mu     sync.Mutex
	f      *os.File
	status string    // "" when none is shown
	drawn  time.Time // when the status was last drawn
}

// eraseLine is "\r" and Erase in Line to its end (ECMA-48 EL, CSI K).
const eraseLine = "\r\x1b[K"

// statusEvery is how often a status line may be redrawn for a report.
const statusEvery = 100 * time.Millisecond

// newTermLine returns a termLine when w is a terminal and the log is in
// console format there (logging.format auto or console); nil otherwise.
func newTermLine(w io.Writer, format string) *termLine {
	f, ok := w.(*os.File)
	if !ok || format == "json" || !isTerminal(f) {
		return nil
	}
	return &termLine{f: f}
}

// newTermLogger is newLogger on stderr, through a termLine when stderr is
// a terminal (returned, nil otherwise) so that progress can show there.
func newTermLogger(cfg LoggingConfig, stderr io.Writer) (*zap.Logger, *termLine) {
	tty := newTermLine(stderr, cfg.Format)
	if tty == nil {
		return newLogger(cfg, stderr), nil
	}
	return newLogger(cfg, tty), tty
}

// Fd lets newLogger see the terminal behind the termLine.
func (t *termLine) Fd() uintptr { return t.f.Fd() }

// Write writes a log line above the status line.
func (t *termLine) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status != "" {
		io.WriteString(t.f, eraseLine)
	}
	n, err := t.f.Write(p)
	if t.status != "" {
		io.WriteString(t.f, t.status)
	}
	return n, err
}

// set shows s as the status line, at most once per statusEvery unless
// now is set (a tick, or the first report).
func (t *termLine) set(s string, now bool) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !now && t.status != "" && time.Since(t.drawn) < statusEvery {
		return
	}
	if w := terminalWidth(t.f); w > 1 && len(s) >= w {
		s = s[:w-1] // a wrapped line cannot be rewritten with \r
	}
	t.status, t.drawn = s, time.Now()
	io.WriteString(t.f, eraseLine+s)
}

// clear erases the status line.
func (t *termLine) clear() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status != "" {
		io.WriteString(t.f, eraseLine)
		t.status = ""
	}
}

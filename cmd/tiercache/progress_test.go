package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tiercache/tiercache/nvmekv/emu"
	"github.com/tiercache/tiercache/tier"
)

// openPty opens a pseudo-terminal pair (pty(7): /dev/ptmx, unlock, then
// /dev/pts/N) and drains the master side into a buffer; out returns what
// the slave side was written so far.
func openPty(t *testing.T) (slave *os.File, out func() string) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		skipOrFail(t, "no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	unix.IoctlSetWinsize(int(s.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 200})
	var mu sync.Mutex
	var buf bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		b := make([]byte, 4096)
		for {
			k, err := m.Read(b)
			mu.Lock()
			buf.Write(b[:k])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { s.Close(); m.Close(); <-done })
	return s, func() string { mu.Lock(); defer mu.Unlock(); return buf.String() }
}

// reportingOpen is an open that reports three steps of a scan, a little
// apart, then waits for hold before opening the cache.
func reportingOpen(hold time.Duration) openFunc {
	return func(o tier.Options, progress func(emu.Progress)) (*tier.Cache, error) {
		for i := int64(1); i <= 3; i++ {
			progress(emu.Progress{Method: "scan", Done: i, Total: 4, Keys: int(i) * 1000})
			time.Sleep(hold / 3)
		}
		return tier.Open(o)
	}
}

// TestProgressOnTerminal (C14): with stderr on a terminal the open's
// progress is one line rewritten in place (carriage return, erase to the
// end of the line), not a log line a second; it is erased before the log
// line that says the cache is open.
func TestProgressOnTerminal(t *testing.T) {
	slave, out := openPty(t)
	log, tty := newTermLogger(LoggingConfig{Level: "info", Format: "auto"}, slave)
	if tty == nil {
		t.Fatal("no status line on a terminal")
	}
	cfg := testConfig(t, t.TempDir())
	sc, err := startSidecarWith(cfg, log, startEnv{out: progressOut{tty: tty}, open: reportingOpen(1500 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	time.Sleep(100 * time.Millisecond) // let the master side drain
	got := out()
	// The first report is drawn at once, later ones at most every
	// statusEvery and at each tick.
	for _, want := range []string{eraseLine + "loading: opening the cache: 25.0% (scan), 1000 keys, ",
		eraseLine + "loading: opening the cache: 50.0% (scan), 2000 keys, ", "loading: cache open"} {
		if !strings.Contains(got, want) {
			t.Errorf("terminal output lacks %q:\n%q", want, got)
		}
	}
	if strings.Contains(got, "loading: opening the cache\t") {
		t.Errorf("a progress log line on a terminal (the status line replaces it):\n%q", got)
	}
	if i, j := strings.LastIndex(got, eraseLine), strings.Index(got, "loading: cache open"); i < 0 || j < i ||
		strings.Contains(got[i:j], "% (scan)") {
		t.Errorf("the status line is not erased before the cache-open line:\n%q", got)
	}
	t.Logf("%q", got)
}

// TestProgressOffTerminal (C14): off a terminal there is no status line:
// the log says every second how far the open got, without terminal
// control characters.
func TestProgressOffTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	log, tty := newTermLogger(LoggingConfig{Level: "info", Format: "auto"}, f)
	if tty != nil {
		t.Fatal("a status line on a regular file")
	}
	cfg := testConfig(t, t.TempDir())
	sc, err := startSidecarWith(cfg, log, startEnv{open: reportingOpen(1500 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	b, _ := os.ReadFile(f.Name())
	got := string(b)
	if !strings.Contains(got, `"msg":"loading: opening the cache","method":"scan"`) || !strings.Contains(got, `"msg":"loading: cache open"`) {
		t.Errorf("log lacks the progress and open lines:\n%s", got)
	}
	if strings.ContainsAny(got, "\r\x1b") {
		t.Errorf("terminal control characters off a terminal:\n%q", got)
	}
}

// TestKVTargetProgress (C14): kvtarget opening its store shows the open
// as a status line on a terminal, and as log lines off one.
func TestKVTargetProgress(t *testing.T) {
	store := t.TempDir() + "/kv.img"
	for _, onTTY := range []bool{true, false} {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), serveEnv+"=kvtarget -listen 127.0.0.1:0 -capacity 64MiB -store "+store)
		var out func() string
		stdout, err := os.CreateTemp(t.TempDir(), "stdout")
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout = stdout
		if onTTY {
			var slave *os.File
			slave, out = openPty(t)
			cmd.Stderr = slave
		} else {
			cmd.Stderr = stdout
			out = func() string { b, _ := os.ReadFile(stdout.Name()); return string(b) }
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if b, _ := os.ReadFile(stdout.Name()); strings.Contains(string(b), "tiercache kvtarget: serving") {
				break
			}
		}
		cmd.Process.Signal(os.Interrupt)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("tty %v: %v\n%s", onTTY, err, out())
		}
		time.Sleep(100 * time.Millisecond)
		got := out()
		if onTTY && (!strings.Contains(got, eraseLine+"loading: opening the store: ") || !strings.Contains(got, "loading: store open")) {
			t.Errorf("on a terminal: no status line and open line:\n%q", got)
		}
		if !onTTY && (!strings.Contains(got, `"msg":"loading: store open"`) || strings.ContainsAny(got, "\r\x1b")) {
			t.Errorf("off a terminal: want the JSON open line and no control characters:\n%q", got)
		}
	}
}

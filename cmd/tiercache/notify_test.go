package main

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tiercache/tiercache/nvmekv/emu"
	"github.com/tiercache/tiercache/tier"
)

// notifyListener is a service manager's notify socket: a unixgram socket
// the test reads datagrams from.
type notifyListener struct {
	path string
	msgs chan string
}

func listenNotify(t *testing.T) *notifyListener {
	t.Helper()
	path := shortSocket(t)
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	n := &notifyListener{path: path, msgs: make(chan string, 64)}
	go func() {
		buf := make([]byte, 4096)
		for {
			k, err := c.Read(buf)
			if err != nil {
				close(n.msgs)
				return
			}
			n.msgs <- string(buf[:k])
		}
	}()
	return n
}

// next returns the next datagram, failing after d.
func (n *notifyListener) next(t *testing.T, d time.Duration, what string) string {
	t.Helper()
	select {
	case m := <-n.msgs:
		return m
	case <-time.After(d):
		t.Fatalf("no notify message (%s) within %v", what, d)
		return ""
	}
}

// TestNotifyReadyOnceLoaded (C13): a serving process under a real notify
// socket sends READY=1 with the start line as STATUS= only once its cache
// is open, so `probe ready` passes the moment READY=1 arrives; SIGTERM
// sends STOPPING=1 before the shutdown, and the exit is 0.
func TestNotifyReadyOnceLoaded(t *testing.T) {
	n := listenNotify(t)
	sock := shortSocket(t)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), serveEnv+"=serve -socket "+sock+" -metrics off -log-level warn -data "+t.TempDir(),
		"NOTIFY_SOCKET="+n.path)
	p := spawn(t, cmd)
	var ready string
	for ready == "" {
		m := n.next(t, 30*time.Second, "READY=1")
		if strings.Contains(m, "READY=1") {
			ready = m
		}
	}
	cfg := defaultConfig()
	cfg.Server.Socket = sock
	if msg, err := probe(&cfg, "ready", 5*time.Second); err != nil {
		t.Errorf("probe ready right after READY=1: %v", err)
	} else {
		t.Logf("%q, then %s", ready, msg)
	}
	if !strings.Contains(ready, "STATUS=tiercache ") || !strings.Contains(ready, "serving unix:"+sock) {
		t.Errorf("READY=1 without the start line as STATUS=: %q", ready)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	m := n.next(t, 30*time.Second, "STOPPING=1")
	if !strings.HasPrefix(m, "STOPPING=1\nSTATUS=shutting down") {
		t.Errorf("after SIGTERM: %q, want STOPPING=1 and a STATUS=", m)
	}
	if code := p.exitOf(t); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
}

// TestNotifyWhileLoading (C13): while the open is held the manager gets
// a STATUS= a second with the open's progress, EXTEND_TIMEOUT_USEC= only
// when the progress moved since the last one, and no READY=1.
func TestNotifyWhileLoading(t *testing.T) {
	n := listenNotify(t)
	note, err := dialNotify(n.path)
	if err != nil {
		t.Fatal(err)
	}
	defer note.close()
	cfg := testConfig(t, t.TempDir())
	opening, release := make(chan struct{}), make(chan struct{})
	open := func(o tier.Options, progress func(emu.Progress)) (*tier.Cache, error) {
		progress(emu.Progress{Method: "scan", Done: 50, Total: 100, Keys: 10})
		close(opening)
		<-release
		return tier.Open(o)
	}
	res := make(chan started, 1)
	go func() {
		sc, err := startSidecarWith(cfg, nopLogger(), startEnv{out: progressOut{notify: note}, open: open})
		res <- started{sc, err}
	}()
	waitFor(t, "the open to begin", opening)
	first := n.next(t, 10*time.Second, "the first STATUS=")
	second := n.next(t, 10*time.Second, "the second STATUS=")
	close(release)
	r := <-res
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.sc.Close()
	if !strings.HasPrefix(first, "STATUS=loading: opening the cache: 50.0% (scan), 10 keys, ") ||
		!strings.HasSuffix(first, "\nEXTEND_TIMEOUT_USEC=30000000") {
		t.Errorf("first message while loading: %q, want the progress and EXTEND_TIMEOUT_USEC=30000000", first)
	}
	if !strings.HasPrefix(second, "STATUS=loading: opening the cache: 50.0% (scan)") || strings.Contains(second, "EXTEND") {
		t.Errorf("second message, no progress since: %q, want a STATUS= without EXTEND_TIMEOUT_USEC", second)
	}
	for _, m := range []string{first, second} {
		if strings.Contains(m, "READY=1") {
			t.Errorf("READY=1 while loading: %q", m)
		}
	}
}

// TestNotifySocketBad (C13): a NOTIFY_SOCKET tiercache cannot send to is
// an error naming it.
func TestNotifySocketBad(t *testing.T) {
	for _, addr := range []string{"vsock:2:9999", "/nonexistent/notify.sock", "relative.sock"} {
		if _, err := dialNotify(addr); err == nil || !errors.Is(err, errNotify) || !strings.Contains(err.Error(), addr) {
			t.Errorf("NOTIFY_SOCKET=%s: %v, want errNotify naming it", addr, err)
		}
	}
	if n, err := dialNotify(""); n != nil || err != nil {
		t.Errorf("no NOTIFY_SOCKET: %v %v, want nothing", n, err)
	}
	var none *notifier
	none.ready("x") // a nil notifier sends nothing
	none.close()
}

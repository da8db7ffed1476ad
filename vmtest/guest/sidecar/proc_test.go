package sidecar

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tiercache/tiercache/cmd/tiercache/crashloop"
)

// syncBuffer collects a child's output for the failure report.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// proc is a running tiercache sidecar.
type proc struct {
	t       *testing.T
	cmd     *exec.Cmd
	out     *syncBuffer
	socket  string
	done    chan struct{} // closed when the process has exited
	waitErr error         // valid after done
}

// binary is the tiercache executable the host packed into the guest.
func binary(t *testing.T) string {
	t.Helper()
	p := os.Getenv("TIERCACHE_BIN_TIERCACHE")
	if p == "" {
		t.Fatal("TIERCACHE_BIN_TIERCACHE is not set: the host did not pack ./cmd/tiercache (vmtest.Options.Binaries)")
	}
	return p
}

// start runs `tiercache serve -config cfg` and waits until it answers
// with its cache open (crashloop.Ready: PING answers while it loads).
func start(t *testing.T, cfg, socket string) *proc {
	t.Helper()
	return startAs(t, cfg, socket, nil)
}

// startAs is start with the sidecar running as cred (nil: as the test).
func startAs(t *testing.T, cfg, socket string, cred *syscall.Credential) *proc {
	t.Helper()
	p := &proc{t: t, out: &syncBuffer{}, socket: socket, done: make(chan struct{})}
	p.cmd = exec.Command(binary(t), "serve", "-config", cfg)
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start tiercache: %v", err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("tiercache output:\n%s", p.out.String())
		}
	})
	deadline := time.Now().Add(90 * time.Second)
	for {
		// A plain dial first: go-redis logs every failed dial.
		c, err := net.Dial("unix", socket)
		if err == nil {
			c.Close()
			rc := p.client()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err = crashloop.Ready(ctx, rc)
			cancel()
			rc.Close()
			if err == nil {
				return p
			}
		}
		select {
		case <-p.done:
			t.Fatalf("tiercache exited before serving (%v):\n%s", p.waitErr, p.out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("tiercache did not answer with its cache open on %s within 90s: %v\n%s", socket, err, p.out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (p *proc) client() *redis.Client {
	return redis.NewClient(&redis.Options{Network: "unix", Addr: p.socket, ReadTimeout: time.Minute, WriteTimeout: time.Minute})
}

// stop sends SIGTERM (the ordered, draining shutdown) and expects exit 0.
func (p *proc) stop() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		p.t.Fatalf("SIGTERM tiercache: %v", err)
	}
	select {
	case <-p.done:
		if p.waitErr != nil {
			p.t.Fatalf("tiercache exit after SIGTERM: %v\n%s", p.waitErr, p.out.String())
		}
	case <-time.After(2 * time.Minute):
		p.t.Fatalf("tiercache did not exit within 2m of SIGTERM\n%s", p.out.String())
	}
}

// info returns INFO <section> as a map.
func info(t *testing.T, rc *redis.Client, section string) map[string]string {
	t.Helper()
	s, err := rc.Info(context.Background(), section).Result()
	if err != nil {
		t.Fatalf("INFO %s: %v", section, err)
	}
	m := map[string]string{}
	for _, l := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), ":"); ok {
			m[k] = v
		}
	}
	return m
}

func infoInt(t *testing.T, m map[string]string, k string) int64 {
	t.Helper()
	v, ok := m[k]
	if !ok {
		t.Fatalf("INFO has no %s field: %v", k, m)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("INFO %s = %q: %v", k, v, err)
	}
	return n
}

func value(i, size int) []byte {
	b := bytes.Repeat([]byte(fmt.Sprintf("value-%06d|", i)), size/12+1)
	return b[:size]
}

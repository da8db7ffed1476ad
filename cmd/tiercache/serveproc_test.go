package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tiercache/tiercache/cmd/tiercache/crashloop"
	"github.com/tiercache/tiercache/remote/redistest"
)

// serveProc is a server process of the test's own (the sidecar, or a
// peer such as redis-server) answering on a Unix socket.
type serveProc struct {
	cmd  *exec.Cmd
	log  *os.File // its stdout and stderr
	done chan error
}

// output is what the process printed so far.
func (p *serveProc) output() string {
	b, _ := os.ReadFile(p.log.Name())
	return string(b)
}

// startServe runs the sidecar as its own process (the test binary, see
// TestMain) as `serve -socket sock args` with env added, and waits until
// it answers PING.
func startServe(t testing.TB, sock string, args string, env ...string) *serveProc {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), serveEnv+"=serve -socket "+sock+" "+args), env...)
	return startProc(t, cmd, sock)
}

// startProc starts cmd and waits until it answers PING on sock; Cleanup
// kills it.
func startProc(t testing.TB, cmd *exec.Cmd, sock string) *serveProc {
	t.Helper()
	p := spawn(t, cmd)
	rc := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, PoolSize: 1, MaxRetries: -1})
	defer rc.Close()
	for deadline := time.Now().Add(30 * time.Second); crashloop.Ready(context.Background(), rc) != nil; time.Sleep(20 * time.Millisecond) {
		select {
		case err := <-p.done:
			p.done <- err
			t.Fatalf("%s exited (%v) before serving:\n%s", p.cmd.Path, err, p.output())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer with its dataset loaded:\n%s", p.cmd.Path, p.output())
		}
	}
	return p
}

// spawn starts cmd with its output in a temporary file; Cleanup kills it
// and, if the test failed, logs the output.
func spawn(t testing.TB, cmd *exec.Cmd) *serveProc {
	t.Helper()
	logf, err := os.CreateTemp(t.TempDir(), "server-*.log")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logf.Close() })
	p := &serveProc{cmd: cmd, log: logf, done: make(chan error, 1)}
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	if err := redistest.Start(p.cmd); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
		p.done <- nil
		if t.Failed() {
			t.Logf("%s output:\n%s", p.cmd.Path, p.output())
		}
	})
	return p
}

// stop sends SIGTERM and returns the exit status.
func (p *serveProc) stop(t testing.TB) int {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	return p.exitOf(t)
}

// exitOf waits (at most a minute: a process that should exit must never
// hang) for p to exit and returns its status.
func (p *serveProc) exitOf(t testing.TB) int {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(time.Minute):
		t.Fatalf("%s still running a minute later (after SIGTERM, or hung):\n%s", p.cmd.Path, p.output())
		return -1
	}
}

package crashloop

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// sidecar is one run of the sidecar on the store.
type sidecar struct {
	cmd *exec.Cmd
	rc  *redis.Client
	up  time.Duration // from exec to the cache open (Ready)
}

// start runs o.Command (its output appended to o.Dir/sidecar.log) and
// waits until it answers on o.Socket with its cache open (Ready).
func start(t testing.TB, o *Options) *sidecar {
	t.Helper()
	cmd := o.Command()
	logPath := o.Dir + "/sidecar.log"
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("crashloop: start the sidecar: %v", err)
	}
	s := &sidecar{cmd: cmd}
	s.rc = redis.NewClient(&redis.Options{Network: "unix", Addr: o.Socket, PoolSize: o.Workers + 1, MaxRetries: -1,
		ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second})
	for Ready(context.Background(), s.rc) != nil {
		if time.Since(begin) > time.Minute {
			out, _ := os.ReadFile(logPath)
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal(fmt.Errorf("%w: %s", ErrNoPong, out))
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.up = time.Since(begin)
	return s
}

// stop ends the sidecar: SIGKILL, or SIGTERM (a clean stop, which must
// exit 0).
func (s *sidecar) stop(t testing.TB, sig syscall.Signal) {
	t.Helper()
	s.rc.Close()
	s.cmd.Process.Signal(sig)
	err := s.cmd.Wait()
	if sig == syscall.SIGTERM && err != nil {
		t.Fatalf("clean stop: %v", err)
	}
}

package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tiercache/tiercache/tier"
)

// fdChildEnv makes the test binary the child process of the fd-limit
// tests (fdChild): "<limit> <mode> <socket>".
const fdChildEnv = "TIERCACHE_FDLIMIT_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(fdChildEnv); spec != "" {
		os.Exit(fdChild(spec))
	}
	os.Exit(m.Run())
}

// fdChild is the child process of the fd-limit tests: it lowers its own
// RLIMIT_NOFILE, serves a cache of hot DRAM with the default max_clients, prints
// the maxclients it settled on and, in mode "exhaust", then opens files
// until none is left (releasing them on SIGUSR1). It exits when its stdin
// closes.
func fdChild(spec string) int {
	var limit uint64
	var mode, path string
	if _, err := fmt.Sscan(spec, &limit, &mode, &path); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: limit, Max: limit}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	cache, err := tier.Open(tier.Options{HotBytes: testHotBytes})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer cache.Close()
	s, err := New(cache, Options{UnixSocket: path})
	if err == nil {
		err = s.Start()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer s.Close()
	fmt.Printf("maxclients %d\n", s.opts.MaxConns)
	if mode == "exhaust" {
		usr1 := make(chan os.Signal, 1)
		signal.Notify(usr1, syscall.SIGUSR1)
		var hog []int
		for {
			fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				break
			}
			hog = append(hog, fd)
		}
		fmt.Println("exhausted")
		go func() {
			<-usr1
			for _, fd := range hog {
				unix.Close(fd)
			}
			fmt.Println("released")
		}()
	}
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// startFdChild starts fdChild under limit and returns its socket, the
// maxclients it reported and its output lines to come.
func startFdChild(t *testing.T, limit int, mode string) (*exec.Cmd, string, int, *bufio.Scanner) {
	t.Helper()
	path := shortSocket(t)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d %s %s", fdChildEnv, limit, mode, path))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	sc := bufio.NewScanner(out)
	maxc := -1
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "maxclients "); ok {
			maxc, _ = strconv.Atoi(v)
			break
		}
	}
	if maxc < 0 {
		t.Fatalf("child reported no maxclients: %v", sc.Err())
	}
	return cmd, path, maxc, sc
}

// pingOnce connects, sends PING and returns the first reply line, or an
// error if none came within 10 s (a hang).
func pingOnce(path string) (net.Conn, string, error) {
	nc, err := net.Dial("unix", path)
	if err != nil {
		return nil, "", err
	}
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	nc.Write([]byte("*1\r\n$4\r\nPING\r\n")) // a refused client may see EPIPE; the reply is still there
	line, err := bufio.NewReader(nc).ReadString('\n')
	if err != nil {
		nc.Close()
		return nil, "", err
	}
	return nc, strings.TrimRight(line, "\r\n"), nil
}

// TestFdLimitCapsMaxClients: under RLIMIT_NOFILE 200 with the default
// max_clients of 10000, the server lowers maxclients below 200; twice
// that many clients each get +PONG or the max-clients error, none hangs,
// and once they leave a new client is served.
func TestFdLimitCapsMaxClients(t *testing.T) {
	const limit = 200
	_, path, maxc, _ := startFdChild(t, limit, "serve")
	if maxc >= limit || maxc < 1 {
		t.Fatalf("maxclients %d under a limit of %d files", maxc, limit)
	}
	var open []net.Conn
	pong, refused := 0, 0
	for i := 0; i < 2*limit; i++ {
		nc, line, err := pingOnce(path)
		if err != nil {
			t.Fatalf("client %d (after %d served, %d refused): %v", i, pong, refused, err)
		}
		switch line {
		case "+PONG":
			pong++
			open = append(open, nc)
		case "-ERR max number of clients reached":
			refused++
			nc.Close()
		default:
			t.Fatalf("client %d: reply %q", i, line)
		}
	}
	if pong != maxc || refused != 2*limit-maxc {
		t.Fatalf("%d served, %d refused; maxclients %d", pong, refused, maxc)
	}
	for _, nc := range open {
		nc.Close()
	}
	for i := 0; ; i++ {
		nc, line, err := pingOnce(path)
		if err == nil && line == "+PONG" {
			nc.Close()
			break
		}
		if i > 200 {
			t.Fatalf("no client served after the others left: %q %v", line, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestAcceptOutOfFdsRefuses: when the process has no descriptor left
// (something else took them all), a new client still gets the
// max-clients error from the spare descriptor instead of hanging, and
// once descriptors are free again clients are served.
func TestAcceptOutOfFdsRefuses(t *testing.T) {
	cmd, path, _, lines := startFdChild(t, 200, "exhaust")
	if !lines.Scan() || lines.Text() != "exhausted" {
		t.Fatalf("child: %q %v", lines.Text(), lines.Err())
	}
	for i := 0; i < 20; i++ {
		nc, line, err := pingOnce(path)
		if err != nil {
			t.Fatalf("client %d with no descriptor left: %v", i, err)
		}
		nc.Close()
		if line != "-ERR max number of clients reached" {
			t.Fatalf("client %d with no descriptor left: %q", i, line)
		}
	}
	cmd.Process.Signal(syscall.SIGUSR1)
	if !lines.Scan() || lines.Text() != "released" {
		t.Fatalf("child: %q %v", lines.Text(), lines.Err())
	}
	nc, line, err := pingOnce(path)
	if err != nil || line != "+PONG" {
		t.Fatalf("after the descriptors were freed: %q %v", line, err)
	}
	nc.Close()
}

package redistest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is one redis-server process on a loopback TCP port.
type Server struct {
	Addr string // 127.0.0.1:port
	Port int
	dir  string
	args []string
	tb   testing.TB

	mu  sync.Mutex
	cmd *exec.Cmd
}

// skipOrFail skips tb, or fails it when TIERCACHE_NO_SKIP=1 (CI must run it).
func skipOrFail(tb testing.TB, format string, a ...any) {
	tb.Helper()
	if os.Getenv("TIERCACHE_NO_SKIP") == "1" {
		tb.Fatalf("cannot run (TIERCACHE_NO_SKIP=1): "+format, a...)
	}
	tb.Skipf(format, a...)
}

// binaries returns the paths of redis-server and redis-cli, or skips.
func binaries(tb testing.TB) (server, cli string) {
	tb.Helper()
	s, err := exec.LookPath("redis-server")
	if err != nil {
		skipOrFail(tb, "redis-server is not installed (apt-get install redis-server)")
	}
	c, err := exec.LookPath("redis-cli")
	if err != nil {
		skipOrFail(tb, "redis-cli is not installed (apt-get install redis-tools)")
	}
	return s, c
}

// StartServer runs one redis-server on a free loopback port with extra
// arguments (e.g. "--requirepass", "x"), in its own directory, stopped at
// the end of the test.
func StartServer(tb testing.TB, extra ...string) *Server {
	tb.Helper()
	binaries(tb)
	s := newServer(tb, freePorts(tb, 1)[0], extra...)
	s.start()
	tb.Cleanup(s.Kill)
	return s
}

func newServer(tb testing.TB, port int, extra ...string) *Server {
	dir := tb.TempDir()
	args := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--daemonize", "no", "--logfile", filepath.Join(dir, "redis.log")}
	return &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Port: port, dir: dir, args: append(args, extra...), tb: tb}
}

// start starts the process and waits until it accepts connections.
func (s *Server) start() {
	s.tb.Helper()
	bin, _ := binaries(s.tb)
	cmd := exec.Command(bin, s.args...)
	if err := Start(cmd); err != nil {
		s.tb.Fatalf("start redis-server on %s: %v", s.Addr, err)
	}
	s.mu.Lock()
	s.cmd = cmd
	s.mu.Unlock()
	for i := 0; ; i++ {
		// redis-server binds before it listens: wait for an answer, not a port.
		if _, err := s.Do("PING"); err == nil {
			return
		}
		if i == 400 {
			s.tb.Fatalf("redis-server on %s does not answer PING; its log:\n%s", s.Addr, s.Log())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// Kill stops the server at once (SIGKILL) and waits for it (RT2).
func (s *Server) Kill() {
	s.mu.Lock()
	cmd := s.cmd
	s.cmd = nil
	s.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
}

// Restart starts a killed server again on its port and directory (RT2).
func (s *Server) Restart() {
	s.tb.Helper()
	s.Kill()
	s.start()
}

// Running reports whether the process was started and not killed.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil
}

// SentBytes is the bytes the server sent its clients so far (INFO's
// total_net_output_bytes): what a test checks a client read no more than
// it needed.
func (s *Server) SentBytes() (int, error) {
	info, err := s.Do("INFO", "stats")
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "total_net_output_bytes:"); ok {
			return strconv.Atoi(v)
		}
	}
	return 0, fmt.Errorf("redistest: INFO stats has no total_net_output_bytes")
}

// Log is the server's log file.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
	return string(b)
}

// Do sends one command as a RESP array and returns a simple or integer
// reply's text, a bulk string's payload ("" for nil), or the error reply as
// an error: a small client for setup and checks, not for the tests'
// traffic. It authenticates first when the server was started with
// --requirepass.
func (s *Server) Do(args ...string) (string, error) { return s.do(args...) }

func (s *Server) do2(auth, args []string) (string, error) {
	c, err := net.DialTimeout("tcp", s.Addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	r := bufio.NewReader(c)
	if _, err := roundTrip(c, r, auth); err != nil {
		return "", err
	}
	return roundTrip(c, r, args)
}

func (s *Server) do(args ...string) (string, error) {
	if pw := password(s.args); pw != "" {
		return s.do2([]string{"AUTH", pw}, args)
	}
	c, err := net.DialTimeout("tcp", s.Addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	return roundTrip(c, bufio.NewReader(c), args)
}

// roundTrip writes args as a RESP array on c and reads one reply from r.
func roundTrip(c net.Conn, r *bufio.Reader, args []string) (string, error) {
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		return "", err
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	switch {
	case strings.HasPrefix(line, "-"):
		return "", fmt.Errorf("redis %s: %s", c.RemoteAddr(), line[1:])
	case strings.HasPrefix(line, "$"):
		n, _ := strconv.Atoi(line[1:])
		if n < 0 {
			return "", nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	}
	return strings.TrimLeft(line, "+:"), nil
}

// freePorts finds n loopback ports that are free, each with its cluster
// bus port (port + 10000) free too.
func freePorts(tb testing.TB, n int) []int {
	tb.Helper()
	var ports []int
	for tries := 0; len(ports) < n && tries < 1000; tries++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if p+10000 > 65535 {
			continue
		}
		bus, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+10000))
		if err != nil {
			continue
		}
		bus.Close()
		ports = append(ports, p)
	}
	if len(ports) < n {
		tb.Fatalf("found %d free port pairs of %d", len(ports), n)
	}
	return ports
}

package server

import (
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tiercache/tiercache/tier"
)

// skipOrFail skips with reason, or fails when TIERCACHE_NO_SKIP=1 (CI).
func skipOrFail(t testing.TB, format string, a ...any) {
	t.Helper()
	if os.Getenv("TIERCACHE_NO_SKIP") == "1" {
		t.Fatalf(format, a...)
	}
	t.Skipf(format, a...)
}

// fullTests reports TIERCACHE_FULL=1: a test that runs fewer seeds in
// scripts/test (CI), to keep its wall time, runs all of them (README,
// "Tests").
func fullTests() bool { return os.Getenv("TIERCACHE_FULL") == "1" }

// shortSocket returns a socket path under /tmp short enough for sun_path.
func shortSocket(t testing.TB) string {
	t.Helper()
	f, err := os.CreateTemp("/tmp", "tc-*.sock")
	if err != nil {
		t.Fatal(err)
	}
	p := f.Name()
	f.Close()
	os.Remove(p)
	t.Cleanup(func() { os.Remove(p) })
	return p
}

// testClock is a tier.Options.Clock that stands still unless a test moves
// it, so that TTL replies are exact whatever the machine's load.
type testClock struct{ ns atomic.Int64 }

func newTestClock() *testClock {
	c := &testClock{}
	c.ns.Store(time.Now().UnixNano())
	return c
}

func (c *testClock) now() int64              { return c.ns.Load() }
func (c *testClock) time() time.Time         { return time.Unix(0, c.ns.Load()) }
func (c *testClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// testHotBytes is the hot tier of the test caches: INFO's maxmemory.
const testHotBytes = 8 << 20

// newClockedCache opens a real tier.Cache of hot DRAM alone whose time is
// clock's.
func newClockedCache(t testing.TB, clock *testClock) *tier.Cache {
	t.Helper()
	c, err := tier.Open(tier.Options{HotBytes: testHotBytes, HotMaxValue: 1 << 20, Clock: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// startServer starts a Server on a fresh short socket for a cache of hot
// DRAM alone whose clock stands still.
func startServer(t testing.TB, mod func(*Options)) (*Server, string) {
	t.Helper()
	return startServerWith(t, newClockedCache(t, newTestClock()), mod)
}

// startServerWith is startServer over the caller's cache.
func startServerWith(t testing.TB, cache *tier.Cache, mod func(*Options)) (*Server, string) {
	t.Helper()
	o := Options{UnixSocket: shortSocket(t), ShutdownTimeout: 2 * time.Second}
	if mod != nil {
		mod(&o)
	}
	s, err := New(cache, o)
	if err != nil {
		t.Fatal(err)
	}
	startClosed(t, s)
	return s, o.UnixSocket
}

// startClosed starts s and closes it when the test ends.
func startClosed(t testing.TB, s *Server) {
	t.Helper()
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
}

// rawConn is a connection speaking raw bytes.
type rawConn struct {
	t  testing.TB
	nc net.Conn
	rd *testReplyReader
}

func dialRaw(t testing.TB, path string) *rawConn {
	t.Helper()
	return dialNet(t, "unix", path)
}

// dialNet is dialRaw on any network ("tcp").
func dialNet(t testing.TB, network, addr string) *rawConn {
	t.Helper()
	nc, err := net.Dial(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	return &rawConn{t: t, nc: nc, rd: newTestReplyReader(nc)}
}

func (r *rawConn) send(s string) {
	r.t.Helper()
	if _, err := r.nc.Write([]byte(s)); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

// cmd sends a command as a RESP array.
func (r *rawConn) cmd(args ...string) {
	r.t.Helper()
	s := fmt.Sprintf("*%d\r\n", len(args))
	for _, a := range args {
		s += fmt.Sprintf("$%d\r\n%s\r\n", len(a), a)
	}
	r.send(s)
}

// reply reads one reply rendered as text (see testReplyReader).
func (r *rawConn) reply() string {
	r.t.Helper()
	s, err := r.rd.read()
	if err != nil {
		r.t.Fatalf("read reply: %v", err)
	}
	return s
}

// step is a command and the reply it must get (as testReplyReader renders it).
type step struct {
	args []string
	want string
}

// expect sends each step's command and checks its reply, reporting every
// mismatch.
func (r *rawConn) expect(steps []step) {
	r.t.Helper()
	for _, s := range steps {
		r.cmd(s.args...)
		if got := r.reply(); got != s.want {
			r.t.Errorf("%q: got %q, want %q", s.args, got, s.want)
		}
	}
}

// expectClosed asserts the server closed the connection.
func (r *rawConn) expectClosed() {
	r.t.Helper()
	r.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if s, err := r.rd.read(); err == nil {
		r.t.Fatalf("connection still open, got %q", s)
	}
}

// newTierCache opens a real tier.Cache of hot DRAM alone on the wall
// clock.
func newTierCache(t testing.TB) *tier.Cache {
	t.Helper()
	c, err := tier.Open(tier.Options{HotBytes: testHotBytes, HotMaxValue: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

package server

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// infoOf is field of INFO section on c, as a number.
func infoOf(t *testing.T, c *rawPeer, section, field string) int {
	t.Helper()
	return int(infoNum(t, c.do("INFO", section), field))
}

// selects is how many SELECTs the target ran (INFO commandstats).
func selects(t *testing.T, tgt *rawPeer) int {
	t.Helper()
	for _, line := range strings.Split(tgt.do("INFO", "commandstats"), "\r\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_select:calls="); ok {
			n, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
			return n
		}
	}
	return 0
}

// awaitInfo waits until field of INFO section on c is want, failing
// after 10 s.
func awaitInfo(t *testing.T, c *rawPeer, section, field string, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for infoOf(t, c, section, field) != want {
		if time.Now().After(deadline) {
			t.Fatalf("INFO %s %s never reached %d (last %d)", section, field, want, infoOf(t, c, section, field))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMigrateReusesConnection (S114): MIGRATE on tiercache and on
// redis-server 7.0, each to its own redis-server target, answer the same,
// and their targets accept as many connections and run as many SELECTs
// after each step: MIGRATEs to one host:port share one connection (one
// accepted, one in CLIENT LIST, INFO migrate_cached_sockets 1), SELECT is
// sent only when the database changes and again after the target
// answered an error (the connection kept), a timeout closes the
// connection and drops it from the cache, a cached connection the target
// closed is replaced by one retry that answers OK, and a connection a
// MIGRATE authenticated stays so for the next one without AUTH. In RESP2
// and RESP3.
func TestMigrateReusesConnection(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run("RESP"+strconv.Itoa(proto), func(t *testing.T) { testMigrateReusesConnection(t, proto) })
	}
}

func testMigrateReusesConnection(t *testing.T, proto int) {
	p := newPeers(t, 1, proto, nil)
	t1sock, t1port := startRedisTCP(t, "--requirepass", "pw")
	t2sock, t2port := startRedisTCP(t, "--requirepass", "pw")
	t1, t2 := dialPeer(t, t1sock), dialPeer(t, t2sock)
	targets := func(args ...string) {
		t.Helper()
		if a, b := t1.do(args...), t2.do(args...); a != b {
			t.Fatalf("targets %q: %q and %q", args, a, b)
		}
	}
	targets("AUTH", "pw")
	// seen is what a target saw: connections accepted, SELECTs run.
	seen := func(c *rawPeer) [2]int {
		return [2]int{infoOf(t, c, "stats", "total_connections_received"), selects(t, c)}
	}
	base := seen(t1)
	// step runs MIGRATE 127.0.0.1 <its target's port> args... on both.
	step := func(args ...string) {
		t.Helper()
		ours := p.ours[0].do(append([]string{"MIGRATE", "127.0.0.1", t1port}, args...)...)
		peer := p.peer[0].do(append([]string{"MIGRATE", "127.0.0.1", t2port}, args...)...)
		if ours != peer {
			t.Fatalf("MIGRATE %q:\n tiercache    %q\n redis-server %q", args, ours, peer)
		}
		if a, b := seen(t1), seen(t2); a != b {
			t.Fatalf("after MIGRATE %q the targets saw (connections, SELECTs) %v from tiercache, %v from redis-server", args, a, b)
		}
		for _, c := range []*rawPeer{p.ours[0], p.peer[0]} {
			c.do("PING") // INFO's count below is read after the MIGRATE returned
		}
	}
	cached := func(want int) {
		t.Helper()
		if a, b := infoOf(t, p.ours[0], "stats", "migrate_cached_sockets"), infoOf(t, p.peer[0], "stats", "migrate_cached_sockets"); a != want || b != want {
			t.Fatalf("migrate_cached_sockets %d (redis-server %d), want %d", a, b, want)
		}
	}
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		p.same(0, "SET", k, k)
	}
	step("a", "0", "5000", "AUTH", "pw")
	step("b", "0", "5000") // authenticated already
	if got := seen(t1); got != [2]int{base[0] + 1, base[1] + 1} {
		t.Fatalf("the target saw %d connections and %d SELECTs for two MIGRATEs, want 1 and 1", got[0]-base[0], got[1]-base[1])
	}
	if n := strings.Count(t1.do("CLIENT", "LIST"), "cmd=restore"); n != 1 {
		t.Fatalf("CLIENT LIST on the target has %d MIGRATE connections, want 1", n)
	}
	cached(1)
	step("c", "2", "5000")
	step("d", "2", "5000", "COPY")
	step("d", "2", "5000") // BUSYKEY: kept, the database forgotten
	step("d", "2", "5000", "REPLACE")
	if got := seen(t1); got != [2]int{base[0] + 1, base[1] + 3} {
		t.Fatalf("the target saw %d connections and %d SELECTs, want 1 and 3", got[0]-base[0], got[1]-base[1])
	}
	// A timeout: closed and dropped.
	targets("CLIENT", "PAUSE", "100000", "WRITE")
	step("e", "0", "200")
	targets("CLIENT", "UNPAUSE")
	cached(0)
	awaitInfo(t, t1, "clients", "connected_clients", 1) // the test's own
	step("f", "0", "5000", "AUTH", "pw")
	cached(1)
	// The target closes the cached connection: one retry, on a new one.
	targets("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
	awaitInfo(t, t1, "clients", "connected_clients", 1)
	awaitInfo(t, t2, "clients", "connected_clients", 1)
	step("g", "0", "5000", "AUTH", "pw")
	if got := seen(t1); got != [2]int{base[0] + 3, base[1] + 6} {
		t.Fatalf("the target saw %d connections and %d SELECTs, want 3 and 6 (SELECT on each new connection and after the database changed)", got[0]-base[0], got[1]-base[1])
	}
	targets("GET", "g")
	cached(1)
}

// TestMigrateSocketCacheBounds (S115): a cached connection unused for
// longer than the TTL (shortened here) is closed by the once-a-second
// cron; the cache holds at most 64 (one host:port as written each: a port
// with letters after it names the same target), a 65th closing one; the
// server's Close closes the rest.
func TestMigrateSocketCacheBounds(t *testing.T) {
	tsock, tport := startRedisTCP(t)
	tgt := dialPeer(t, tsock)
	defer func(ttl time.Duration) { migrateSocketTTL = ttl }(migrateSocketTTL)
	migrateSocketTTL = time.Millisecond
	_, sock := startServerWith(t, newTierCache(t), nil)
	o := dialPeer(t, sock)
	o.do("SET", "k", "v")
	if got := o.do("MIGRATE", "127.0.0.1", tport, "k", "0", "5000", "COPY"); got != "+OK\r\n" {
		t.Fatalf("MIGRATE: %q", got)
	}
	awaitInfo(t, o, "stats", "migrate_cached_sockets", 0)
	awaitInfo(t, tgt, "clients", "connected_clients", 1)

	migrateSocketTTL = time.Hour
	s, sock := startServerWith(t, newTierCache(t), nil)
	o = dialPeer(t, sock)
	o.do("SET", "k", "v")
	for i := range migrateSocketCacheItems + 1 {
		port := tport + "x" + strconv.Itoa(i)
		if got := o.do("MIGRATE", "127.0.0.1", port, "k", "0", "5000", "COPY", "REPLACE"); got != "+OK\r\n" {
			t.Fatalf("MIGRATE to %s: %q", port, got)
		}
	}
	if n := infoOf(t, o, "stats", "migrate_cached_sockets"); n != migrateSocketCacheItems {
		t.Fatalf("migrate_cached_sockets %d after %d targets, want %d", n, migrateSocketCacheItems+1, migrateSocketCacheItems)
	}
	awaitInfo(t, tgt, "clients", "connected_clients", migrateSocketCacheItems+1)
	s.Close()
	awaitInfo(t, tgt, "clients", "connected_clients", 1)
}

// TestCloseEndsWaitingMigrate checks S117: a MIGRATE waiting on a target
// that accepted and never answers, with a timeout of days, does not hold
// Close past ShutdownTimeout: its connection is closed at the timeout.
func TestCloseEndsWaitingMigrate(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	read := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		c.Read(make([]byte, 4096)) // the request arrived; no reply ever
		read <- c
	}()
	s, err := New(newTierCache(t), Options{UnixSocket: shortSocket(t), ShutdownTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	o := dialPeer(t, s.opts.UnixSocket)
	o.do("SET", "k", "v")
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	o.send("MIGRATE", "127.0.0.1", port, "k", "0", "999999999") // about 11.6 days; its reply is not awaited
	var tc net.Conn
	select {
	case tc = <-read:
		defer tc.Close()
	case <-time.After(30 * time.Second):
		t.Fatal("the target got no request")
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("Close still waits for the MIGRATE 30 s after its ShutdownTimeout of 100 ms")
	}
	// The target's side of the connection is closed too.
	tc.SetReadDeadline(time.Now().Add(30 * time.Second))
	if n, err := tc.Read(make([]byte, 1)); err == nil {
		t.Fatalf("the target's connection is still open (read %d bytes)", n)
	}
}

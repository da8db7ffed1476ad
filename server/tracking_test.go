package server

import (
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"weak"
)

// TestTrackingMatchesRedis (S34, S78): invalidations for each way a command
// changes a key (a write, a DEL, an EXPIRE, inside a script and inside
// EXEC, FLUSHALL), in the default mode, BCAST with prefixes, OPTIN,
// OPTOUT and NOLOOP, RESP3 pushes and RESP2 REDIRECT to a
// __redis__:invalidate subscriber, byte for byte as redis-server 7.0.
func TestTrackingMatchesRedis(t *testing.T) {
	drain := func(p *peers, i int, what string) {
		for p.sameRead(i, 40*time.Millisecond, what) != "" {
		}
	}
	writes := [][]string{
		{"SET", "k", "2"}, {"DEL", "k"}, {"EXPIRE", "k", "100"}, {"EVAL", "redis.call('incr', KEYS[1])", "1", "k"},
		{"MULTI"}, {"APPEND", "k", "x"}, {"EXEC"},
		{"BITFIELD", "k", "INCRBY", "u8", "0", "1"}, {"BITFIELD", "k", "GET", "u8", "0"}, {"BITOP", "NOT", "k", "k"},
		{"BITOP", "AND", "k2", "k"}, {"BITOP", "AND", "k", "nokey"}, {"HSET", "k2", "f", "v"},
		{"PFADD", "k3", "a"}, {"PFMERGE", "k3", "k"},
		{"MSET", "z1", "1", "k", "3", "k2", "x"}, // keys under two BCAST prefixes: a message each (S78)
		{"FLUSHALL"},
	}
	modes := [][]string{
		{"CLIENT", "TRACKING", "ON"},
		{"CLIENT", "TRACKING", "ON", "NOLOOP"},
		{"CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "k", "PREFIX", "z"},
		{"CLIENT", "TRACKING", "ON", "OPTIN"},
		{"CLIENT", "TRACKING", "ON", "OPTOUT"},
	}
	for mi, mode := range modes {
		t.Run("RESP3/"+strconv.Itoa(mi), func(t *testing.T) {
			p := newPeers(t, 2, 3, nil)
			p.same(0, mode...)
			p.same(0, "CLIENT", "TRACKINGINFO")
			for _, w := range writes {
				p.same(1, "SET", "k", "1")
				if mi == 3 {
					p.same(0, "CLIENT", "CACHING", "YES")
				}
				p.same(0, "GET", "k")
				p.same(0, "MGET", "k", "k2")
				drain(p, 0, "after reading")
				p.same(1, w...)
				drain(p, 0, "invalidation of "+w[0])
				p.same(0, w...) // the tracking client itself (NOLOOP)
				drain(p, 0, "own invalidation of "+w[0])
			}
		})
	}
	t.Run("RESP2-REDIRECT", func(t *testing.T) {
		p := newPeers(t, 3, 2, nil)
		p.trackRedirected()
		for _, w := range writes {
			p.same(1, "SET", "k", "1")
			p.same(0, "GET", "k")
			p.same(1, w...)
			drain(p, 2, "redirected invalidation of "+w[0])
		}
	})
	t.Run("errors", func(t *testing.T) {
		p := newPeers(t, 1, 3, nil)
		for _, c := range [][]string{
			{"CLIENT", "TRACKING", "ON", "PREFIX", "a"},
			{"CLIENT", "TRACKING", "ON", "BCAST", "OPTIN"},
			{"CLIENT", "TRACKING", "ON", "OPTIN", "OPTOUT"},
			{"CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "ab", "PREFIX", "a"},
			{"CLIENT", "TRACKING", "ON", "REDIRECT", "999999"},
			{"CLIENT", "TRACKING", "ON", "REDIRECT", "x"},
			{"CLIENT", "TRACKING", "MAYBE"},
			{"CLIENT", "TRACKING", "ON", "BOGUS"},
			{"CLIENT", "CACHING", "YES"},
			{"CLIENT", "GETREDIR"},
			{"CLIENT", "TRACKING", "ON", "OPTIN"},
			{"CLIENT", "CACHING", "NO"},
			{"CLIENT", "CACHING", "MAYBE"},
			{"CLIENT", "TRACKING", "ON", "OPTOUT"},
			{"CLIENT", "TRACKING", "ON", "BCAST"},
			{"CLIENT", "TRACKINGINFO"},
			{"CLIENT", "GETREDIR"},
			{"CLIENT", "TRACKING", "OFF"},
			{"CLIENT", "TRACKINGINFO"},
		} {
			p.same(0, c...)
		}
	})
}

// TestTrackingTableBounded (S34, S83): past tracking-table-max-keys, keys
// are invalidated to make room, and the clients that read them are told;
// lowering the limit shrinks the table at once.
func TestTrackingTableBounded(t *testing.T) {
	s, path := startServer(t, nil)
	c := dialPeer(t, path)
	c.do("HELLO", "3")
	c.do("CONFIG", "SET", "tracking-table-max-keys", "10")
	c.do("CLIENT", "TRACKING", "ON")
	for i := 0; i < 100; i++ {
		c.send("GET", "key"+strconv.Itoa(i))
	}
	c.send("PING")
	for c.read(5*time.Second) != "+PONG\r\n" { // replies, and the invalidations of evicted keys
	}
	s.trk.mu.Lock()
	n := len(s.trk.keys)
	s.trk.mu.Unlock()
	if n > 10 {
		t.Fatalf("tracking table holds %d keys, the limit is 10", n)
	}
	if s.trk.evicted.Load() < 90 {
		t.Fatalf("%d keys invalidated to make room, want at least 90", s.trk.evicted.Load())
	}
	// A lower limit shrinks the table at once, its keys invalidated (S83).
	c.do("CONFIG", "SET", "tracking-table-max-keys", "1")
	for c.read(200*time.Millisecond) != "" {
	}
	s.trk.mu.Lock()
	n = len(s.trk.keys)
	s.trk.mu.Unlock()
	if n > 1 {
		t.Fatalf("tracking table holds %d keys after CONFIG SET tracking-table-max-keys 1", n)
	}
	if s.trk.evicted.Load() < 99 {
		t.Fatalf("%d keys invalidated, want at least 99", s.trk.evicted.Load())
	}
}

// TestTrackingCachingSpansClientCommands (S34): CLIENT CACHING holds
// past any CLIENT command, as Redis keeps it (resetClient) up to the next
// command of another kind: OPTIN's GET after CLIENT CACHING YES and
// CLIENT TRACKINGINFO is tracked, and invalidated, as redis-server 7.0
// does; inside MULTI it holds for the transaction only.
func TestTrackingCachingSpansClientCommands(t *testing.T) {
	p := newPeers(t, 2, 3, nil)
	drain := func() {
		for p.sameRead(0, 40*time.Millisecond, "invalidation") != "" {
		}
	}
	p.same(0, "CLIENT", "TRACKING", "ON", "OPTIN")
	for _, c := range [][]string{
		{"CLIENT", "CACHING", "YES"}, {"CLIENT", "TRACKINGINFO"}, {"CLIENT", "TRACKINGINFO"}, {"CLIENT", "GETREDIR"},
		{"GET", "a"}, {"GET", "b"}, {"MULTI"}, {"CLIENT", "CACHING", "YES"}, {"GET", "c"}, {"EXEC"}, {"GET", "d"},
		{"CLIENT", "CACHING", "YES"}, {"MULTI"}, {"GET", "e"}, {"EXEC"}, {"CLIENT", "TRACKINGINFO"},
	} {
		p.same(0, c...)
	}
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		p.same(1, "SET", k, "1")
		drain()
	}
}

// TestTrackingBrokenRedirectEveryTime (S34): once the client a tracking
// client redirects to is gone, every invalidation it would have been
// sent tells the tracking client so (["tracking-redir-broken", id]), as
// redis-server 7.0 does, not only the first: a key read again after the
// first is otherwise changed with no word to the client that caches it.
func TestTrackingBrokenRedirectEveryTime(t *testing.T) {
	p := newPeers(t, 3, 3, nil)
	for _, side := range [][]*rawPeer{p.ours, p.peer} {
		id := side[2].do("CLIENT", "ID")
		if r := side[0].do("CLIENT", "TRACKING", "ON", "REDIRECT", id[1:len(id)-2]); r != "+OK\r\n" {
			t.Fatalf("CLIENT TRACKING ON REDIRECT: %q", r)
		}
		side[2].nc.Close()
	}
	time.Sleep(100 * time.Millisecond) // both redirect targets are gone
	// The connection ids differ between the servers: each side's own is
	// cut from its pushes.
	id := regexp.MustCompile(`(tracking-redir-broken\r\n:)\d+`)
	for _, c := range [][]string{{"GET", "a"}, {"GET", "b"}, {"1", "SET", "a", "1"}, {"1", "SET", "b", "1"}, {"GET", "a"},
		{"1", "SET", "a", "2"}, {"1", "FLUSHALL"}} {
		i := 0
		if c[0] == "1" {
			i, c = 1, c[1:]
		}
		p.same(i, c...)
		for {
			a, b := p.ours[0].read(50*time.Millisecond), p.peer[0].read(50*time.Millisecond)
			if a, b = id.ReplaceAllString(a, "${1}ID"), id.ReplaceAllString(b, "${1}ID"); a != b {
				t.Errorf("after %q:\n tiercache    %q\n redis-server %q", c, a, b)
			}
			if a == "" || b == "" {
				break
			}
		}
	}
}

// TestTrackingForgetsClosedClients (S34): the keys a client read stay in
// the tracking table after it closes, forgotten lazily as Redis forgets
// ids, but they do not keep the closed connection (its buffers) alive.
func TestTrackingForgetsClosedClients(t *testing.T) {
	s, path := startServer(t, nil)
	tr := dialPeer(t, path)
	tr.do("HELLO", "3")
	id := tr.do("CLIENT", "ID")
	n, _ := strconv.ParseInt(id[1:len(id)-2], 10, 64)
	tr.do("CLIENT", "TRACKING", "ON")
	tr.do("GET", "never-written")
	gone := weak.Make(s.connByID(n))
	tr.nc.Close()
	for deadline := time.Now().Add(5 * time.Second); s.connByID(n) != nil; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the connection never closed")
		}
	}
	for i := 0; i < 20 && gone.Value() != nil; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if gone.Value() != nil {
		t.Fatal("a closed tracking connection is still reachable: the tracking table keeps it")
	}
	s.trk.mu.Lock()
	defer s.trk.mu.Unlock()
	if len(s.trk.keys) != 1 {
		t.Fatalf("tracking table holds %d keys, want the one read", len(s.trk.keys))
	}
}

// TestTrackingClientIsNotPubSubLimited (S34, S32): client-output-buffer-
// limit pubsub bounds subscribers only, as Redis's client classes do: a
// BCAST tracking client that subscribes to nothing, blocked in BLPOP and
// reading nothing while far more than that limit of invalidations is
// sent to it, stays connected and then reads them all.
func TestTrackingClientIsNotPubSubLimited(t *testing.T) {
	s, path := startServer(t, nil)
	w, tr := dialPeer(t, path), dialPeer(t, path)
	if r := w.do("CONFIG", "SET", "client-output-buffer-limit", "pubsub 64kb 32kb 1"); r != "+OK\r\n" {
		t.Fatalf("CONFIG SET: %q", r)
	}
	tr.do("HELLO", "3")
	tr.do("CLIENT", "TRACKING", "ON", "BCAST")
	tr.send("BLPOP", "l", "0") // not read while the invalidations come
	time.Sleep(100 * time.Millisecond)
	const n = 20000 // about 1 MB of invalidations
	for i := 0; i < n; i += 500 {
		var b strings.Builder
		for j := i; j < i+500; j++ {
			k := "key:" + strconv.Itoa(j)
			b.WriteString("*3\r\n$3\r\nSET\r\n$" + strconv.Itoa(len(k)) + "\r\n" + k + "\r\n$1\r\nv\r\n")
		}
		w.nc.Write([]byte(b.String()))
		for range 500 {
			w.read(5 * time.Second)
		}
	}
	if got := s.stats.pubsubLimit.Load(); got != 0 {
		t.Fatalf("%d connections closed at the pubsub limit, none subscribes", got)
	}
	w.do("RPUSH", "l", "x")
	got := 0
	for r := tr.read(5 * time.Second); ; r = tr.read(5 * time.Second) {
		if r == "" {
			t.Fatalf("BLPOP's reply never came, after %d invalidations", got)
		}
		if strings.HasPrefix(r, ">2\r\n$10\r\ninvalidate\r\n") {
			got++
			continue
		}
		if r != "*2\r\n$1\r\nl\r\n$1\r\nx\r\n" {
			t.Fatalf("after %d invalidations: %.60q", got, r)
		}
		break
	}
	if got == n { // the RPUSH's may follow the reply it serves: the pusher writes it beside the woken connection
		if r := tr.read(5 * time.Second); strings.HasPrefix(r, ">2\r\n$10\r\ninvalidate\r\n") {
			got++
		}
	}
	if got != n+1 { // the RPUSH's too
		t.Fatalf("%d invalidations, want %d", got, n+1)
	}
}

// trackRedirected turns tracking on for connection 0 with REDIRECT to
// connection 2, subscribed to __redis__:invalidate: connection ids differ
// between the servers, so each side redirects to its own subscriber's.
func (p *peers) trackRedirected() {
	p.t.Helper()
	for _, side := range [][]*rawPeer{p.ours, p.peer} {
		id := side[2].do("CLIENT", "ID")
		side[2].do("SUBSCRIBE", "__redis__:invalidate")
		if r := side[0].do("CLIENT", "TRACKING", "ON", "REDIRECT", id[1:len(id)-2]); r != "+OK\r\n" {
			p.t.Fatalf("CLIENT TRACKING ON REDIRECT: %q", r)
		}
	}
}

// TestTrackingRedirectQuitIsBroken checks S109: once a redirect target
// read its QUIT's +OK, a write to a key the tracking client read tells it
// tracking-redir-broken, as Redis's tracking unit ("CLIENT TRACKINGINFO
// provides reasonable results when tracking redir broken") expects; the
// target used to count as gone only once its connection closed, after the
// +OK, so the write could find it still there and the push was lost.
func TestTrackingRedirectQuitIsBroken(t *testing.T) {
	_, path := startServer(t, nil)
	w := dialPeer(t, path)
	for i := 0; i < 50; i++ {
		tr, target := dialPeer(t, path), dialPeer(t, path)
		tr.do("HELLO", "3")
		id := target.do("CLIENT", "ID")
		if r := tr.do("CLIENT", "TRACKING", "ON", "REDIRECT", id[1:len(id)-2]); r != "+OK\r\n" {
			t.Fatalf("CLIENT TRACKING ON REDIRECT: %q", r)
		}
		key := "quit-redir-" + strconv.Itoa(i)
		tr.do("GET", key)
		if r := target.do("QUIT"); r != "+OK\r\n" {
			t.Fatalf("QUIT: %q", r)
		}
		w.do("SET", key, "1")
		want := ">2\r\n$21\r\ntracking-redir-broken\r\n:" + id[1:]
		if r := tr.read(5 * time.Second); r != want {
			t.Fatalf("round %d: after the target's QUIT and a write, the tracking client read %q, want %q", i, r, want)
		}
		tr.nc.Close()
	}
}

// TestTrackingRedirectToItself checks S122's RESP2 part: a RESP2 client
// that redirects its invalidations to itself and then subscribes to
// __redis__:invalidate gets them as messages, the FLUSHALL's null too, as
// redis-server 7.0 sends them (sendTrackingMessage's using_redirection).
func TestTrackingRedirectToItself(t *testing.T) {
	p := newPeers(t, 2, 2, nil)
	for _, side := range [][]*rawPeer{p.ours, p.peer} {
		id := side[0].do("CLIENT", "ID")
		if r := side[0].do("CLIENT", "TRACKING", "ON", "REDIRECT", id[1:len(id)-2]); r != "+OK\r\n" {
			t.Fatalf("CLIENT TRACKING ON REDIRECT itself: %q", r)
		}
	}
	p.same(0, "GET", "k")
	p.same(0, "SUBSCRIBE", "__redis__:invalidate")
	p.same(1, "SET", "k", "1")
	p.sameRead(0, time.Second, "k's invalidation")
	p.same(1, "FLUSHALL")
	p.sameRead(0, time.Second, "the FLUSHALL's null")
}

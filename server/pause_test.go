package server

import (
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tiercache/tiercache/tier"
)

// TestClientPauseMatchesRedis checks S97 against redis-server 7.0, in
// RESP2 and RESP3: CLIENT PAUSE's and UNPAUSE's replies and errors (the
// mode checked before the timeout); under PAUSE WRITE reads and
// no-writes scripts run while SET, PUBLISH, PFCOUNT, EVAL, a write
// queued in MULTI and an EXEC of a queued write are held, each client
// shown blocked (INFO blocked_clients, CLIENT LIST's flags and cmd), and
// their replies come, in order, after UNPAUSE; a later PAUSE 0 keeps the
// longer pause; PAUSE ALL holds a GET and UNPAUSE itself until its
// timeout ends it. Only order and outcome are compared, no duration. A
// timeout past the clock's range is refused as WAIT's (parseTimeoutMs,
// Redis 7.2's check), where 7.0 overflows it, so it is not compared.
func TestClientPauseMatchesRedis(t *testing.T) {
	eachProto(t, 4, func(t *testing.T, p *peers, proto int) {
		for _, args := range [][]string{
			{"CLIENT", "PAUSE"}, {"CLIENT", "PAUSE", "x"}, {"CLIENT", "PAUSE", "1.5"},
			{"CLIENT", "PAUSE", "-1"}, {"CLIENT", "PAUSE", "10", "bad"}, {"CLIENT", "PAUSE", "x", "bad"},
			{"CLIENT", "PAUSE", "x", "write"}, {"CLIENT", "PAUSE", "1", "WRITE", "extra"},
			{"CLIENT", "UNPAUSE", "x"},
			{"CLIENT", "PAUSE", "0"}, {"CLIENT", "PAUSE", "0", "all"}, {"CLIENT", "UNPAUSE"},
			{"EVAL", "return redis.call('client','pause','10')", "0"}, {"MULTI"}, {"CLIENT", "PAUSE", "0", "write"},
			{"CLIENT", "UNPAUSE"}, {"EXEC"}, {"CLIENT", "pause", "0", "WRITE", "x"}, {"client", "UNPAUSE", "now"},
			{"SET", "k", "v"}, {"PFADD", "h", "a"},
		} {
			p.same(0, args...)
		}
		ids := func(i int) (string, string) {
			trim := func(r string) string { return strings.TrimSuffix(strings.TrimPrefix(r, ":"), "\r\n") }
			return trim(p.ours[i].do("CLIENT", "ID")), trim(p.peer[i].do("CLIENT", "ID"))
		}
		oid, pid := ids(1)
		heldLine := func(what string) { // conn 1's CLIENT LIST fields, asked on conn 3
			t.Helper()
			body := func(r string) string { _, b, _ := strings.Cut(r, "\r\n"); return strings.TrimPrefix(b, "txt:") }
			a := clientLines(t, body(p.ours[3].do("CLIENT", "LIST", "ID", oid)))
			b := clientLines(t, body(p.peer[3].do("CLIENT", "LIST", "ID", pid)))
			for _, f := range []string{"flags", "cmd"} {
				var av, bv string
				for _, l := range a {
					av = l[f]
				}
				for _, l := range b {
					bv = l[f]
				}
				if av != bv {
					t.Errorf("%s: CLIENT LIST %s= tiercache %q, redis-server %q", what, f, av, bv)
				}
			}
		}

		p.same(0, "CLIENT", "PAUSE", "1000000", "WRITE")
		p.same(0, "CLIENT", "PAUSE", "0", "write") // the longer end wins: still paused
		p.same(3, "GET", "k")
		p.same(3, "EVAL", "#!lua flags=no-writes\nreturn 1", "0")
		p.same(3, "EVAL_RO", "return redis.call('get', KEYS[1])", "1", "k")
		p.same(3, "MULTI")
		p.same(3, "GET", "k")
		p.same(3, "EXEC")
		for _, held := range [][]string{
			{"SET", "k", "v2"}, {"PUBLISH", "ch", "m"}, {"PFCOUNT", "h"}, {"EVAL", "return 2", "0"},
			{"EVAL_RO", "#!lua\nreturn 1", "0"}, // a shebang without no-writes: a write (then refused)
		} {
			p.ours[1].send(held...)
			p.peer[1].send(held...)
			p.waitBlocked(3, 1)
			heldLine(held[0])
			p.same(3, "GET", "k") // reads still run
			p.same(0, "CLIENT", "UNPAUSE")
			p.sameRead(1, 10*time.Second, "the reply of the held "+held[0])
			p.same(0, "CLIENT", "PAUSE", "1000000", "WRITE")
		}
		// A write queued in MULTI is held before it is queued; an EXEC of a
		// write queued before the pause is held.
		p.same(1, "MULTI")
		p.ours[1].send("SET", "k", "v3")
		p.peer[1].send("SET", "k", "v3")
		p.waitBlocked(3, 1)
		p.same(2, "MULTI")
		p.same(0, "CLIENT", "UNPAUSE")
		p.sameRead(1, 10*time.Second, "the held SET's QUEUED")
		p.same(2, "INCR", "n")
		p.same(0, "CLIENT", "PAUSE", "1000000", "WRITE")
		p.ours[1].send("EXEC")
		p.peer[1].send("EXEC")
		p.ours[2].send("EXEC")
		p.peer[2].send("EXEC")
		p.waitBlocked(3, 2)
		p.same(0, "CLIENT", "UNPAUSE")
		p.sameRead(1, 10*time.Second, "the held EXEC")
		p.sameRead(2, 10*time.Second, "the other held EXEC")
		p.waitBlocked(3, 0) // nothing blocked any more

		// ALL holds every command, CLIENT UNPAUSE too; the timeout ends it.
		p.same(0, "CLIENT", "PAUSE", "300", "ALL")
		for _, c := range []*rawPeer{p.ours[1], p.peer[1]} {
			c.send("GET", "k")
			c.send("SET", "k", "v4")
		}
		p.ours[0].send("CLIENT", "UNPAUSE")
		p.peer[0].send("CLIENT", "UNPAUSE")
		p.sameRead(1, 10*time.Second, "the GET held by PAUSE ALL")
		p.sameRead(1, 10*time.Second, "the SET held by PAUSE ALL")
		p.sameRead(0, 10*time.Second, "the UNPAUSE held by PAUSE ALL")
		p.same(3, "GET", "k")
	})
}

// TestClientPauseHeldKilled checks S98: a held client that is killed
// (CLIENT KILL) or hangs up while a pause holds it leaves without its
// command having run; the others' held commands run after UNPAUSE; a
// CLIENT UNBLOCK does not end a pause's hold (0: redis-server 7.0 does
// not survive it, blocked.c replyToBlockedClientTimedOut panics on a
// BLOCKED_POSTPONE client), and shutting the server down ends the hold.
func TestClientPauseHeldKilled(t *testing.T) {
	s, path := startServerWith(t, newTierCache(t), nil)
	admin, killed, gone, held := dialPeer(t, path), dialPeer(t, path), dialPeer(t, path), dialPeer(t, path)
	id := strings.TrimSuffix(strings.TrimPrefix(killed.do("CLIENT", "ID"), ":"), "\r\n")
	heldID := strings.TrimSuffix(strings.TrimPrefix(held.do("CLIENT", "ID"), ":"), "\r\n")
	if r := admin.do("CLIENT", "PAUSE", "1000000", "WRITE"); r != "+OK\r\n" {
		t.Fatalf("CLIENT PAUSE: %q", r)
	}
	killed.send("SET", "a", "1")
	gone.send("SET", "b", "1")
	held.send("SET", "c", "1")
	waitBlockedN(t, admin, 3)
	if r := admin.do("CLIENT", "UNBLOCK", heldID); r != ":0\r\n" {
		t.Errorf("CLIENT UNBLOCK of a held client: %q, want :0", r)
	}
	if r := admin.do("CLIENT", "KILL", "ID", id); r != ":1\r\n" {
		t.Fatalf("CLIENT KILL: %q", r)
	}
	gone.nc.Close()
	waitBlockedN(t, admin, 1)
	if r := admin.do("CLIENT", "UNPAUSE"); r != "+OK\r\n" {
		t.Fatalf("CLIENT UNPAUSE: %q", r)
	}
	if r := held.read(10 * time.Second); r != "+OK\r\n" {
		t.Errorf("the held SET: %q", r)
	}
	if r := admin.do("EXISTS", "a", "b", "c"); r != ":1\r\n" {
		t.Errorf("EXISTS a b c: %q, want only c (the killed and gone clients' SETs never ran)", r)
	}
	admin.do("CLIENT", "PAUSE", "1000000", "WRITE")
	held.send("SET", "d", "1")
	waitBlockedN(t, admin, 1)
	done := make(chan error, 1)
	go func() { done <- s.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Close did not return while a pause held a client")
	}
}

// waitBlockedN waits until c's INFO clients shows n blocked clients.
func waitBlockedN(t *testing.T, c *rawPeer, n int) {
	t.Helper()
	want := "blocked_clients:" + string(rune('0'+n)) + "\r\n"
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(c.do("INFO", "clients"), want) {
		if time.Now().After(deadline) {
			t.Fatalf("never %d blocked clients", n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestClientPauseHoldsExpiry checks S98's expiry: keys that expire while
// clients are paused (set in the MULTI that paused, as Redis's unit "Test
// both active and passive expires are skipped during client pause") read
// as gone at once, but the expiry sweep takes them only after UNPAUSE:
// while paused sweeps come and go (counted by the hold function) and
// INFO's keys still counts them and expired_keys does not grow (nothing
// removed, so no "expired" event either); after UNPAUSE both go, counted
// in expired_keys (S102), and their "expired" events come.
func TestClientPauseHoldsExpiry(t *testing.T) {
	cache, err := tier.Open(tier.Options{HotBytes: testHotBytes, SweepInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cache.Close() })
	s, path := startServerWith(t, cache, nil)
	var held atomic.Int64
	cache.HoldSweep(func() bool { // the server's own hook, counting its holds
		on := s.pause.on.Load()
		if on {
			held.Add(1)
		}
		return on
	})
	c, sub := dialPeer(t, path), dialPeer(t, path)
	c.do("CONFIG", "SET", "notify-keyspace-events", "Ex")
	sub.do("SUBSCRIBE", "__keyevent@0__:expired")
	keys := func() string {
		for _, l := range strings.Split(c.do("INFO", "tiers"), "\r\n") {
			if strings.HasPrefix(l, "keys:") {
				return l
			}
		}
		return ""
	}
	expired := func() float64 { return infoNum(t, c.do("INFO", "stats"), "expired_keys") }
	for _, args := range [][]string{
		// 100 ms: they expire once the pause is on, past a sweep that
		// began before it (which stops at its next shard, T62)
		{"MULTI"}, {"SET", "a", "1", "PX", "100"}, {"SET", "b", "1", "PX", "100"},
		{"CLIENT", "PAUSE", "1000000", "WRITE"}, {"EXEC"},
	} {
		c.do(args...)
	}
	waitUntil(t, "both keys read as gone", func() bool { return c.do("EXISTS", "a", "b") == ":0\r\n" })
	n := held.Load()
	waitUntil(t, "two sweeps held after the expiry", func() bool { return held.Load() >= n+2 })
	if k := keys(); k != "keys:2" {
		t.Errorf("S98: while paused INFO tiers %q, want keys:2 (the sweep removed an expired key)", k)
	}
	if n := expired(); n != 0 {
		t.Errorf("S98: while paused expired_keys:%v, want 0", n)
	}
	c.do("CLIENT", "UNPAUSE")
	waitUntil(t, "the sweep after UNPAUSE", func() bool { return keys() == "keys:0" })
	if n := expired(); n != 2 {
		t.Errorf("S102: after UNPAUSE expired_keys:%v, want 2", n)
	}
	for range 2 {
		if r := sub.read(10 * time.Second); !strings.Contains(r, "expired") {
			t.Errorf("an expired event after UNPAUSE: %q", r)
		}
	}
}

// waitUntil polls cond until it holds, failing after a minute.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestClientPauseNoWriteAfterOK checks S97's promise that no write it
// covers runs once CLIENT PAUSE WRITE answered: a SET, an EXEC of a
// queued SET and an EVAL that writes, sent while an EXEC that pauses
// holds the transaction lock (its MIGRATE waits for a target that never
// answers), run only after UNPAUSE, whether they arrived while the EXEC
// ran (they then waited for the lock and look again) or after.
func TestClientPauseNoWriteAfterOK(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() { // a target that takes connections and never answers
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	_, path := startServer(t, nil)
	p, x, r, e, y := dialPeer(t, path), dialPeer(t, path), dialPeer(t, path), dialPeer(t, path), dialPeer(t, path)
	r.do("SET", "k", "old")
	r.do("SET", "m", "v")
	e.do("MULTI")
	e.do("SET", "k", "exec")
	for _, args := range [][]string{{"MULTI"}, {"MIGRATE", host, port, "m", "0", "300"}, {"CLIENT", "PAUSE", "1000000", "WRITE"}} {
		p.do(args...)
	}
	p.send("EXEC")
	time.Sleep(50 * time.Millisecond) // not a bound: the SET is checked either way
	x.send("SET", "k", "new")
	e.send("EXEC")
	y.send("EVAL", "return redis.call('set', KEYS[1], 'eval')", "1", "k")
	if rep := p.read(10 * time.Second); !strings.Contains(rep, "IOERR") || !strings.HasSuffix(rep, "+OK\r\n") {
		t.Fatalf("EXEC: %q", rep)
	}
	if got := r.do("GET", "k"); got != "$3\r\nold\r\n" {
		t.Errorf("GET k after CLIENT PAUSE WRITE answered: %q, want old (a SET ran in the pause)", got)
	}
	r.do("CLIENT", "UNPAUSE")
	for _, c := range []struct {
		conn *rawPeer
		want string
	}{{x, "+OK\r\n"}, {e, "*1\r\n+OK\r\n"}, {y, "+OK\r\n"}} {
		if rep := c.conn.read(10 * time.Second); rep != c.want {
			t.Errorf("a held write's reply after UNPAUSE: %q, want %q", rep, c.want)
		}
	}
	if got := r.do("GET", "k"); got == "$3\r\nold\r\n" {
		t.Errorf("GET k after UNPAUSE: %q, want one of the held writes'", got)
	}
}

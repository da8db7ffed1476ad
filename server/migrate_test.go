package server

import (
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The tests of MIGRATE (S93-S95): tiercache migrating to redis-server
// 7.0 targets, and its replies diffed with redis-server's as the source.

// startRedisTCP starts a redis-server that also listens on a loopback
// TCP port (MIGRATE's targets are TCP) and returns its socket and port.
func startRedisTCP(t *testing.T, extra ...string) (sock, port string) {
	t.Helper()
	port = strconv.Itoa(freePort(t))
	return startRedis(t, append([]string{"--port", port, "--bind", "127.0.0.1"}, extra...)...), port
}

// silentTarget listens on loopback and accepts connections that it reads
// from and never answers (an unresponsive target); it returns the port.
func silentTarget(t *testing.T) string {
	t.Helper()
	return cannedTarget(t, "")
}

// closingTarget listens on loopback and closes each connection as soon
// as it is accepted; it returns the port.
func closingTarget(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { l.Close(); <-done })
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// TestMigrateToRedis checks S93: keys of every type and encoding that
// tiercache migrates to a redis-server 7.0 arrive with the same value
// and their TTL, one at a time and with KEYS, to database 0 and another;
// COPY keeps the source, REPLACE replaces, BUSYKEY and the target's AUTH
// errors are passed on with the source kept, NOKEY when nothing exists;
// a target that does not answer, or is not there, gets IOERR and the
// source is unchanged.
func TestMigrateToRedis(t *testing.T) {
	r := rand.New(rand.NewPCG(diffSeed(t), 93))
	tsock, tport := startRedisTCP(t)
	psock, pport := startRedisTCP(t, "--requirepass", "pw")
	_, sock := startServerWith(t, newTierCache(t), nil)
	o, tgt, ptgt := dialPeer(t, sock), dialPeer(t, tsock), dialPeer(t, psock)
	ptgt.do("AUTH", "pw")
	expect := func(c *rawPeer, want string, args ...string) {
		t.Helper()
		if got := c.do(args...); got != want {
			t.Fatalf("%.120q: %q, want %q", args, got, want)
		}
	}
	migrate := func(port, key string, opts ...string) string {
		t.Helper()
		return o.do(append([]string{"MIGRATE", "127.0.0.1", port, key, "0", "5000"}, opts...)...)
	}

	keys := dumpValues(r, func(args ...string) {
		if rep := o.do(args...); strings.HasPrefix(rep, "-") {
			t.Fatalf("%.80q: %q", args, rep)
		}
	})
	want := map[string]string{}
	for i, k := range keys {
		want[k] = dumpState(o, k)
		if i%4 == 1 {
			expect(o, ":1\r\n", "PEXPIRE", k, "100000")
		}
	}
	// One at a time, then the rest with KEYS (a missing key among them).
	half := len(keys) / 2
	for _, k := range keys[:half] {
		expect(o, "+OK\r\n", "MIGRATE", "127.0.0.1", tport, k, "0", "5000")
	}
	if rep := migrate(tport, "", append([]string{"KEYS", "missing"}, keys[half:]...)...); rep != "+OK\r\n" {
		t.Fatalf("MIGRATE KEYS: %q", rep)
	}
	for i, k := range keys {
		expect(o, ":0\r\n", "EXISTS", k)
		if got := dumpState(tgt, k); got != want[k] {
			t.Fatalf("%s on the target:\n %.300q\n want %.300q", k, got, want[k])
		}
		ttl, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(tgt.do("PTTL", k), ":")))
		if i%4 == 1 && (ttl <= 0 || ttl > 100000) || i%4 != 1 && ttl != -1 {
			t.Fatalf("PTTL %s on the target: %d", k, ttl)
		}
	}

	expect(o, "+NOKEY\r\n", "MIGRATE", "127.0.0.1", tport, "missing", "0", "5000")
	expect(o, "+NOKEY\r\n", "MIGRATE", "127.0.0.1", tport, "", "0", "5000", "KEYS", "missing", "gone")

	// COPY keeps the source; then BUSYKEY without REPLACE, kept; REPLACE.
	o.do("SET", "c", "one")
	expect(o, "+OK\r\n", "MIGRATE", "127.0.0.1", tport, "c", "0", "5000", "COPY")
	expect(o, "$3\r\none\r\n", "GET", "c")
	expect(tgt, "$3\r\none\r\n", "GET", "c")
	o.do("SET", "c", "two")
	expect(o, "-ERR Target instance replied with error: BUSYKEY Target key name already exists.\r\n",
		"MIGRATE", "127.0.0.1", tport, "c", "0", "5000")
	expect(o, "$3\r\ntwo\r\n", "GET", "c")
	expect(o, "+OK\r\n", "MIGRATE", "127.0.0.1", tport, "c", "0", "5000", "REPLACE")
	expect(o, ":0\r\n", "EXISTS", "c")
	expect(tgt, "$3\r\ntwo\r\n", "GET", "c")

	// Another database of the target.
	o.do("SET", "d", "db3")
	expect(o, "+OK\r\n", "MIGRATE", "127.0.0.1", tport, "d", "3", "5000")
	tgt.do("SELECT", "3")
	expect(tgt, "$3\r\ndb3\r\n", "GET", "d")
	tgt.do("SELECT", "0")

	// A target with requirepass: no AUTH, a wrong one, AUTH, AUTH2.
	o.do("SET", "a", "1")
	expect(o, "-ERR Target instance replied with error: NOAUTH Authentication required.\r\n", "MIGRATE", "127.0.0.1", pport, "a", "0", "5000")
	expect(o, "-ERR Target instance replied with error: WRONGPASS invalid username-password pair or user is disabled.\r\n",
		"MIGRATE", "127.0.0.1", pport, "a", "0", "5000", "AUTH", "nope")
	expect(o, "$1\r\n1\r\n", "GET", "a")
	expect(o, "+OK\r\n", "MIGRATE", "127.0.0.1", pport, "a", "0", "5000", "AUTH", "pw")
	expect(ptgt, "$1\r\n1\r\n", "GET", "a")
	o.do("SET", "a2", "2")
	expect(o, "+OK\r\n", "MIGRATE", "127.0.0.1", pport, "", "0", "5000", "AUTH2", "default", "pw", "KEYS", "a2")
	expect(ptgt, "$1\r\n2\r\n", "GET", "a2")

	// Targets that never answer, close at once, or are not there.
	o.do("SET", "s", "v")
	closed := strconv.Itoa(freePort(t))
	for _, c := range []struct{ port, timeout, want string }{
		{silentTarget(t), "200", "-IOERR error or timeout reading to target instance\r\n"},
		{closingTarget(t), "2000", "-IOERR error or timeout reading to target instance\r\n"},
		{closed, "1000", "-IOERR error or timeout writing to target instance\r\n"}, // Redis's connect fails the first write
	} {
		expect(o, c.want, "MIGRATE", "127.0.0.1", c.port, "", "0", c.timeout, "KEYS", "s", "missing")
		expect(o, "$1\r\nv\r\n", "GET", "s")
	}
	expect(o, "-IOERR error or timeout connecting to the client\r\n", "MIGRATE", "", tport, "s", "0", "1000")
	expect(o, "$1\r\nv\r\n", "GET", "s")
}

// TestMigrateMatchesRedis checks S93 reply for reply: MIGRATE on
// tiercache and on redis-server 7.0, each migrating to its own
// redis-server target holding the same keys, answer the same for the
// syntax and argument errors in migrateCommand's order, NOKEY, OK with
// COPY, REPLACE and KEYS, BUSYKEY passed on (also after other keys were
// migrated, which are then deleted), a target database out of range, an
// unreachable or silent target; leave the same keys on both sides;
// publish the same "del" events; COMMAND GETKEYS names the same keys,
// and monitors see AUTH's and AUTH2's arguments redacted alike. In RESP2
// and RESP3.
func TestMigrateMatchesRedis(t *testing.T) {
	silent := silentTarget(t)
	closed := strconv.Itoa(freePort(t))
	for _, proto := range []int{2, 3} {
		t.Run("RESP"+strconv.Itoa(proto), func(t *testing.T) {
			p := newPeers(t, 3, proto, nil)
			t1sock, t1port := startRedisTCP(t)
			t2sock, t2port := startRedisTCP(t)
			t1, t2 := dialPeer(t, t1sock), dialPeer(t, t2sock)
			targets := func(args ...string) {
				t.Helper()
				if a, b := t1.do(args...), t2.do(args...); a != b {
					t.Fatalf("targets %q: %q and %q", args, a, b)
				}
			}
			// same runs MIGRATE on both, each to its target (port "T",
			// or a third argument that starts with T: the port then the
			// rest), and compares the replies.
			same := func(args ...string) {
				t.Helper()
				a := slices.Clone(args)
				b := slices.Clone(args)
				for i := range args {
					if rest, ok := strings.CutPrefix(args[i], "T"); ok && (i == 2 || args[i] == "T") {
						a[i], b[i] = t1port+rest, t2port+rest // "T9x": the port with more after it, which atoi ignores
					}
				}
				ours, peer := p.ours[0].do(a...), p.peer[0].do(b...)
				if ours != peer {
					t.Errorf("%q:\n tiercache    %q\n redis-server %q", args, ours, peer)
				}
			}
			p.same(0, "CONFIG", "SET", "notify-keyspace-events", "KEA")
			p.same(1, "SUBSCRIBE", "__keyevent@0__:del")
			fill := func() {
				p.same(0, "FLUSHALL")
				targets("FLUSHALL")
				p.same(0, "SET", "a", "1")
				p.same(0, "RPUSH", "l", "x", "y")
				p.same(0, "SADD", "s", "m")
				p.same(0, "HSET", "h", "f", "v")
				p.same(0, "ZADD", "z", "1", "m")
				p.same(0, "SET", "e", "ttl", "PX", "100000")
			}
			fill()
			for _, args := range [][]string{
				{"MIGRATE", "127.0.0.1", "T", "a", "0"},
				{"MIGRATE", "127.0.0.1", "T", "a", "0", "1000", "FOO"},
				{"MIGRATE", "127.0.0.1", "T", "a", "0", "1000", "COPY", "AUTH"},
				{"MIGRATE", "127.0.0.1", "T", "a", "0", "1000", "AUTH2", "u"},
				{"MIGRATE", "127.0.0.1", "T", "a", "0", "1000", "KEYS", "l"},
				{"MIGRATE", "127.0.0.1", "T", "a", "0", "1000", "KEYS"},
				{"MIGRATE", "127.0.0.1", "T", "a", "0", "1000", "FOO", "KEYS", "l"},
				{"MIGRATE", "127.0.0.1", "T", "a", "x", "y"},
				{"MIGRATE", "127.0.0.1", "T", "a", "x", "1000"},
				{"MIGRATE", "127.0.0.1", "T", "a", "0", "1.5"},
				{"MIGRATE", "127.0.0.1", "T", "missing", "0", "1000"},
				{"MIGRATE", "127.0.0.1", "T", "", "0", "1000"},
				{"MIGRATE", "127.0.0.1", "T", "", "0", "1000", "KEYS"},
				{"MIGRATE", "127.0.0.1", "T", "", "0", "1000", "KEYS", "missing"},
				{"MIGRATE", "127.0.0.1", closed, "a", "0", "1000"},
				{"MIGRATE", "", "T", "a", "0", "1000"},
				{"MIGRATE", "127.0.0.1", "x", "a", "0", "1000"},
				{"MIGRATE", "127.0.0.1", "T", "a", "0", "1000", "COPY", "KEYS"},
				{"MIGRATE", "127.0.0.1", "Tx", "z", "0", "1000", "COPY"},
				{"MIGRATE", "127.0.0.1", silent, "a", "0", "100"},
				{"MIGRATE", "127.0.0.1", "T", "a", "-1", "1000"},                      // no SELECT: Redis takes -1 for a new connection's database
				{"MIGRATE", "127.0.0.1", "T", "h", "0", "1000", "COPY", "AUTH", "pw"}, // AUTH to a target without a password
				{"MIGRATE", "127.0.0.1", "T", "s", "0", "0", "COPY"},
				{"MIGRATE", "127.0.0.1", "T", "a", "0", "1000"},
				{"MIGRATE", "127.0.0.1", "T", "a", "0", "1000"}, // NOKEY now
				{"MIGRATE", "127.0.0.1", "T", "", "0", "1000", "COPY", "KEYS", "l", "s", "missing"},
				{"MIGRATE", "127.0.0.1", "T", "", "0", "1000", "KEYS", "l", "s", "h"},               // BUSYKEY for l and s, h migrated
				{"MIGRATE", "127.0.0.1", "T", "", "0", "-5", "replace", "keys", "l", "s", "z", "e"}, // REPLACE
				{"MIGRATE", "127.0.0.1", "T", "l", "2", "1000"},
			} {
				same(args...)
				for _, k := range []string{"a", "l", "s", "h", "z", "e", "missing"} {
					p.same(0, "EXISTS", k)
					if a, b := t1.do("EXISTS", k), t2.do("EXISTS", k); a != b {
						t.Errorf("after %q, EXISTS %s on the targets: %q, %q", args, k, a, b)
					}
				}
				if rep := t1.do("PTTL", "e"); rep != ":-2\r\n" && (rep == ":-1\r\n" || strings.HasPrefix(rep, "-")) {
					t.Errorf("PTTL e on the target: %q", rep)
				}
				p.events(1, "the events after "+strings.Join(args, " "))
			}
			fill()
			same("EVAL", "return redis.call('MIGRATE', '127.0.0.1', ARGV[1], KEYS[1], 0, 1000)", "1", "a", "T")
			p.same(0, "MULTI")
			same("MIGRATE", "127.0.0.1", "T", "l", "0", "1000", "COPY")
			same("MIGRATE", "127.0.0.1", "T", "", "0", "1000", "KEYS", "l", "s")
			p.same(0, "EXEC")
			p.events(1, "the events after MULTI")
			for _, args := range [][]string{
				{"MIGRATE", "h", "p", "k", "0", "1000"},
				{"MIGRATE", "h", "p", "", "0", "1000"},
				{"MIGRATE", "h", "p", "", "0", "1000", "KEYS", "a", "b"},
				{"MIGRATE", "h", "p", "k", "0", "1000", "KEYS", "a", "b"},
				{"MIGRATE", "h", "p", "", "0", "1000", "COPY", "REPLACE", "AUTH", "keys", "KEYS", "a"},
				{"MIGRATE", "h", "p", "", "0", "1000", "AUTH", "keys", "x"},
				{"MIGRATE", "h", "p", "", "0", "1000", "AUTH2", "keys", "keys", "KEYS", "b"},
				{"MIGRATE", "h", "p", "", "0", "1000", "KEYS"},
				{"MIGRATE", "h", "p", "k", "0", "1000", "KEYS"},
				{"MIGRATE", "keys", "p", "k", "0", "1000", "x"},
				{"MIGRATE", "h", "p", "k", "0"},
			} {
				p.same(0, append([]string{"COMMAND", "GETKEYS"}, args...)...)
			}
			// AUTH's and AUTH2's arguments redacted for monitors.
			p.same(2, "MONITOR")
			for _, args := range [][]string{
				{"MIGRATE", "127.0.0.1", closed, "x", "0", "1000", "COPY", "AUTH", "secret"},
				{"MIGRATE", "127.0.0.1", closed, "", "0", "1000", "AUTH2", "user", "secret", "KEYS", "x", "auth"},
				{"MIGRATE", "127.0.0.1", closed, "x", "0", "1000", "AUTH"},
				{"MIGRATE", "127.0.0.1", closed, "x", "0", "1000", "AUTH", "secret", "FOO", "AUTH", "x"},
			} {
				same(args...)
			}
			p.same(0, "PING")
			if a, b := monitorLines(t, p.ours[2], `"PING"`), monitorLines(t, p.peer[2], `"PING"`); !slices.Equal(a, b) {
				t.Errorf("MONITOR:\n tiercache    %q\n redis-server %q", a, b)
			}
		})
	}
}

// TestMigrateEverywhere checks S95: the keys MIGRATE deletes go as DEL's
// do: WATCH is touched (not by COPY, nor by a MIGRATE that deleted
// nothing), tracking clients are told, also of the keys a MIGRATE that
// then answered an error deleted, a tenant's count drops, another sidecar
// sees the deletion through the remote tier; a hash with a field expiry
// left is refused before anything is sent; in cluster mode keys of two
// slots are CROSSSLOT and RESTORE-ASKING carries the keys; a tiercache
// target answers a database other than 0 with its SELECT error (and,
// as any target would, restores the keys sent behind it in its database
// 0).
func TestMigrateEverywhere(t *testing.T) {
	tsock, tport := startRedisTCP(t)
	tgt := dialPeer(t, tsock)
	_, sock := startServerWith(t, newRagTenantCache(t), nil)
	a, b := dialPeer(t, sock), dialPeer(t, sock)
	expect := func(c *rawPeer, want string, args ...string) {
		t.Helper()
		if got := c.do(args...); got != want {
			t.Fatalf("%q: %q, want %q", args, got, want)
		}
	}
	migrate := func(c *rawPeer, want string, args ...string) {
		t.Helper()
		expect(c, want, append([]string{"MIGRATE", "127.0.0.1", tport}, args...)...)
	}
	const busy = "-ERR Target instance replied with error: BUSYKEY Target key name already exists.\r\n"
	// WATCH: touched by a MIGRATE that deleted, not by COPY or BUSYKEY.
	for _, c := range []struct {
		args    []string
		reply   string
		aborted bool
	}{
		{[]string{"w", "0", "1000", "COPY"}, "+OK\r\n", false},
		{[]string{"w", "0", "1000"}, busy, false},
		{[]string{"w", "0", "1000", "REPLACE"}, "+OK\r\n", true},
	} {
		b.do("SET", "w", "v")
		expect(a, "+OK\r\n", "WATCH", "w")
		migrate(b, c.reply, c.args...)
		a.do("MULTI")
		a.do("PING")
		if got := a.do("EXEC"); (got == "*-1\r\n") != c.aborted {
			t.Fatalf("EXEC after MIGRATE %q of a WATCHed key: %q", c.args, got)
		}
	}
	// Tracking, also of the key migrated before the target's error.
	tgt.do("SET", "busy", "x")
	b.do("SET", "p1", "1")
	b.do("SET", "busy", "2")
	a.do("HELLO", "3")
	a.do("CLIENT", "TRACKING", "ON")
	a.do("GET", "p1")
	a.do("GET", "busy")
	migrate(b, busy, "", "0", "1000", "KEYS", "p1", "busy")
	if got := a.read(5 * time.Second); !strings.Contains(got, "invalidate") || !strings.Contains(got, "p1") || strings.Contains(got, "busy") {
		t.Fatalf("tracking after MIGRATE KEYS p1 busy: %q", got)
	}
	expect(b, ":0\r\n", "EXISTS", "p1")
	expect(b, "$1\r\n2\r\n", "GET", "busy")
	expect(tgt, "$1\r\n1\r\n", "GET", "p1")
	// A tenant's key.
	b.do("SET", "rag:k", "v")
	migrate(b, "+OK\r\n", "rag:k", "0", "1000")
	if info := b.do("INFO", "tenants"); !strings.Contains(info, "tenant_rag:") || !strings.Contains(info, ",keys=0,") {
		t.Fatalf("INFO tenants after the tenant's only key migrated: %q", info)
	}
	// A hash with a field expiry: refused, nothing sent.
	b.do("HSET", "h", "f", "1", "g", "2")
	b.do("HEXPIRE", "h", "1000", "FIELDS", "1", "f")
	if got := b.do("MIGRATE", "127.0.0.1", tport, "h", "0", "1000"); !strings.HasPrefix(got, "-ERR DUMP of a hash with field expiries") {
		t.Fatalf("MIGRATE of a hash with a field expiry: %q", got)
	}
	expect(b, ":1\r\n", "EXISTS", "h")
	expect(tgt, ":0\r\n", "EXISTS", "h")

	// Through the remote tier.
	ra, rb := remoteSidecarPair(t, "mig:")
	rb.do("SET", "r", "v")
	awaitReply(t, ra, "$1\r\nv\r\n", "GET", "r")
	expect(rb, "+OK\r\n", "MIGRATE", "127.0.0.1", tport, "r", "0", "1000")
	awaitReply(t, ra, ":0\r\n", "EXISTS", "r")

	// Cluster mode: CROSSSLOT, and RESTORE-ASKING.
	_, csock, _ := startClusterServer(t, nil)
	cl := dialPeer(t, csock)
	cl.do("AUTH", "pw")
	expect(cl, "-"+errCrossSlot+"\r\n", "MIGRATE", "127.0.0.1", tport, "", "0", "1000", "KEYS", "a", "b")
	cl.do("SET", "{t}a", "1")
	expect(cl, "+OK\r\n", "MIGRATE", "127.0.0.1", tport, "", "0", "1000", "KEYS", "{t}a", "{t}b")
	expect(tgt, "$1\r\n1\r\n", "GET", "{t}a")

	// A tiercache target: database 0, and another.
	ts, tcsock := startServerWith(t, newTierCache(t), func(o *Options) { o.TCPAddr, o.RequirePass = "127.0.0.1:0", "pw" })
	var tcport string
	for _, ad := range ts.Addrs() {
		if ta, ok := ad.(*net.TCPAddr); ok {
			tcport = strconv.Itoa(ta.Port)
		}
	}
	b.do("RPUSH", "tl", "1", "2")
	expect(b, "-ERR Target instance replied with error: ERR DB index is out of range\r\n", "MIGRATE", "127.0.0.1", tcport, "tl", "1", "1000", "AUTH", "pw")
	// As from redis-server: the RESTOREs are sent behind the SELECT, so
	// the target restored the key in its database 0; the source kept it.
	tc := dialPeer(t, tcsock)
	tc.do("AUTH", "pw")
	expect(tc, ":1\r\n", "EXISTS", "tl")
	expect(b, ":1\r\n", "EXISTS", "tl")
	expect(b, "+OK\r\n", "MIGRATE", "127.0.0.1", tcport, "tl", "0", "1000", "REPLACE", "AUTH", "pw")
	expect(b, ":0\r\n", "EXISTS", "tl")
	expect(tc, "*2\r\n$1\r\n1\r\n$1\r\n2\r\n", "LRANGE", "tl", "0", "-1")
}

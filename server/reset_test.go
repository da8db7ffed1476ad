package server

import (
	"bufio"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// pipeline sends cmds on connection i of both servers in one write each,
// then a marker ECHO, and fails unless everything each answered before
// the marker's reply is the same bytes: replies CLIENT REPLY drops are
// seen missing without waiting for what may not come. It returns
// tiercache's bytes.
func (p *peers) pipeline(i int, cmds ...[]string) string {
	p.t.Helper()
	const marker = "pipeline-end"
	var got [2]string
	for side, c := range []*rawPeer{p.ours[i], p.peer[i]} {
		var b []byte
		for _, args := range append(cmds, []string{"ECHO", marker}) {
			b = append(b, "*"+strconv.Itoa(len(args))+"\r\n"...)
			for _, a := range args {
				b = append(b, "$"+strconv.Itoa(len(a))+"\r\n"+a+"\r\n"...)
			}
		}
		if _, err := c.nc.Write(b); err != nil {
			p.t.Fatal(err)
		}
		var all strings.Builder
		for {
			r := c.read(10 * time.Second)
			if r == "" {
				p.t.Fatalf("conn %d %q: no marker after %q", i, cmds, all.String())
			}
			if r == "$"+strconv.Itoa(len(marker))+"\r\n"+marker+"\r\n" {
				break
			}
			all.WriteString(r)
		}
		got[side] = all.String()
	}
	if got[0] != got[1] {
		p.t.Errorf("conn %d %q:\n tiercache    %q\n redis-server %q", i, cmds, got[0], got[1])
	}
	return got[0]
}

// tcpAddr is s's TCP listener's address.
func tcpAddr(s *Server) string {
	for _, a := range s.Addrs() {
		if a.Network() == "tcp" {
			return a.String()
		}
	}
	return ""
}

// infoFields are the fields of a raw CLIENT INFO reply (RESP2's bulk or
// RESP3's verbatim string).
func infoFields(t *testing.T, raw string) map[string]string {
	t.Helper()
	_, body, ok := strings.Cut(raw, "\r\n")
	if !ok {
		t.Fatalf("CLIENT INFO reply %q", raw)
	}
	body = strings.TrimPrefix(body, "txt:")
	f := map[string]string{}
	for _, kv := range strings.Fields(body) {
		k, v, _ := strings.Cut(kv, "=")
		f[k] = v
	}
	return f
}

// sameInfo compares the fields of connection i's CLIENT INFO that say its
// state (not its address, id, age or buffers) on both servers.
func (p *peers) sameInfo(i int, what string) {
	p.t.Helper()
	ours, peer := infoFields(p.t, p.ours[i].do("CLIENT", "INFO")), infoFields(p.t, p.peer[i].do("CLIENT", "INFO"))
	for _, k := range []string{"name", "flags", "db", "sub", "psub", "ssub", "multi", "cmd", "user", "redir", "resp"} {
		if ours[k] != peer[k] {
			p.t.Errorf("%s: CLIENT INFO %s=%q, redis-server's %q", what, k, ours[k], peer[k])
		}
	}
}

// TestResetMatchesRedis checks S56's RESET: after SETNAME, TRACKING,
// WATCH, SUBSCRIBE, PSUBSCRIBE, MULTI and HELLO 3 it answers +RESET and
// leaves the connection as redis-server 7.0 leaves it (CLIENT INFO, no
// message for its channels, WATCH and MULTI gone, tracking off, RESP2),
// inside MULTI and on a subscribed RESP2 connection too, in RESP2 and
// RESP3.
func TestResetMatchesRedis(t *testing.T) {
	eachProto(t, 2, func(t *testing.T, p *peers, proto int) {
		p.same(0, "RESET", "x")
		p.same(0, "reset")
		p.sameInfo(0, "RESET of a fresh connection")
		p.same(0, "CLIENT", "SETNAME", "foo")
		p.same(0, "CLIENT", "NO-EVICT", "on") // kept: Redis 7.0 does not clear it (7.2 does)
		p.same(0, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "t:")
		p.same(0, "WATCH", "k")
		p.same(0, "SUBSCRIBE", "c1", "c2")
		p.sameRead(0, 10*time.Second, "second subscription")
		p.same(0, "PSUBSCRIBE", "p*")
		if proto == 3 { // a subscribed RESP2 connection runs neither
			p.same(0, "MULTI")
			p.same(0, "SET", "k", "queued")
			p.sameInfo(0, "before RESET")
		}
		p.same(0, "RESET")
		p.sameInfo(0, "after RESET")
		p.same(0, "CLIENT", "GETNAME")
		p.same(0, "CLIENT", "TRACKINGINFO")
		p.same(0, "EXEC")
		p.same(0, "GET", "k")
		p.same(1, "PUBLISH", "c1", "m")
		p.same(1, "PUBLISH", "p1", "m")
		p.same(1, "SET", "k", "changed")
		p.same(1, "SET", "t:1", "changed")
		p.same(0, "MULTI")
		p.same(0, "GET", "k")
		p.same(0, "EXEC") // the WATCH went with RESET
		p.same(0, "PING") // no message and no invalidation came before it

		// RESET ends MONITOR: the other connection's SET is not shown.
		p.same(0, "MONITOR")
		p.same(0, "RESET")
		p.same(1, "SET", "k", "monitored?")
		p.same(0, "PING")
		p.sameInfo(0, "after MONITOR and RESET")

		// RESET inside MULTI discards it, a failed one too.
		p.pipeline(0, []string{"MULTI"}, []string{"SET", "k", "v"}, []string{"RESET"}, []string{"EXEC"}, []string{"GET", "k"})
		p.pipeline(0, []string{"MULTI"}, []string{"NOSUCH"}, []string{"RESET"}, []string{"EXEC"})
		// HELLO 3 is undone: the next reply is RESP2's.
		p.ours[0].do("HELLO", "3", "SETNAME", "h") // its server and id differ
		p.peer[0].do("HELLO", "3", "SETNAME", "h")
		p.same(0, "RESET")
		p.same(0, "HGETALL", "nohash")
		p.same(0, "CLIENT", "GETNAME")
		p.sameInfo(0, "after HELLO 3 and RESET")
		// RESET turns CLIENT REPLY back on; a skipped RESET is not answered.
		p.pipeline(0, []string{"CLIENT", "REPLY", "OFF"}, []string{"RESET"}, []string{"PING"})
		p.pipeline(0, []string{"CLIENT", "REPLY", "SKIP"}, []string{"RESET"}, []string{"PING"})
		// Subscribed in RESP2 (RESET is one of the commands allowed).
		p.same(0, "SUBSCRIBE", "c")
		p.same(0, "RESET")
		p.same(1, "PUBLISH", "c", "m")
		p.same(0, "SET", "after", "v")
		p.same(0, "EVAL", "return redis.call('reset')", "0")
	})
}

// TestResetRequiresAuthAgain checks S56's RESET on a connection that had
// to AUTH (a TCP one here, every one in redis-server with requirepass):
// RESET is taken before AUTH, and after it the connection must AUTH
// again, as redis-server 7.0 answers.
func TestResetRequiresAuthAgain(t *testing.T) {
	rpath := startRedis(t, "--requirepass", "pw")
	s, _ := startServer(t, func(o *Options) { o.TCPAddr = "127.0.0.1:0"; o.RequirePass = "pw" })
	nc, err := net.Dial("tcp", tcpAddr(s))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	p := &peers{t: t, ours: []*rawPeer{{t: t, nc: nc, br: bufio.NewReader(nc)}}, peer: []*rawPeer{dialPeer(t, rpath)}}
	for _, args := range [][]string{
		{"RESET"}, {"GET", "x"}, {"AUTH", "pw"}, {"CLIENT", "SETNAME", "n"}, {"GET", "x"}, {"RESET"}, {"GET", "x"},
		{"CLIENT", "GETNAME"}, {"AUTH", "pw"}, {"GET", "x"},
	} {
		p.same(0, args...)
	}
	p.ours[0].do("HELLO", "3", "AUTH", "default", "pw") // its server and id differ
	p.peer[0].do("HELLO", "3", "AUTH", "default", "pw")
	for _, args := range [][]string{
		{"MULTI"}, {"RESET"}, {"PING"}, {"HGETALL", "x"}, {"CLIENT", "REPLY", "SKIP"}, {"AUTH", "pw"}, {"PING"}, {"HGETALL", "x"},
	} {
		p.same(0, args...)
	}
}

// TestLastSave checks LASTSAVE (S56): redis-server's arity error, and
// the server's start time in Unix seconds, which INFO persistence gives
// as rdb_last_save_time, as a redis-server that has not saved answers;
// in a script and in MULTI too.
func TestLastSave(t *testing.T) {
	before := time.Now().Unix()
	p := newPeers(t, 1, 2, nil)
	after := time.Now().Unix()
	p.same(0, "LASTSAVE", "x")
	p.same(0, "EVAL", "return type(redis.call('lastsave'))", "0")
	p.same(0, "MULTI")
	p.same(0, "LASTSAVE")
	if got := p.ours[0].do("EXEC"); !strings.HasPrefix(got, "*1\r\n:") {
		t.Errorf("EXEC of LASTSAVE: %q", got)
	}
	p.peer[0].do("EXEC")
	got := p.ours[0].do("LASTSAVE")
	n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(got, ":"), "\r\n"), 10, 64)
	if err != nil || n < before || n > after {
		t.Fatalf("LASTSAVE %q: want the start time, within [%d, %d]", got, before, after)
	}
	for _, c := range []*rawPeer{p.ours[0], p.peer[0]} {
		last := strings.TrimSuffix(c.do("LASTSAVE"), "\r\n")[1:]
		if info := c.do("INFO", "persistence"); !strings.Contains(info, "rdb_last_save_time:"+last+"\r\n") {
			t.Errorf("INFO persistence has no rdb_last_save_time:%s:\n%s", last, info)
		}
	}
}

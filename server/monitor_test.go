package server

import (
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// monitorStamp is what differs between two servers' MONITOR lines: the
// time and a Unix socket's path.
var monitorStamp = regexp.MustCompile(`^\+\d+\.\d{6} \[0 (unix:[^\]]+|lua|[^\]]+)\] `)

func maskMonitor(line string) string {
	return monitorStamp.ReplaceAllStringFunc(line, func(s string) string {
		if strings.Contains(s, "[0 lua]") {
			return "+T [0 lua] "
		}
		if strings.Contains(s, "[0 unix:/") {
			return "+T [0 unix:SOCK] "
		}
		return "+T [0 ADDR] "
	})
}

// monitorLines reads a monitor's lines up to the one that ends with end.
func monitorLines(t *testing.T, p *rawPeer, end string) []string {
	t.Helper()
	var out []string
	for {
		l := p.read(10 * time.Second)
		if l == "" {
			t.Fatalf("no line %q after %q", end, out)
		}
		if !strings.HasPrefix(l, "+") || !monitorStamp.MatchString(l) {
			t.Fatalf("not a MONITOR line: %q", l)
		}
		out = append(out, maskMonitor(l))
		if strings.HasSuffix(l, end+"\r\n") {
			return out
		}
	}
}

// TestMonitorMatchesRedis checks S60 against redis-server 7.0, the
// monitor in RESP2 and in RESP3: for the same commands of another client
// a monitor receives the same lines (the times and the socket's path
// masked): the arguments escaped as sdscatrepr escapes them, AUTH's and
// HELLO's passwords redacted where Redis redacts them, EXEC after its
// commands, a script's commands as "lua" after the EVAL, pipelined GETs
// one by one; admin commands (CONFIG GET, CLIENT LIST, SLOWLOG LEN) and
// commands refused before running not shown; MONITOR inside MULTI answers
// Redis's error in EXEC; the monitor's own command follows its reply.
func TestMonitorMatchesRedis(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run("RESP"+strconv.Itoa(proto), func(t *testing.T) {
			p := newPeers(t, 2, proto, nil)
			p.same(0, "MONITOR")
			p.ours[0].send("MONITOR") // ignored: no reply, the next one is PING's
			p.peer[0].send("MONITOR")
			p.same(0, "PING")
			pv := strconv.Itoa(proto)
			for _, c := range []struct {
				args    []string
				compare bool
			}{
				{[]string{"SET", "a", "x y\"z\n\r\t\a\b\x00\x7f~\xc3\xa9\\"}, true},
				{[]string{"AUTH", "foo"}, true},
				{[]string{"AUTH", "a", "b", "c"}, true},
				{[]string{"HELLO", pv, "AUTH", "default", "pw"}, false},
				{[]string{"HELLO", "4", "AUTH", "default", "pw"}, true},
				{[]string{"HELLO", pv, "SETNAME", "n1", "BAD", "AUTH", "default", "pw"}, true},
				{[]string{"MULTI"}, true}, {[]string{"SET", "x", "1"}, true}, {[]string{"GET", "x"}, true}, {[]string{"EXEC"}, true},
				{[]string{"MULTI"}, true}, {[]string{"SET", "a"}, true}, {[]string{"EXEC"}, true},
				{[]string{"MULTI"}, true}, {[]string{"MONITOR"}, true}, {[]string{"EXEC"}, true},
				{[]string{"EVAL", "redis.call('set','k','v') return 1", "0"}, true},
				{[]string{"EVAL", "return 1", "x"}, true},
				{[]string{"EVALSHA", strings.Repeat("f", 40), "0"}, true},
				{[]string{"SLOWLOG", "LEN"}, false},
				{[]string{"SLOWLOG", "LEN", "x"}, true},
				{[]string{"SLOWLOG", "HELP"}, true},
				{[]string{"CONFIG", "HELP"}, false},
				{[]string{"CONFIG", "GET", "maxmemory"}, false},
				{[]string{"CLIENT", "LIST"}, false},
				{[]string{"CLIENT", "KILL", "ID", "99999"}, true},
				{[]string{"CLIENT", "ID"}, false},
				{[]string{"CLIENT", "SETNAME", "n2"}, true},
				{[]string{"NOSUCHCMD", "x"}, true},
				{[]string{"GET"}, true},
				{[]string{"INCR", "a"}, true},
				{[]string{"PUBLISH", "ch", "m"}, true},
				{[]string{"RPUSH", "l", "1"}, true},
				{[]string{"LPOP", "l"}, true},
			} {
				if c.compare {
					p.same(1, c.args...)
				} else {
					p.ours[1].do(c.args...)
					p.peer[1].do(c.args...)
				}
			}
			for _, q := range []*rawPeer{p.ours[1], p.peer[1]} { // a pipelined run of GETs
				q.send("GET", "x")
				q.send("GET", "a")
				q.send("get", "x")
			}
			for range 3 {
				p.sameRead(1, 10*time.Second, "a pipelined GET")
			}
			p.same(1, "ECHO", "end")
			ours, peer := monitorLines(t, p.ours[0], `"ECHO" "end"`), monitorLines(t, p.peer[0], `"ECHO" "end"`)
			if strings.Join(ours, "") != strings.Join(peer, "") {
				t.Errorf("MONITOR lines:\n tiercache    %q\n redis-server %q", ours, peer)
			}
			// The monitor's own command: its reply, then its line.
			p.same(0, "PING")
			if a, b := maskMonitor(p.ours[0].read(10*time.Second)), maskMonitor(p.peer[0].read(10*time.Second)); a != b {
				t.Errorf("the monitor's PING: tiercache %q, redis-server %q", a, b)
			}
			if l := p.ours[1].do("CLIENT", "LIST"); !strings.Contains(l, " flags=OU ") {
				t.Errorf("CLIENT LIST shows no monitor on the socket (flags=OU, as Redis): %q", l)
			}
		})
	}
}

// TestMonitorOutputLimit checks S60's bound: a monitor that reads nothing
// is closed once what it was not sent passes MaxOutputBytes, counted in
// client_output_buffer_limit_disconnections; the clients it monitored
// are answered throughout, and once it is gone commands are shown to no
// one (the monitors' list is empty: one atomic load per command).
func TestMonitorOutputLimit(t *testing.T) {
	s, path := startServer(t, func(o *Options) { o.MaxOutputBytes = 1 << 20 })
	m := dialRaw(t, path)
	m.cmd("MONITOR")
	if got := m.reply(); got != "+OK" {
		t.Fatalf("MONITOR: %q", got)
	}
	c := dialRaw(t, path)
	val := strings.Repeat("v", 4000)
	// 2,000 SETs of 4 KB: 8 MB of lines, more than the limit and the
	// socket's buffers, to a monitor that reads none of them.
	for i := range 2000 {
		c.cmd("SET", "k"+strconv.Itoa(i), val)
		if got := c.reply(); got != "+OK" {
			t.Fatalf("SET %d: %q", i, got)
		}
	}
	for deadline := time.Now().Add(20 * time.Second); s.Stats().OutputLimitCloses == 0 || s.mon.list.Load() != nil; {
		if time.Now().After(deadline) {
			t.Fatalf("the monitor was not closed at the output limit: %d closes", s.Stats().OutputLimitCloses)
		}
		time.Sleep(5 * time.Millisecond)
	}
	m.nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	n, err := io.Copy(io.Discard, m.nc)
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("after the close: read %d bytes, then %v", n, err)
	}
	if n >= 2000*4000 {
		t.Fatalf("the monitor read all %d bytes: no limit", n)
	}
	c.cmd("PING")
	if got := c.reply(); got != "+PONG" {
		t.Fatalf("PING after the monitor closed: %q", got)
	}
}

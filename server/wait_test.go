package server

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// waitCases are WAIT's replies on a server without replicas: 0 at once
// when no replica is asked for or inside MULTI, 0 after the timeout, and
// its errors; a script may not call it.
var waitCases = [][]string{
	{"WAIT", "0", "0"}, {"WAIT", "-1", "0"}, {"WAIT", "0", "100"}, {"WAIT", "-5", "100000"},
	{"WAIT", "x", "0"}, {"WAIT", "1", "-1"}, {"WAIT", "1", "x"}, {"WAIT", "1", "1.5"}, {"WAIT", "0", "1.5"},
	{"WAIT", "0", "-1"}, {"WAIT", "x", "-1"}, {"WAIT", "99999999999999999999", "0"}, {"WAIT", "1", ""},
	{"WAIT", "1"}, {"WAIT", "0", "0", "0"}, {"WAIT", "1", "10"}, {"WAIT", "2", "1"},
	{"MULTI"}, {"WAIT", "1", "0"}, {"WAIT", "0", "0"}, {"EXEC"},
	{"MULTI"}, {"WAIT", "1", "0"}, {"WAIT", "1", "-1"}, {"EXEC"},
	{"EVAL", "return redis.pcall('wait', 1, 0)", "0"},
	{"EVAL", "return redis.call('wait', 0, 0)", "0"},
}

// TestWaitMatchesRedis (S57): WAIT answers as redis-server 7.0 without
// replicas does, in RESP2 and RESP3 (waitCases): 0 at once when it asks
// for no replica or runs in MULTI, its errors, refused in a script, and
// 0 once its timeout passes; blocked, it counts in blocked_clients and
// CLIENT LIST shows it (flags=b, cmd=wait) as Redis does.
func TestWaitMatchesRedis(t *testing.T) {
	eachProto(t, 2, func(_ *testing.T, p *peers, _ int) {
		for _, c := range waitCases {
			p.same(0, c...)
		}
		p.same(1, "WAIT", "1", "50") // 0 at its timeout
		p.ours[1].send("WAIT", "3", "0")
		p.peer[1].send("WAIT", "3", "0")
		p.waitBlocked(0, 1) // until it is killed
		flagsAndCmd := regexp.MustCompile(`flags=\S+|cmd=\S+`)
		o, r := p.ours[0].do("CLIENT", "LIST"), p.peer[0].do("CLIENT", "LIST")
		if a, b := flagsAndCmd.FindAllString(o, -1), flagsAndCmd.FindAllString(r, -1); !slices.Equal(a, b) {
			t.Errorf("CLIENT LIST beside a blocked WAIT: tiercache %q, redis-server %q", a, b)
		}
	})
}

// TestBlockedLMPopAndWaitEnd (S57): a BLMPOP or a WAIT blocked without a
// timeout ends on CLIENT KILL and on a hangup, taking nothing (a later
// push stays in the list), and at Server.Close; WAIT's timeout past the
// clock's range is refused as 7.2 refuses it.
func TestBlockedLMPopAndWaitEnd(t *testing.T) {
	s, path := startServerWith(t, newTierCache(t), nil)
	p := dialRaw(t, path)
	for _, blocking := range [][]string{{"BLMPOP", "0", "1", "q", "LEFT", "COUNT", "2"}, {"WAIT", "1", "0"}} {
		// CLIENT KILL
		w := dialExact(t, path)
		id := strings.TrimPrefix(strings.TrimSpace(w.do("CLIENT", "ID")), ":")
		w.send(blocking...)
		waitBlocked(t, s, 1)
		p.expect([]step{{[]string{"CLIENT", "KILL", "ID", id}, ":1"}})
		waitBlocked(t, s, 0)
		if r, err := readExact(w.br); err == nil {
			t.Errorf("%s killed: got %q, want the connection closed", blocking[0], r)
		}
		// hangup
		w = dialExact(t, path)
		w.send(blocking...)
		waitBlocked(t, s, 1)
		w.nc.Close()
		waitBlocked(t, s, 0)
		p.expect([]step{
			{[]string{"RPUSH", "q", "a"}, ":1"},
			{[]string{"LRANGE", "q", "0", "-1"}, "*[$a]"},
			{[]string{"DEL", "q"}, ":1"},
		})
	}
	p.expect([]step{{[]string{"WAIT", "1", "9223372036854775807"}, "-" + errTimeoutRange}})
	var ws []*exactConn
	for i, blocking := range [][]string{{"BLMPOP", "0", "1", "q", "RIGHT"}, {"WAIT", "1", "0"}} {
		w := dialExact(t, path)
		w.send(blocking...)
		waitBlocked(t, s, int64(i+1))
		ws = append(ws, w)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	for i, w := range ws {
		if r, err := readExact(w.br); err == nil {
			t.Errorf("blocked client %d got %q at shutdown, want the connection closed", i, r)
		}
	}
	if n := s.blk.waiting.Load(); n != 0 {
		t.Errorf("%d clients still blocked after Close", n)
	}
}

package server

import (
	"strings"
	"testing"
	"time"
)

// TestSlowlogBlockedCommand (S80): a blocked command is logged once it is
// served, with the arguments it was sent with, after what ran while it
// waited (Redis's unit/slowlog "Rewritten commands are logged as their
// original command"); the wait is no command's time: a command pipelined
// behind a BLPOP that timed out is not logged as slow, as by redis-server.
func TestSlowlogBlockedCommand(t *testing.T) {
	p := newPeers(t, 2, 2, nil)
	p.same(0, "CONFIG", "SET", "slowlog-log-slower-than", "0")
	for _, side := range [][]*rawPeer{p.ours, p.peer} {
		side[1].send("BLPOP", "l", "0")
	}
	p.waitBlocked(0, 1)
	p.same(0, "MULTI")
	p.same(0, "LPUSH", "l", "foo")
	p.same(0, "SLOWLOG", "RESET")
	p.same(0, "EXEC")
	p.sameRead(1, 5*time.Second, "BLPOP's reply")
	blpop := "$5\r\nBLPOP\r\n$1\r\nl\r\n$1\r\n0\r\n"
	for side, c := range []*rawPeer{p.ours[0], p.peer[0]} {
		if got := c.do("SLOWLOG", "GET", "1"); !strings.Contains(got, blpop) {
			t.Errorf("%s: newest slow log entry %q, want BLPOP l 0", []string{"tiercache", "redis-server"}[side], got)
		}
	}

	p.same(0, "CONFIG", "SET", "slowlog-log-slower-than", "200000") // 200 ms
	p.same(0, "SLOWLOG", "RESET")
	for _, side := range [][]*rawPeer{p.ours, p.peer} {
		side[1].send("BLPOP", "l", "0.5")
		side[1].send("PING")
	}
	p.sameRead(1, 5*time.Second, "BLPOP's timeout")
	p.sameRead(1, 5*time.Second, "PING's reply")
	p.same(0, "SLOWLOG", "LEN")
}

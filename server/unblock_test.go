package server

import (
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestClientUnblockMatchesRedis checks S56's CLIENT UNBLOCK against
// redis-server 7.0, in RESP2 and RESP3: its errors (the reason checked
// before the id), 0 for a client that is not blocked or does not exist,
// and for each blocking command 1 and the blocked client's answer: its
// timeout's null with TIMEOUT (the default), -UNBLOCKED with ERROR; the
// client then runs what it pipelined behind.
func TestClientUnblockMatchesRedis(t *testing.T) {
	eachProto(t, 2, func(t *testing.T, p *peers, proto int) {
		ours, peer := p.ours[0].do("CLIENT", "ID"), p.peer[0].do("CLIENT", "ID")
		id := func(raw string) string { return strings.TrimSuffix(strings.TrimPrefix(raw, ":"), "\r\n") }
		oid, pid := id(ours), id(peer)
		both := func(args ...string) { // args with the blocked client's id where "ID" stands
			p.t.Helper()
			oa, pa := make([]string, len(args)), make([]string, len(args))
			for i, a := range args {
				oa[i], pa[i] = a, a
				if a == "ID" {
					oa[i], pa[i] = oid, pid
				}
			}
			if a, b := p.ours[1].do(oa...), p.peer[1].do(pa...); a != b {
				t.Errorf("%q: tiercache %q, redis-server %q", args, a, b)
			}
		}
		for _, args := range [][]string{
			{"CLIENT", "UNBLOCK"}, {"CLIENT", "UNBLOCK", "x"}, {"CLIENT", "UNBLOCK", "x", "bad"},
			{"CLIENT", "UNBLOCK", " 1"}, {"CLIENT", "UNBLOCK", "-1"}, {"CLIENT", "UNBLOCK", "99999999"},
			{"CLIENT", "UNBLOCK", "1", "timeout", "x"}, {"CLIENT", "UNBLOCK", "ID", "bad"},
			{"CLIENT", "UNBLOCK", "ID"}, {"CLIENT", "UNBLOCK", "ID", "error"},
		} {
			both(args...)
		}
		for _, block := range [][]string{
			{"BLPOP", "l1", "l2", "0"}, {"BRPOP", "l1", "0"}, {"BLMOVE", "l1", "d", "LEFT", "RIGHT", "0"},
			{"BRPOPLPUSH", "l1", "d", "0"}, {"BZPOPMIN", "z1", "0"}, {"BZPOPMAX", "z1", "100"},
			{"BZMPOP", "0", "2", "z1", "z2", "MIN", "COUNT", "2"}, {"BLMPOP", "0", "2", "l1", "l2", "LEFT"},
			{"WAIT", "1", "0"},
		} {
			for _, how := range [][]string{nil, {"TIMEOUT"}, {"error"}} {
				p.ours[0].send(block...)
				p.peer[0].send(block...)
				p.ours[0].send("PING", "behind")
				p.peer[0].send("PING", "behind")
				peerBlocked(t, p.ours[1], 1)
				peerBlocked(t, p.peer[1], 1)
				both(append([]string{"CLIENT", "UNBLOCK", "ID"}, how...)...)
				p.sameRead(0, 10*time.Second, strings.Join(block, " ")+" unblocked "+strings.Join(how, ""))
				p.sameRead(0, 10*time.Second, "the command pipelined behind")
				both("CLIENT", "UNBLOCK", "ID") // no longer blocked
			}
		}
		p.same(1, "EXISTS", "d", "l1", "z1")
		both("INFO", "errorstats") // -UNBLOCKED counted, as Redis counts it
	})
}

// TestClientUnblockRacesPush checks that CLIENT UNBLOCK and a push that
// would serve the same blocked client at the same moment have exactly one
// outcome (run it with -race): either UNBLOCK answers 1, the client gets
// its timeout's (or ERROR's) answer and the element stays on the list, or
// it answers 0 and the client gets the element; and likewise against the
// blocked command's own timeout.
func TestClientUnblockRacesPush(t *testing.T) {
	s, path := startServerWith(t, newTierCache(t), nil)
	blocked, pusher, unblocker := dialExact(t, path), dialRaw(t, path), dialRaw(t, path)
	for _, nc := range []net.Conn{blocked.nc, pusher.nc, unblocker.nc} {
		nc.SetDeadline(time.Now().Add(10 * time.Minute)) // a slow machine under -race: no timing is asserted
	}
	id := strings.TrimPrefix(strings.TrimSuffix(blocked.do("CLIENT", "ID"), "\r\n"), ":")
	rounds := 200
	if testing.Short() {
		rounds = 20
	}
	won := [2]int{}
	for i := range rounds {
		how := []string{"TIMEOUT", "ERROR"}[i%2]
		blocked.send("BLPOP", "race", "0")
		waitBlocked(t, s, 1)
		var wg sync.WaitGroup
		var unblocked string
		wg.Add(2)
		go func() {
			defer wg.Done()
			pusher.cmd("RPUSH", "race", "e")
			pusher.reply()
		}()
		go func() {
			defer wg.Done()
			unblocker.cmd("CLIENT", "UNBLOCK", id, how)
			unblocked = unblocker.reply()
		}()
		wg.Wait()
		got := blocked.reply()
		pusher.cmd("LPOP", "race")
		left := pusher.reply()
		switch {
		case unblocked == ":1" && how == "TIMEOUT" && got == "*-1\r\n" && left == "$e":
			won[0]++
		case unblocked == ":1" && how == "ERROR" && got == "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n" && left == "$e":
			won[0]++
		case unblocked == ":0" && got == "*2\r\n$4\r\nrace\r\n$1\r\ne\r\n" && left == "nil":
			won[1]++
		default:
			t.Fatalf("round %d (%s): UNBLOCK %q, the blocked client got %q, the list kept %q", i, how, unblocked, got, left)
		}
	}
	if s.blk.waiting.Load() != 0 {
		t.Fatalf("%d waiters left", s.blk.waiting.Load())
	}
	t.Logf("UNBLOCK first %d times, the push %d", won[0], won[1])

	// Against the blocked command's own timeout (1 ms): UNBLOCK ERROR
	// answers 1 and the client gets -UNBLOCKED, or 0 (it timed out, or
	// had not blocked yet) and the client gets its timeout's null; never
	// both, never neither.
	won = [2]int{}
	for i := range rounds {
		blocked.send("BLPOP", "race", "0.001")
		unblocker.cmd("CLIENT", "UNBLOCK", id, "ERROR")
		unblocked, got := unblocker.reply(), blocked.reply()
		switch {
		case unblocked == ":1" && got == "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n":
			won[0]++
		case unblocked == ":0" && got == "*-1\r\n":
			won[1]++
		default:
			t.Fatalf("round %d: UNBLOCK %q, the blocked client got %q", i, unblocked, got)
		}
	}
	if s.blk.waiting.Load() != 0 {
		t.Fatalf("%d waiters left", s.blk.waiting.Load())
	}
	t.Logf("against the timeout: UNBLOCK first %d times, not %d", won[0], won[1])
}

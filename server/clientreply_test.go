package server

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestClientReplyMatchesRedis checks S56's CLIENT REPLY against
// redis-server 7.0, in RESP2 and RESP3, each sequence pipelined in one
// write: OFF drops every reply (errors, QUEUED, a protocol's refusals)
// until ON answers +OK; SKIP drops the next command's, whatever it is
// (an unknown one, another SKIP, MULTI), and nothing while OFF; inside
// EXEC a SKIP takes the command after EXEC; runs of pipelined GETs and
// SETs (getRun, setRun) are dropped or answered one by one; pushes
// (messages, subscription confirmations, invalidations) still come.
func TestClientReplyMatchesRedis(t *testing.T) {
	eachProto(t, 2, func(t *testing.T, p *peers, proto int) {
		cr := func(mode string) []string { return []string{"CLIENT", "REPLY", mode} }
		p.same(0, "CLIENT", "REPLY")
		p.same(0, "CLIENT", "REPLY", "on", "x")
		p.same(0, "CLIENT", "REPLY", "maybe")
		p.same(0, "CLIENT", "REPLY", "ON")
		p.pipeline(0, cr("OFF"), []string{"SET", "a", "1"}, []string{"NOSUCH"}, []string{"INCR", "a"},
			[]string{"GET", "a"}, cr("bad"), []string{"CLIENT", "REPLY"}, cr("SKIP"), cr("ON"), []string{"GET", "a"})
		p.pipeline(0, cr("SKIP"), []string{"NOSUCH"}, []string{"PING"})
		p.pipeline(0, cr("SKIP"), cr("SKIP"), []string{"PING"}, []string{"PING"})
		p.pipeline(0, cr("SKIP"), cr("ON"), []string{"PING"})
		p.pipeline(0, cr("OFF"), cr("SKIP"), cr("ON"), []string{"PING"})
		p.pipeline(0, cr("SKIP"), []string{"MULTI"}, []string{"PING"}, []string{"EXEC"})
		p.pipeline(0, []string{"MULTI"}, cr("SKIP"), []string{"PING"}, []string{"PING"}, []string{"EXEC"}, []string{"PING"}, []string{"PING"})
		// OFF inside EXEC drops the rest of its array, as in Redis: the
		// PINGs after it fill the array header sent before.
		p.pipeline(0, []string{"MULTI"}, cr("OFF"), []string{"INCR", "a"}, cr("ON"), []string{"INCR", "a"}, []string{"EXEC"},
			[]string{"PING"}, []string{"PING"})
		p.pipeline(0, []string{"MULTI"}, cr("OFF"), []string{"INCR", "a"}, []string{"EXEC"}, []string{"GET", "a"}, cr("ON"),
			[]string{"PING"}, []string{"PING"})
		// The GETs and SETs pipelined behind one, taken together
		// where replies are sent.
		var run [][]string
		for i := range 20 {
			run = append(run, []string{"SET", "g" + strconv.Itoa(i%3), strconv.Itoa(i)})
			if i == 7 || i == 13 {
				run = append(run, cr("SKIP"))
			}
		}
		for i := range 20 {
			run = append(run, []string{"GET", "g" + strconv.Itoa(i%4)})
			if i == 3 || i == 11 || i == 12 {
				run = append(run, cr("SKIP"))
			}
		}
		p.pipeline(0, run...)
		p.pipeline(0, append(append([][]string{cr("OFF")}, run...), cr("ON"), []string{"GET", "g1"})...)
		// Values larger than the write buffer (sent by reference or
		// written through) are dropped too, and the flush after finds
		// nothing of them.
		big := strings.Repeat("v", 200<<10)
		p.same(0, "SET", "big", big)
		bigRun := [][]string{cr("OFF")}
		for range 10 {
			bigRun = append(bigRun, []string{"GET", "big"}, []string{"MGET", "big", "big"}, []string{"GETRANGE", "big", "0", "-1"})
		}
		bigRun = append(bigRun, cr("ON"), []string{"STRLEN", "big"}, cr("SKIP"), []string{"GET", "big"}, []string{"GET", "big"},
			[]string{"GET", "big"})
		if got := p.pipeline(0, bigRun...); len(got) != len(":204800\r\n")+2*len("$204800\r\n\r\n")+2*len(big)+len("+OK\r\n") {
			t.Errorf("big values under CLIENT REPLY: %d bytes answered", len(got))
		}
		// A blocking command whose reply is skipped, answered by a push.
		p.ours[0].send("CLIENT", "REPLY", "SKIP")
		p.peer[0].send("CLIENT", "REPLY", "SKIP")
		p.ours[0].send("BLPOP", "bl", "0")
		p.peer[0].send("BLPOP", "bl", "0")
		peerBlocked(t, p.ours[1], 1)
		peerBlocked(t, p.peer[1], 1)
		p.same(1, "RPUSH", "bl", "x")
		p.same(0, "LLEN", "bl") // BLPOP took it; its answer was dropped
		// Pushes come under OFF: a subscription's confirmation and its
		// messages; an invalidation.
		p.same(0, "CLIENT", "TRACKING", "on")
		p.same(0, "GET", "tk")
		p.pipeline(0, cr("OFF"), []string{"GET", "tk"}, cr("ON"))
		p.ours[0].send("CLIENT", "REPLY", "OFF")
		p.peer[0].send("CLIENT", "REPLY", "OFF")
		p.same(1, "SET", "tk", "v")
		if proto == 3 {
			p.sameRead(0, 10*time.Second, "invalidation under CLIENT REPLY OFF")
		}
		p.same(0, "SUBSCRIBE", "ch")
		p.same(1, "PUBLISH", "ch", "m")
		p.sameRead(0, 10*time.Second, "message under CLIENT REPLY OFF")
		p.same(0, "UNSUBSCRIBE")
		p.same(0, "UNSUBSCRIBE")
		p.same(0, "CLIENT", "REPLY", "ON")
		p.same(0, "EVAL", "return redis.call('client', 'reply', 'off')", "0")
	})
}

// peerBlocked waits until c's server (tiercache's or redis-server's) has
// n blocked clients (INFO's blocked_clients), asking again after each
// answer.
func peerBlocked(t *testing.T, c *rawPeer, n int) {
	t.Helper()
	want := "blocked_clients:" + strconv.Itoa(n) + "\r\n"
	for i := 0; ; i++ {
		if r := c.do("INFO", "clients"); strings.Contains(r, want) {
			return
		}
		if i == 100000 {
			t.Fatalf("never %d blocked clients", n)
		}
		time.Sleep(time.Millisecond)
	}
}

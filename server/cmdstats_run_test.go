package server

import (
	"strings"
	"testing"
	"time"
)

// sameCmdStats fails unless the commandstats of names (calls, rejected,
// failed) are the same on both servers, asking on connection i.
func (p *peers) sameCmdStats(i int, names ...string) {
	p.t.Helper()
	ours, peer := cmdstatsOf(p.ours[i].do("INFO", "commandstats")), cmdstatsOf(p.peer[i].do("INFO", "commandstats"))
	for _, n := range names {
		if ours[n] != peer[n] {
			p.t.Errorf("cmdstat_%s calls/rejected/failed: tiercache %q, redis-server %q", n, ours[n], peer[n])
		}
	}
}

// TestCommandStatsAfterTheRun checks S91: INFO commandstats counts as
// redis-server 7.0 the errors a command gives as it runs with the text of
// an arity error (HSET's odd pairs, LPOP's extra argument, PING's: failed,
// not rejected, as addReplyErrorArity answers from inside the command),
// a blocked command ended by CLIENT UNBLOCK, TIMEOUT or ERROR (failed, as
// updateStatsOnUnblock counts it in 7.0) or served an error (failed), and
// a command answered BUSY once a script it waited for passed
// busy-reply-threshold (rejected, as processCommand's rejectCommand),
// and a command a script's redis.call or redis.pcall refuses (arity,
// noscript, a write from EVAL_RO: rejected, on the subcommand for a
// container; an unknown one nowhere, as script.c scriptCall).
func TestCommandStatsAfterTheRun(t *testing.T) {
	t.Run("refused-in-script", func(t *testing.T) {
		p := newPeers(t, 1, 2, nil)
		for _, c := range [][]string{
			{"EVAL", "return redis.pcall('get')", "0"},
			{"EVAL", "return redis.call('get', 'a', 'b')", "0"},
			{"EVAL", "return redis.pcall('config', 'get')", "0"},
			{"EVAL", "return redis.pcall('nosuch')", "0"},
			{"EVAL", "return redis.pcall('multi')", "0"},
			{"EVAL_RO", "return redis.pcall('set', 'k', 'v')", "0"},
			{"EVAL", "return redis.call('get', 'k')", "0"},
		} {
			p.same(0, c...)
		}
		p.sameCmdStats(0, "get", "config|get", "multi", "set", "eval", "eval_ro", "nosuch")
	})
	t.Run("arity-at-run-time", func(t *testing.T) {
		p := newPeers(t, 1, 2, nil)
		for _, c := range [][]string{
			{"HSET", "h", "f", "v", "f2"}, {"HMSET", "h", "f", "v", "f2"}, {"HMSET", "h", "f"},
			{"MSET", "a", "b", "c"}, {"MSET", "a"}, {"MSETNX", "a", "b", "c"},
			{"LPOP", "l", "1", "2"}, {"RPOP", "l", "1", "2"}, {"PING", "a", "b"},
			{"ZADD", "k", "NX", "a"}, {"CONFIG", "SET", "maxmemory-policy", "noeviction", "x"},
		} {
			p.same(0, c...)
		}
		p.sameCmdStats(0, "hset", "hmset", "mset", "msetnx", "lpop", "rpop", "ping", "zadd")
	})
	t.Run("unblocked", func(t *testing.T) {
		p := newPeers(t, 2, 2, nil)
		ids := make([]string, 2)
		for side, conns := range [][]*rawPeer{p.ours, p.peer} {
			id := conns[0].do("CLIENT", "ID")
			ids[side] = id[1 : len(id)-2]
		}
		unblock := func(block []string, how ...string) {
			t.Helper()
			p.ours[0].send(block...)
			p.peer[0].send(block...)
			p.waitBlocked(1, 1)
			for side, conns := range [][]*rawPeer{p.ours, p.peer} {
				if r := conns[1].do(append([]string{"CLIENT", "UNBLOCK", ids[side]}, how...)...); r != ":1\r\n" {
					t.Fatalf("CLIENT UNBLOCK %q: %q", how, r)
				}
			}
			p.sameRead(0, 10*time.Second, strings.Join(block, " ")+"'s reply")
		}
		unblock([]string{"BLPOP", "nolist", "0"}, "ERROR")
		unblock([]string{"BZPOPMIN", "noz", "0"})
		unblock([]string{"BRPOP", "nolist", "0"}, "TIMEOUT")
		// served an error: its destination is no list
		p.same(1, "SET", "str", "x")
		p.ours[0].send("BLMOVE", "src", "str", "LEFT", "LEFT", "0")
		p.peer[0].send("BLMOVE", "src", "str", "LEFT", "LEFT", "0")
		p.waitBlocked(1, 1)
		p.same(1, "RPUSH", "src", "a")
		p.sameRead(0, 10*time.Second, "BLMOVE's WRONGTYPE")
		// its timeout: not failed
		p.same(0, "BLPOP", "nolist", "0.01")
		p.sameCmdStats(1, "blpop", "bzpopmin", "brpop", "blmove")
		// CLIENT UNBLOCK ERROR failed too (the error it gave the other
		// client), whatever name its line has here
		p.sameCmdStats(1, "client|unblock")
	})
	t.Run("busy-after-waiting", func(t *testing.T) {
		rpath := startRedis(t)
		s, opath := startServerWith(t, newTierCache(t), nil)
		p := &peers{t: t}
		for range 3 {
			p.ours, p.peer = append(p.ours, dialPeer(t, opath)), append(p.peer, dialPeer(t, rpath))
		}
		p.same(1, "CONFIG", "SET", "busy-reply-threshold", "1000")
		const loop = "while true do end"
		// Here the GET comes while the script runs, before the threshold: it
		// waits for the script, then is answered BUSY.
		p.ours[0].send("EVAL", loop, "0")
		for deadline := time.Now().Add(20 * time.Second); s.scr.cur.Load() == nil; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the script never ran")
			}
		}
		p.ours[1].send("GET", "x")
		// redis-server reads it once the threshold passed.
		p.peer[0].send("EVAL", loop, "0")
		for r := ""; !strings.HasPrefix(r, "-BUSY "); r = p.peer[2].do("PING") {
		}
		p.peer[1].send("GET", "x")
		p.sameRead(1, 10*time.Second, "GET's BUSY")
		p.same(2, "SCRIPT", "KILL")
		p.sameRead(0, 10*time.Second, "the killed script's error")
		p.sameCmdStats(1, "get", "eval")
	})
}

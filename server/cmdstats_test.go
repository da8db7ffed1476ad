package server

import (
	"testing"
	"time"
)

// TestCommandStatsMatchRedis (S79): INFO commandstats counts calls,
// rejected calls (refused before running: arity, inside MULTI, a refused
// EXEC) and failed calls (ran and answered an error; EXEC not failed by
// the commands it ran) as redis-server 7.0 does; the times are not
// compared; GETs answered as a pipelined run count one by one. INFO and
// INFO default leave the section out, INFO all has it.
func TestCommandStatsMatchRedis(t *testing.T) {
	p := newPeers(t, 1, 2, nil)
	for _, cmd := range [][]string{
		{"SET", "a", "1"}, {"GET", "a"}, {"GET", "a", "b"}, {"LPUSH", "a", "x"},
		{"MULTI"}, {"LPUSH", "a", "x"}, {"INCR", "a"}, {"EXEC"},
		{"MULTI"}, {"GET"}, {"EXEC"}, {"EXEC"}, {"EXEC", "x"},
		{"HSET", "h", "f"}, {"HSET", "h", "f", "v"}, {"HGET", "h", "f"}, {"INCRBY", "a", "x"},
	} {
		p.same(0, cmd...)
	}
	// A pipelined run of GETs (getRun): each GET a call, WRONGTYPE failed.
	p.same(0, "RPUSH", "l", "x")
	for _, side := range [][]*rawPeer{p.ours, p.peer} {
		for i := range 20 {
			side[0].send("GET", []string{"a", "l", "nosuch"}[i%3])
		}
	}
	for range 20 {
		p.sameRead(0, 5*time.Second, "a pipelined GET's reply")
	}
	stats := cmdstatsOf
	ours, peer := stats(p.ours[0].do("INFO", "commandstats")), stats(p.peer[0].do("INFO", "commandstats"))
	for _, n := range []string{"set", "get", "lpush", "multi", "exec", "incr", "hset", "hget", "incrby", "rpush"} {
		if ours[n] == "" || ours[n] != peer[n] {
			t.Errorf("cmdstat_%s calls/rejected/failed: tiercache %q, redis-server %q", n, ours[n], peer[n])
		}
	}
	for _, args := range [][]string{{"INFO"}, {"INFO", "default"}, {"INFO", "all"}, {"INFO", "everything"}} {
		o, r := len(stats(p.ours[0].do(args...))) > 0, len(stats(p.peer[0].do(args...))) > 0
		if o != r {
			t.Errorf("%q: commandstats shown by tiercache %v, by redis-server %v", args, o, r)
		}
	}
}

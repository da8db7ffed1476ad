package server

import (
	"strconv"
	"strings"
	"testing"
)

// resetStatFields are the INFO stats fields redis-server 7.0's
// resetServerStats zeroes that tiercache prints and that count the same
// on both servers for the commands TestConfigResetStatMatchesRedis sends.
// The bytes read and written count the same: after the reset both read
// the same requests and wrote the same replies (the INFO's own reply not
// yet).
var resetStatFields = []string{"total_connections_received", "total_commands_processed",
	"total_net_input_bytes", "total_net_output_bytes", "rejected_connections", "expired_keys", "evicted_keys",
	"keyspace_hits", "keyspace_misses", "total_error_replies"}

// errorstatLines are the errorstat_ lines of an INFO reply.
func errorstatLines(info string) string {
	var out []string
	for _, l := range strings.Split(info, "\r\n") {
		if strings.HasPrefix(l, "errorstat_") {
			out = append(out, l)
		}
	}
	return strings.Join(out, " ")
}

// TestConfigResetStatMatchesRedis checks S96: CONFIG RESETSTAT answers +OK
// (its extra argument the arity error, rejected) and INFO's counters that
// redis-server 7.0 resets (total_connections_received,
// total_commands_processed, the bytes read and written, expired_keys and
// evicted_keys, keyspace hits and misses, total_error_replies,
// commandstats' calls, rejected and failed, errorstats) read as
// redis-server's after
// hits, misses, a rejected, a failed and an unknown command on both sides
// of the reset, a new connection and a reset inside MULTI, in RESP2 and
// RESP3.
func TestConfigResetStatMatchesRedis(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run("RESP"+strconv.Itoa(proto), func(t *testing.T) {
			rpath := startRedis(t)
			_, opath := startServerWith(t, newTierCache(t), nil)
			p := &peers{t: t, ours: []*rawPeer{dialPeer(t, opath)}, peer: []*rawPeer{dialPeer(t, rpath)}}
			if proto == 3 {
				p.ours[0].do("HELLO", "3") // its reply names each server
				p.peer[0].do("HELLO", "3")
			}
			before := [][]string{{"SET", "a", "1"}, {"GET", "a"}, {"GET", "b"}, {"INCR", "a", "x"},
				{"LPUSH", "a", "x"}, {"NOSUCH"}, {"CONFIG", "RESETSTAT", "x"}, {"GET", "a"}}
			for _, c := range before {
				p.same(0, c...)
			}
			p.same(0, "CONFIG", "RESETSTAT")
			for _, c := range [][]string{{"GET", "a"}, {"GET", "b"}, {"GET", "c"}, {"LPUSH", "a", "x"}} {
				p.same(0, c...)
			}
			o, r := dialPeer(t, opath), dialPeer(t, rpath) // counted from the reset: 1
			if a, b := o.do("PING"), r.do("PING"); a != b {
				t.Fatalf("PING on a new connection: %q, redis-server %q", a, b)
			}
			// Both count 5: the RESETSTAT (counted once it ran, after its
			// baseline) and not the INFO (not yet run).
			ours, peer := p.ours[0].do("INFO", "stats"), p.peer[0].do("INFO", "stats")
			for _, f := range resetStatFields {
				if a, b := lineWith(ours, f+":"), lineWith(peer, f+":"); a != b || a == "" {
					t.Errorf("after CONFIG RESETSTAT: tiercache %q, redis-server %q", a, b)
				}
			}
			for _, c := range [][]string{{"GET"}, {"CONFIG", "RESETSTAT", "x"}, {"NOSUCH"}, {"INCR", "a"}} {
				p.same(0, c...)
			}
			names := []string{"get", "set", "incr", "lpush", "ping", "hello", "info", "nosuch", "config|resetstat", "exec"}
			p.sameCmdStats(0, names...)
			ours, peer = p.ours[0].do("INFO", "errorstats"), p.peer[0].do("INFO", "errorstats")
			if a, b := errorstatLines(ours), errorstatLines(peer); a != b || a == "" {
				t.Errorf("errorstats after CONFIG RESETSTAT: tiercache %q, redis-server %q", a, b)
			}

			// Inside MULTI: queued, then +OK in EXEC's reply; only what
			// follows the reset counts (EXEC's call, RESETSTAT's).
			p.same(0, "MULTI")
			p.same(0, "GET", "a")
			p.same(0, "CONFIG", "RESETSTAT")
			p.same(0, "LPUSH", "a", "x")
			p.same(0, "EXEC")
			p.sameCmdStats(0, names...)
			ours, peer = p.ours[0].do("INFO", "errorstats"), p.peer[0].do("INFO", "errorstats")
			if a, b := errorstatLines(ours), errorstatLines(peer); a != b || a == "" {
				t.Errorf("errorstats after CONFIG RESETSTAT in MULTI: tiercache %q, redis-server %q", a, b)
			}
		})
	}
}

// TestCommandsProcessedAsRedis checks S110: total_commands_processed counts
// the commands that ran, as redis-server 7.0's (call()): not one refused
// before it ran (unknown, wrong arity, a wrong subcommand, one refused in
// MULTI) nor one queued until EXEC runs it, and a script's redis.call
// calls too (a command refused inside the script not).
func TestCommandsProcessedAsRedis(t *testing.T) {
	rpath := startRedis(t)
	_, opath := startServerWith(t, newTierCache(t), nil)
	p := &peers{t: t, ours: []*rawPeer{dialPeer(t, opath)}, peer: []*rawPeer{dialPeer(t, rpath)}}
	processed := func(when string) {
		t.Helper()
		f := "total_commands_processed:"
		if a, b := lineWith(p.ours[0].do("INFO", "stats"), f), lineWith(p.peer[0].do("INFO", "stats"), f); a != b || a == "" {
			t.Errorf("%s: tiercache %q, redis-server %q", when, a, b)
		}
	}
	p.same(0, "CONFIG", "RESETSTAT")
	for _, c := range [][]string{{"NOSUCH"}, {"NOSUCH", "x"}, {"GET"}, {"CONFIG", "NOSUCH"}, {"SET", "a", "1"}, {"GET", "a"}} {
		p.same(0, c...)
	}
	processed("after refused commands and a SET and a GET")
	for _, c := range [][]string{{"MULTI"}, {"SET", "b", "2"}, {"GET", "b"}, {"NOSUCH"}, {"EXEC"}, {"MULTI"}, {"INCR", "b"}, {"GET", "b"}, {"EXEC"}} {
		p.same(0, c...)
	}
	processed("after MULTI/EXEC, one aborted")
	p.same(0, "EVAL", "redis.call('SET', 'c', '1'); redis.call('GET', 'c'); return redis.call('INCR', 'c')", "0")
	p.same(0, "EVAL", "return redis.pcall('NOSUCH')", "0")
	processed("after scripts")
}

// TestConfigResetStatKeepsMetrics checks S96's other half: CONFIG
// RESETSTAT does not move back a counter /metrics exports (Snapshot, read
// through the stats table as cmd/tiercache's exporter reads it), while
// INFO's total_commands_processed restarts.
func TestConfigResetStatKeepsMetrics(t *testing.T) {
	s, path := startServer(t, nil)
	c := dialRaw(t, path)
	for _, args := range [][]string{{"SET", "k", "v"}, {"GET", "k"}, {"GET", "nokey"}, {"GET"}, {"INCR", "k"}} {
		c.cmd(args...)
		c.reply()
	}
	counters := func(snap Snapshot) map[string]float64 {
		m := map[string]float64{}
		for _, r := range StatTable() {
			if r.Kind != StatCounter {
				continue
			}
			r.Each(&snap, func(label string, v StatValue) { m[r.Metric+"{"+label+"}"] = v.Number })
		}
		return m
	}
	before := counters(s.Snapshot())
	c.cmd("CONFIG", "RESETSTAT")
	if r := c.reply(); r != "+OK" {
		t.Fatalf("CONFIG RESETSTAT: %q", r)
	}
	after := counters(s.Snapshot())
	for k, v := range before {
		if after[k] < v {
			t.Errorf("/metrics counter %s went from %v to %v at CONFIG RESETSTAT", k, v, after[k])
		}
	}
	// Five sent; the GET without a key is refused before it runs, not counted (S110).
	if before["commands_total{}"] < 4 || before["keyspace_hits_total{}"] < 1 || before["keyspace_misses_total{}"] < 1 {
		t.Fatalf("counters before the reset: %v", before)
	}
	c.cmd("INFO", "stats")
	info := c.reply()
	for _, want := range []string{"total_commands_processed:1\r\n", "keyspace_hits:0\r\n", "keyspace_misses:0\r\n"} {
		if !strings.Contains(info, want) {
			t.Errorf("INFO stats after CONFIG RESETSTAT lacks %q:\n%s", want, info)
		}
	}
	if got := s.Snapshot().Server.CommandsProcessed; float64(got) <= before["commands_total{}"] {
		t.Errorf("commands_total %d after the reset, %v before", got, before["commands_total{}"])
	}
}

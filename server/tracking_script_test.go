package server

import (
	"strings"
	"testing"
	"time"
)

// TestTrackingScriptDeclaredKeys (S81): a script that calls a read-only
// command makes its caller track the keys it declared, not the ones it
// read; one that calls none tracks nothing; EVAL_RO the same, as
// redis-server 7.0 (Redis's unit/tracking "Tracking only occurs for
// scripts when a command calls a read-only command"). Outside scripts, a
// command's keys after a numkeys argument are tracked as the others.
func TestTrackingScriptDeclaredKeys(t *testing.T) {
	p := newPeers(t, 2, 3, nil) // RESP3: the invalidations come as pushes
	drain := func(what string) {
		for p.sameRead(0, 40*time.Millisecond, what) != "" {
		}
	}
	p.same(0, "CLIENT", "TRACKING", "on")
	p.same(1, "MSET", "key2{t}", "1", "key2{t}", "1")
	for _, script := range [][]string{
		{"EVAL", "redis.call('set', 'key3{t}', 'bar')", "2", "key1{t}", "key2{t}"},
		{"EVAL", "redis.call('get', 'key3{t}')", "2", "key1{t}", "key2{t}"},
		{"EVAL_RO", "redis.call('ping')", "2", "key1{t}", "key2{t}"},
		{"EVAL_RO", "redis.call('get', 'key1{t}')", "2", "key1{t}", "key2{t}"},
		{"EVAL", "redis.call('get', 'key3{t}'); redis.call('get', 'key4{t}')", "1", "key4{t}"},
	} {
		p.same(0, script...)
		drain("after " + script[1])
		p.same(1, "MSET", "key2{t}", "2", "key1{t}", "2", "key3{t}", "2", "key4{t}", "2")
		drain("invalidations after " + script[1])
	}
	// Outside scripts every key a read-only command names is tracked,
	// those after a numkeys argument too.
	p.same(0, "ZUNION", "2", "za{t}", "zb{t}")
	p.same(0, "SINTERCARD", "2", "sa{t}", "sb{t}")
	p.same(1, "ZADD", "zb{t}", "1", "m")
	p.same(1, "SADD", "sb{t}", "m")
	drain("invalidations of numkeys commands' keys")
}

// TestTrackingInfoTotals (S84): INFO's tracking_total_keys,
// tracking_total_items and tracking_total_prefixes count as
// redis-server 7.0's: keys tracked, their clients summed, distinct
// BCAST prefixes.
func TestTrackingInfoTotals(t *testing.T) {
	p := newPeers(t, 4, 3, nil) // 0-2 track, 3 writes and asks
	p.same(0, "CLIENT", "TRACKING", "on")
	p.same(1, "CLIENT", "TRACKING", "on")
	p.same(2, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a:", "PREFIX", "b:")
	p.same(0, "MGET", "k1", "k2", "k3")
	p.same(1, "MGET", "k2", "k3")
	totals := func(info string) string {
		var out []string
		for _, l := range strings.Split(info, "\r\n") {
			if strings.HasPrefix(l, "tracking_total_") {
				out = append(out, l)
			}
		}
		return strings.Join(out, " ")
	}
	for _, step := range [][]string{nil, {"DEL", "k2"}, {"FLUSHALL"}} {
		if step != nil {
			p.same(3, step...)
		}
		ours, peer := totals(p.ours[3].do("INFO", "stats")), totals(p.peer[3].do("INFO", "stats"))
		if ours == "" || ours != peer {
			t.Errorf("after %q: tiercache %q, redis-server %q", step, ours, peer)
		}
		for i := range 3 { // the invalidations
			for p.sameRead(i, 40*time.Millisecond, "invalidations") != "" {
			}
		}
	}
}

// TestTrackingFlushWithNoTracker (S85): FLUSHALL, and a write of a key,
// empty the tracking table of it even while no client tracks: a client
// that read a key, turned tracking off, and on again after the flush or
// the write hears nothing of that key, as from redis-server
// (trackingInvalidateKeysOnFlush, trackingInvalidateKey).
func TestTrackingFlushWithNoTracker(t *testing.T) {
	p := newPeers(t, 2, 3, nil)
	p.same(0, "CLIENT", "TRACKING", "on")
	p.same(0, "GET", "key1")
	p.same(0, "CLIENT", "TRACKING", "off")
	p.same(1, "FLUSHALL")
	p.same(0, "CLIENT", "TRACKING", "on")
	p.same(1, "SET", "key1", "1")
	p.sameRead(0, 100*time.Millisecond, "an invalidation of a key read before the flush")
	// A write while no client tracks drops the key from the table too.
	p.same(0, "GET", "key2")
	p.same(0, "CLIENT", "TRACKING", "off")
	p.same(1, "SET", "key2", "1")
	p.same(0, "CLIENT", "TRACKING", "on")
	p.same(1, "SET", "key2", "2")
	p.sameRead(0, 100*time.Millisecond, "an invalidation of a key written while no client tracked")
	ours, peer := p.ours[1].do("INFO", "stats"), p.peer[1].do("INFO", "stats")
	for _, f := range []string{"tracking_total_keys:0\r\n", "tracking_total_items:0\r\n"} {
		if strings.Contains(ours, f) != strings.Contains(peer, f) {
			t.Errorf("%q: in tiercache's INFO %v, in redis-server's %v", f, strings.Contains(ours, f), strings.Contains(peer, f))
		}
	}
}

// TestTrackingScriptWritesAfterReply (S122): in RESP3 a script's caller
// hears of the keys it tracks that the script wrote after the script's
// reply, a message the script published to it before, and inside EXEC
// after EXEC's reply, as redis-server 7.0 sends them.
func TestTrackingScriptWritesAfterReply(t *testing.T) {
	p := newPeers(t, 1, 3, nil)
	p.same(0, "CLIENT", "TRACKING", "on")
	p.same(0, "GET", "k1")
	p.same(0, "GET", "k2")
	p.same(0, "SUBSCRIBE", "ch")
	p.same(0, "EVAL", "redis.call('set', KEYS[1], '1'); redis.call('publish', 'ch', 'm'); redis.call('set', KEYS[2], '1'); return 5", "2", "k1", "k2")
	for _, what := range []string{"the script's reply", "k1's invalidation", "k2's invalidation"} {
		p.sameRead(0, time.Second, what)
	}
	p.same(0, "GET", "k1")
	p.same(0, "MULTI")
	p.same(0, "EVAL", "redis.call('set', KEYS[1], '3'); return 6", "1", "k1")
	p.same(0, "EXEC")
	p.sameRead(0, time.Second, "k1's invalidation after EXEC")
	if r := p.sameRead(0, 50*time.Millisecond, "nothing more"); r != "" {
		t.Errorf("more after EXEC: %q", r)
	}
}

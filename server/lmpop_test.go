package server

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/tiercache/tiercache/value/list"
)

// lmpopCases are LMPOP's and BLMPOP's argument errors, in Redis's order,
// their pops (COUNT past the length, RIGHT's order, the key going with
// its last element, wrong types before and after a list, case), and what
// they do in MULTI and in scripts, where nothing waits.
var lmpopCases = slices.Concat([][]string{
	{"RPUSH", "l", "a", "b", "c", "d", "e", "f", "g"}, {"SET", "s", "x"}, {"ZADD", "z", "1", "m"},
	{"LMPOP", "1", "l", "MIN"}, {"BLMPOP", "0", "1", "l", "MAX"},
}, mpopArgErrors("LMPOP", "l", "LEFT"), [][]string{
	// pops
	{"LMPOP", "1", "nokey", "LEFT"}, {"LMPOP", "2", "nokey", "s", "LEFT"}, {"LMPOP", "2", "z", "l", "LEFT"},
	{"LMPOP", "2", "l", "s", "right"}, {"LMPOP", "3", "nokey", "l", "s", "Left", "count", "2"},
	{"LMPOP", "1", "l", "RIGHT", "COUNT", "2"}, {"LRANGE", "l", "0", "-1"},
	{"LMPOP", "1", "l", "LEFT", "COUNT", "9223372036854775807"}, {"EXISTS", "l"},
	{"RPUSH", "l2", "1", "2", "3"}, {"BLMPOP", "0.01", "2", "nokey", "l2", "RIGHT", "COUNT", "2"},
	{"BLMPOP", "0.01", "1", "nokey", "LEFT"}, {"BLMPOP", "0.01", "2", "s", "l2", "LEFT"},
	{"BLMPOP", "0", "1", "l2", "LEFT", "COUNT", "5"}, {"EXISTS", "l2"},
	{"COMMAND", "GETKEYS", "LMPOP", "2", "k1", "k2", "LEFT"}, {"COMMAND", "GETKEYS", "BLMPOP", "0", "3", "k1", "k2", "k3", "RIGHT", "COUNT", "2"},
	// in a transaction and a script nothing waits: a nil array at once
	{"MULTI"}, {"BLMPOP", "0", "1", "nokey", "LEFT"}, {"RPUSH", "l3", "a", "b"}, {"BLMPOP", "0", "1", "l3", "RIGHT"},
	{"LMPOP", "1", "l3", "LEFT", "COUNT", "3"}, {"LMPOP", "0", "l3", "LEFT"}, {"EXEC"},
	{"MULTI"}, {"LMPOP", "1"}, {"EXEC"},
	{"EVAL", "return redis.call('blmpop', 0, 1, KEYS[1], 'left')", "1", "nokey"},
	{"RPUSH", "l4", "a", "b"},
	{"EVAL", "return redis.call('blmpop', 0, 1, KEYS[1], 'right', 'count', 5)", "1", "l4"},
	{"EVAL", "return redis.call('lmpop', 1, KEYS[1], 'left')", "1", "nokey"},
	{"EVAL", "return redis.pcall('lmpop', 1, KEYS[1], 'left', 'count', 0)", "1", "nokey"},
	{"EVAL", "return redis.pcall('lmpop', 1, KEYS[1], 'left')", "1", "s"},
})

// watchedExec compares, on both, an EXEC on connection 1 that WATCHed
// key before connection 0 ran write.
func (p *peers) watchedExec(key string, write ...string) {
	p.t.Helper()
	p.same(1, "WATCH", key)
	p.same(0, write...)
	p.same(1, "MULTI")
	p.same(1, "SET", "k", "1")
	p.same(1, "EXEC")
}

// mpopArgErrors are the argument errors of an MPOP command (cmd, on key,
// with its first END word end) and of its blocking form ("B"+cmd), which
// share their parser (mpopArgs), in Redis's order: numkeys, END, COUNT,
// then BLMPOP's and BZMPOP's timeout, read last.
func mpopArgErrors(cmd, key, end string) [][]string {
	var out [][]string
	for _, a := range [][]string{
		{"0", key, end}, {"-1", key, end}, {"x", key, end}, {"1.5", key, end}, {"", key, end}, {"2", key, end},
		{"9223372036854775807", key, end}, {"9223372036854775806", key, end}, {"4611686018427387904", key, end},
		{"9223372036854775808", key, end}, {"1", key, "MID"}, {"1", key, "UP"}, {"1", key, end, "COUNT"},
		{"1", key, end, "COUNT", "0"}, {"1", key, end, "COUNT", "-1"}, {"1", key, end, "COUNT", "x"},
		{"1", key, end, "COUNT", "1", "COUNT", "1"}, {"1", key, end, "COUNT", "0", "COUNT", "1"},
		{"1", key, end, "LIMIT", "1"}, {"1", key, end, "x"}, {"1", key}, {"1"}, {}, {"2", "nokey", key},
	} {
		out = append(out, append([]string{cmd}, a...))
	}
	for _, a := range [][]string{
		{"x", "1", key, end}, {"-1", "1", key, end}, {"1e30", "1", key, end}, {"inf", "1", key, end},
		{"x", "0", key, end}, {"x", "1", key, "UP"}, {"x", "1", key, end, "COUNT", "0"}, {"0", "1", key},
		{"0", "1"}, {"0", "2", key, end},
	} {
		out = append(out, append([]string{"B" + cmd}, a...))
	}
	return out
}

// TestLMPopMatchesRedis (S57): LMPOP and BLMPOP answer as redis-server
// 7.0 does, byte for byte in RESP2 and RESP3 (lmpopCases); a blocked
// BLMPOP is woken by another connection's push, in the order the
// clients blocked beside BLPOP's, with up to COUNT elements, and after an
// EXEC that pushed; it answers a nil array at its timeout; LMPOP touches
// for WATCH only the key it popped; a tracking client is sent the
// invalidation of the key popped.
func TestLMPopMatchesRedis(t *testing.T) {
	eachProto(t, 4, func(_ *testing.T, p *peers, proto int) {
		for _, c := range lmpopCases {
			p.same(0, c...)
		}
		// woken by a push, from the first key that has elements
		for _, tc := range [][]string{
			{"BLMPOP", "5", "2", "w1", "w2", "LEFT", "COUNT", "2"},
			{"BLMPOP", "5", "1", "w2", "RIGHT", "COUNT", "9"},
			{"BLMPOP", "0", "1", "w2", "RIGHT"},
		} {
			p.same(0, "DEL", "w2")
			p.blockThenPush(1, tc, []string{"RPUSH", "w2", "a", "b", "c"})
			p.same(0, "LRANGE", "w2", "0", "-1")
		}
		// fairness: served in the order they blocked, each up to its COUNT
		for i, tc := range [][]string{
			{"BLMPOP", "5", "1", "f", "LEFT", "COUNT", "2"},
			{"BLPOP", "f", "5"},
			{"BLMPOP", "5", "2", "g", "f", "RIGHT", "COUNT", "2"},
		} {
			p.ours[i+1].send(tc...)
			p.peer[i+1].send(tc...)
			p.waitBlocked(0, i+1)
		}
		p.same(0, "RPUSH", "f", "a", "b", "c", "d")
		for i := 1; i <= 3; i++ {
			p.sameRead(i, 5*time.Second, "a waiter's turn "+strconv.Itoa(i))
		}
		p.same(0, "EXISTS", "f")
		// served after an EXEC that pushed
		p.blockThenPush(1, []string{"BLMPOP", "5", "1", "x", "RIGHT", "COUNT", "3"},
			[]string{"MULTI"}, []string{"RPUSH", "x", "a", "b"}, []string{"RPUSH", "x", "c", "d"},
			[]string{"LLEN", "x"}, []string{"EXEC"})
		p.same(0, "LRANGE", "x", "0", "-1")
		// timeout
		p.same(1, "BLMPOP", "0.05", "1", "w3", "LEFT")
		// WATCH sees only the key popped
		p.same(0, "RPUSH", "l5", "a")
		p.same(0, "RPUSH", "l6", "a", "b")
		p.watchedExec("l6", "LMPOP", "2", "l5", "l6", "LEFT") // l6 unchanged: it runs
		p.watchedExec("l6", "LMPOP", "2", "l5", "l6", "LEFT") // l6 popped: a nil array
		if proto == 3 {
			p.same(2, "CLIENT", "TRACKING", "ON")
			p.same(0, "RPUSH", "t", "a", "b")
			p.same(2, "LRANGE", "t", "0", "-1")
			p.same(0, "LMPOP", "1", "t", "RIGHT")
			p.sameRead(2, 5*time.Second, "the invalidation of t")
		}
	})
}

// TestLMPopServedToAGoneClientGoesBack (S57): the elements a BLMPOP was
// served as its client hung up go back to the end they came from, in
// their order (hungUp's pushBack), from the head and from the tail.
func TestLMPopServedToAGoneClientGoesBack(t *testing.T) {
	s, path := startServerWith(t, newTierCache(t), nil)
	p := dialRaw(t, path)
	c := &conn{s: s}
	c.lists = listOps{cache: s.cache, limits: list.Limits{MaxElements: s.opts.MaxListElements, MaxBytes: s.opts.MaxValueBytes}}
	for _, left := range []bool{true, false} {
		p.expect([]step{{[]string{"RPUSH", "q", "a", "b", "c", "d"}, ":4"}})
		w := &waiter{left: left, mpop: 3}
		res, ok := c.lists.serveOne(w, "q")
		if !ok || len(res.vals) != 3 {
			t.Fatalf("left %v: served %v %+v", left, ok, res)
		}
		p.expect([]step{{[]string{"LLEN", "q"}, ":1"}})
		c.pushBack(w, res)
		p.expect([]step{
			{[]string{"LRANGE", "q", "0", "-1"}, "*[$a $b $c $d]"},
			{[]string{"DEL", "q"}, ":1"},
		})
	}
}

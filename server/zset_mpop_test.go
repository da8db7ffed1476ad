package server

import (
	"strconv"
	"testing"
	"time"
)

// zmpopCases are ZMPOP's and BZMPOP's argument errors, in Redis's order,
// and their pops (COUNT past the size, MAX's order, the key going with
// its last member, wrong types, keys of other kinds before a sorted set).
var zmpopCases = [][]string{
	{"ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"}, {"SET", "s", "x"}, {"RPUSH", "l", "1"},
	{"ZMPOP", "0", "z", "MIN"}, {"ZMPOP", "-1", "z", "MIN"}, {"ZMPOP", "x", "z", "MIN"}, {"ZMPOP", "1.5", "z", "MIN"},
	{"ZMPOP", "2", "z", "MIN"}, {"ZMPOP", "9223372036854775807", "z", "MIN"}, {"ZMPOP", "4611686018427387904", "z", "MIN"},
	{"ZMPOP", "1", "z", "MID"}, {"ZMPOP", "1", "z", "MIN", "COUNT"}, {"ZMPOP", "1", "z", "MIN", "COUNT", "0"},
	{"ZMPOP", "1", "z", "MIN", "COUNT", "-1"}, {"ZMPOP", "1", "z", "MIN", "COUNT", "x"}, {"ZMPOP", "1", "z", "MIN", "LIMIT", "1"},
	{"ZMPOP", "1", "z", "MIN", "COUNT", "1", "COUNT", "1"}, {"ZMPOP", "1", "z", "MIN", "x"}, {"ZMPOP", "1", "z"},
	{"BZMPOP", "x", "1", "z", "MIN"}, {"BZMPOP", "-1", "1", "z", "MIN"}, {"BZMPOP", "x", "0", "z", "MIN"},
	{"BZMPOP", "x", "1", "z", "MIN", "COUNT", "0"}, {"BZMPOP", "0", "1", "z"},
	{"ZMPOP", "1", "nokey", "MIN"}, {"ZMPOP", "2", "nokey", "s", "MIN"}, {"ZMPOP", "2", "l", "z", "max"},
	{"ZMPOP", "3", "nokey", "z", "s", "min"}, {"ZMPOP", "1", "z", "MAX", "COUNT", "2"}, {"ZRANGE", "z", "0", "-1", "WITHSCORES"},
	{"ZADD", "z", "1.5", "e", "inf", "f", "-inf", "g"}, {"ZMPOP", "1", "z", "MIN", "COUNT", "9223372036854775807"},
	{"EXISTS", "z"}, {"ZADD", "z2", "5", "x", "6", "y"},
	{"BZMPOP", "0.01", "2", "nokey", "z2", "MAX", "COUNT", "1"}, {"BZMPOP", "0.01", "1", "nokey", "MIN"},
	{"BZMPOP", "0.01", "2", "s", "z2", "MIN"}, {"BZMPOP", "0", "1", "z2", "MIN", "COUNT", "5"}, {"EXISTS", "z2"},
	// in a transaction and a script nothing waits: a nil array at once
	{"MULTI"}, {"BZMPOP", "0", "1", "nokey", "MIN"}, {"ZADD", "z3", "1", "a"}, {"BZMPOP", "0", "1", "z3", "MAX"}, {"EXEC"},
	{"EVAL", "return redis.call('bzmpop', 0, 1, KEYS[1], 'min')", "1", "nokey"},
	{"ZADD", "z4", "1", "a", "2", "b"},
	{"EVAL", "return redis.call('bzmpop', 0, 1, KEYS[1], 'max', 'count', 5)", "1", "z4"},
	{"EVAL", "return redis.call('zmpop', 1, KEYS[1], 'min')", "1", "nokey"},
}

// TestZMPopMatchesRedis (S41): ZMPOP and BZMPOP answer as redis-server 7.0
// does, byte for byte in RESP2 and RESP3; a blocked BZMPOP is served by
// a later ZADD with up to COUNT members and answers a nil array at its
// timeout; a WATCH on a key it did not pop is left alone.
func TestZMPopMatchesRedis(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run("RESP"+strconv.Itoa(proto), func(t *testing.T) {
			p := newPeers(t, 2, proto, nil)
			for _, c := range zmpopCases {
				p.same(0, c...)
			}
			for _, tc := range [][]string{
				{"BZMPOP", "5", "2", "w1", "w2", "MIN", "COUNT", "2"},
				{"BZMPOP", "5", "1", "w2", "MAX", "COUNT", "9"},
			} {
				p.ours[1].send(tc...)
				p.peer[1].send(tc...)
				time.Sleep(100 * time.Millisecond) // blocked on both
				p.same(0, "ZADD", "w2", "1", "a", "2", "b", "3", "c")
				p.sameRead(1, 5*time.Second, "the reply of a blocked "+tc[0])
				p.same(0, "ZRANGE", "w2", "0", "-1", "WITHSCORES")
			}
			p.ours[1].send("BZMPOP", "0.05", "1", "w3", "MIN")
			p.peer[1].send("BZMPOP", "0.05", "1", "w3", "MIN")
			p.sameRead(1, 5*time.Second, "BZMPOP at its timeout")
			p.same(0, "ZADD", "z5", "1", "a")
			p.same(0, "ZADD", "z6", "1", "a", "2", "b") // it stays after a pop
			p.same(1, "WATCH", "z6")
			p.same(0, "ZMPOP", "2", "z5", "z6", "MIN")
			p.same(1, "MULTI")
			p.same(1, "SET", "k", "1")
			p.same(1, "EXEC") // z6 unchanged: it runs
			p.same(1, "WATCH", "z6")
			p.same(0, "ZMPOP", "2", "z5", "z6", "MIN")
			p.same(1, "MULTI")
			p.same(1, "SET", "k", "2")
			p.same(1, "EXEC") // z6 popped: a nil array
		})
	}
}

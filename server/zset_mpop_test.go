package server

import (
	"slices"
	"testing"
)

// zmpopCases are ZMPOP's and BZMPOP's argument errors, in Redis's order,
// and their pops (COUNT past the size, MAX's order, the key going with
// its last member, wrong types, keys of other kinds before a sorted set).
var zmpopCases = slices.Concat([][]string{
	{"ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"}, {"SET", "s", "x"}, {"RPUSH", "l", "1"},
}, mpopArgErrors("ZMPOP", "z", "MIN"), [][]string{
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
})

// TestZMPopMatchesRedis (S41): ZMPOP and BZMPOP answer as redis-server 7.0
// does, byte for byte in RESP2 and RESP3; a blocked BZMPOP is served by
// a later ZADD with up to COUNT members and answers a nil array at its
// timeout; a WATCH on a key it did not pop is left alone.
func TestZMPopMatchesRedis(t *testing.T) {
	eachProto(t, 2, func(_ *testing.T, p *peers, _ int) {
		for _, c := range zmpopCases {
			p.same(0, c...)
		}
		for _, tc := range [][]string{
			{"BZMPOP", "5", "2", "w1", "w2", "MIN", "COUNT", "2"},
			{"BZMPOP", "5", "1", "w2", "MAX", "COUNT", "9"},
		} {
			p.same(0, "DEL", "w2")
			p.blockThenPush(1, tc, []string{"ZADD", "w2", "1", "a", "2", "b", "3", "c"})
			p.same(0, "ZRANGE", "w2", "0", "-1", "WITHSCORES")
		}
		p.same(1, "BZMPOP", "0.05", "1", "w3", "MIN")
		p.same(0, "ZADD", "z5", "1", "a")
		p.same(0, "ZADD", "z6", "1", "a", "2", "b")          // it stays after a pop
		p.watchedExec("z6", "ZMPOP", "2", "z5", "z6", "MIN") // z6 unchanged: it runs
		p.watchedExec("z6", "ZMPOP", "2", "z5", "z6", "MIN") // z6 popped: a nil array
	})
}

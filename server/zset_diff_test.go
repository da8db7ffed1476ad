package server

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// randZSetCommand is a random sorted-set command on a few keys (one a
// string, one a plain set), with members and scores from small sets so
// that ties, infinities, exclusive ends and lexicographic ranges over
// equal scores come up often.
func randZSetCommand(r *rand.Rand) ([]string, diffKind) {
	keys := []string{"z", "z", "y", "s", "set", "none"} // lexicographic ranges go to "lex", whose scores are all 0
	key := func() string { return keys[r.IntN(len(keys))] }
	mem := func() string {
		return []string{"a", "b", "c", "d", "e", "aa", "", "1", "long-" + strings.Repeat("m", 70)}[r.IntN(9)]
	}
	score := func() string {
		if r.IntN(12) == 0 {
			return []string{"inf", "-inf", "+inf", "nan", "x", "1e400", "0x10", "1.5e-3", "-1e-300", "", " 1", "3.0000000000000004"}[r.IntN(12)]
		}
		return []string{"0", "1", "2", "2.5", "-1", "10", "0.1", "1e20", "-3.75"}[r.IntN(9)]
	}
	rangeEnd := func() string {
		s := score()
		if r.IntN(3) == 0 {
			return "(" + s
		}
		return s
	}
	lexEnd := func() string {
		switch r.IntN(6) {
		case 0:
			return "-"
		case 1:
			return "+"
		case 2:
			return "(" + mem()
		case 3:
			return []string{"a", "", "++", "-x"}[r.IntN(4)]
		}
		return "[" + mem()
	}
	idx := func() string {
		if r.IntN(15) == 0 {
			return []string{"x", "1.5", "9223372036854775807", "-9223372036854775808"}[r.IntN(4)]
		}
		return strconv.Itoa(r.IntN(11) - 5)
	}
	pairs := func() []string {
		var out []string
		for range 1 + r.IntN(3) {
			out = append(out, score(), mem())
		}
		return out
	}
	limit := func(cmd []string) []string {
		if r.IntN(3) == 0 {
			return append(cmd, "LIMIT", idx(), idx())
		}
		return cmd
	}
	srcs := func() []string {
		n := 1 + r.IntN(3)
		out := []string{strconv.Itoa(n)}
		if r.IntN(12) == 0 {
			out[0] = []string{"0", "-1", "x", "9"}[r.IntN(4)]
		}
		for range n {
			out = append(out, key())
		}
		if r.IntN(3) == 0 {
			out = append(out, "WEIGHTS")
			for range n {
				out = append(out, []string{"1", "2", "-1", "3", "inf", "0.5"}[r.IntN(6)])
			}
		}
		if r.IntN(3) == 0 {
			out = append(out, "AGGREGATE", []string{"SUM", "min", "MAX", "avg"}[r.IntN(4)])
		}
		return out
	}
	switch r.IntN(30) {
	case 0, 1, 2, 3:
		cmd := []string{"ZADD", key()}
		for _, o := range []string{"NX", "XX", "GT", "LT", "CH", "INCR"} {
			if r.IntN(6) == 0 {
				cmd = append(cmd, o)
			}
		}
		if r.IntN(4) == 0 {
			return append(cmd, score(), mem()), diffExact
		}
		return append(cmd, pairs()...), diffExact
	case 4:
		return []string{"ZADD", "lex", "0", mem()}, diffExact
	case 5:
		return []string{"ZINCRBY", key(), score(), mem()}, diffExact
	case 6:
		return []string{"ZREM", []string{"lex", key()}[r.IntN(2)], mem(), mem()}, diffExact
	case 7:
		return []string{"ZCARD", key()}, diffExact
	case 8:
		return []string{"ZSCORE", key(), mem()}, diffExact
	case 9:
		return []string{"ZMSCORE", key(), mem(), mem()}, diffExact
	case 10:
		return []string{[]string{"ZRANK", "ZREVRANK"}[r.IntN(2)], key(), mem()}, diffExact
	case 11, 12:
		cmd := []string{"ZRANGE", key(), idx(), idx()}
		switch r.IntN(3) {
		case 1:
			cmd = []string{"ZRANGE", key(), rangeEnd(), rangeEnd(), "BYSCORE"}
		case 2:
			cmd = []string{"ZRANGE", "lex", lexEnd(), lexEnd(), "BYLEX"}
		}
		if r.IntN(2) == 0 {
			cmd = append(cmd, "REV")
		}
		if r.IntN(2) == 0 {
			cmd = append(cmd, "WITHSCORES")
		}
		return limit(cmd), diffExact
	case 13:
		cmd := []string{"ZRANGESTORE", key(), key(), rangeEnd(), rangeEnd(), "BYSCORE"}
		if r.IntN(2) == 0 {
			cmd = []string{"ZRANGESTORE", key(), key(), idx(), idx()}
		}
		if r.IntN(3) == 0 {
			cmd = append(cmd, "REV")
		}
		return limit(cmd), diffExact
	case 14:
		cmd := []string{[]string{"ZRANGEBYSCORE", "ZREVRANGEBYSCORE"}[r.IntN(2)], key(), rangeEnd(), rangeEnd()}
		if r.IntN(2) == 0 {
			cmd = append(cmd, "WITHSCORES")
		}
		return limit(cmd), diffExact
	case 15:
		return limit([]string{[]string{"ZRANGEBYLEX", "ZREVRANGEBYLEX"}[r.IntN(2)], "lex", lexEnd(), lexEnd()}), diffExact
	case 16:
		cmd := []string{"ZREVRANGE", key(), idx(), idx()}
		if r.IntN(2) == 0 {
			cmd = append(cmd, "WITHSCORES")
		}
		return cmd, diffExact
	case 17:
		return []string{"ZCOUNT", key(), rangeEnd(), rangeEnd()}, diffExact
	case 18:
		return []string{"ZLEXCOUNT", "lex", lexEnd(), lexEnd()}, diffExact
	case 19:
		switch r.IntN(3) {
		case 0:
			return []string{"ZREMRANGEBYRANK", key(), idx(), idx()}, diffExact
		case 1:
			return []string{"ZREMRANGEBYSCORE", key(), rangeEnd(), rangeEnd()}, diffExact
		}
		return []string{"ZREMRANGEBYLEX", "lex", lexEnd(), lexEnd()}, diffExact
	case 20:
		cmd := []string{[]string{"ZPOPMIN", "ZPOPMAX"}[r.IntN(2)], key()}
		if r.IntN(2) == 0 {
			cmd = append(cmd, []string{"0", "1", "2", "10", "-1", "x"}[r.IntN(6)])
		}
		return cmd, diffExact
	case 21:
		if r.IntN(2) == 0 {
			cmd := []string{"ZMPOP"}
			if r.IntN(2) == 0 {
				cmd = []string{"BZMPOP", []string{"0.01", "x", "-1"}[r.IntN(3)]}
			}
			n := 1 + r.IntN(3)
			cmd = append(cmd, strconv.Itoa(n))
			for range n {
				cmd = append(cmd, key())
			}
			cmd = append(cmd, []string{"MIN", "max", "x"}[r.IntN(3)])
			if r.IntN(2) == 0 {
				cmd = append(cmd, "COUNT", []string{"1", "2", "10", "0", "x"}[r.IntN(5)])
			}
			return cmd, diffExact
		}
		return []string{[]string{"BZPOPMIN", "BZPOPMAX"}[r.IntN(2)], key(), key(), []string{"0.01", "x", "-1"}[r.IntN(3)]}, diffExact
	case 22:
		switch r.IntN(4) {
		case 0:
			return []string{"ZRANDMEMBER", key()}, diffShape
		case 1:
			return []string{"ZRANDMEMBER", key(), "100", "WITHSCORES"}, diffSorted
		case 2:
			return []string{"ZRANDMEMBER", key(), "-" + strconv.Itoa(r.IntN(5)), []string{"WITHSCORES", "x"}[r.IntN(2)]}, diffShape
		}
		return []string{"ZRANDMEMBER", key(), strconv.Itoa(r.IntN(4))}, diffShape
	case 23:
		cmd := []string{"ZSCAN", key(), []string{"0", "x"}[r.IntN(2)], "COUNT", "1000"}
		if r.IntN(2) == 0 {
			cmd = append(cmd, "MATCH", []string{"*", "a*", "?", "l*"}[r.IntN(4)])
		}
		return cmd, diffScan // a large one's order is its hash table's in Redis
	case 24, 25:
		op := []string{"ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"}[r.IntN(3)]
		return append([]string{op, key()}, srcs()...), diffExact
	case 26, 27:
		cmd := append([]string{[]string{"ZUNION", "ZINTER", "ZDIFF"}[r.IntN(3)]}, srcs()...)
		if r.IntN(2) == 0 {
			cmd = append(cmd, "WITHSCORES")
		}
		return cmd, diffExact
	case 28:
		cmd := append([]string{"ZINTERCARD"}, srcs()...)
		if r.IntN(2) == 0 {
			cmd = append(cmd, "LIMIT", []string{"0", "1", "-1", "x"}[r.IntN(4)])
		}
		return cmd, diffExact
	}
	return []string{"SCAN", "0", "TYPE", "zset", "COUNT", "1000"}, diffScan
}

// TestZSetDifferential checks the sorted-set commands reply as
// redis-server 7.0 does (S41), in RESP2 and RESP3: random sequences on a
// few keys (one a string, one a plain set) run on both, replies compared
// byte for byte (scores as 7.0 prints them; random picks by shape) and
// the sorted sets compared after each step.
func TestZSetDifferential(t *testing.T) {
	d := &typedDiff{t: t, gen: randZSetCommand, keys: []string{"z", "y", "lex", "none", "s", "set"},
		state:  func(k string) []string { return []string{"ZRANGE", k, "0", "-1", "WITHSCORES"} },
		resync: func(*exactConn, *exactConn, string) {},
		setup:  [][]string{{"SET", "s", "string"}, {"SADD", "set", "a", "b", "x"}, {"ZADD", "lex", "0", "a", "0", "b", "0", "c"}}}
	d.run(8, 400)
}

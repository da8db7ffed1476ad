package server

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// randSetCommand is a random set command on a few keys (one of them a
// string), with members from a small alphabet so that they hit, miss and
// empty sets out often; integers and long members mixed in.
func randSetCommand(r *rand.Rand) ([]string, diffKind) {
	keys := []string{"a", "a", "b", "c", "s", "none"}
	key := func() string { return keys[r.IntN(len(keys))] }
	mem := func() string {
		return []string{"x", "y", "z", "1", "2", "-3", "", "10", "long-" + strings.Repeat("m", 70)}[r.IntN(9)]
	}
	mems := func() []string {
		out := make([]string, 1+r.IntN(4))
		for i := range out {
			out[i] = mem()
		}
		return out
	}
	keysN := func() []string {
		out := make([]string, 1+r.IntN(3))
		for i := range out {
			out[i] = key()
		}
		return out
	}
	num := func() string {
		if r.IntN(15) == 0 {
			return []string{"x", "-1", "1.5", "9223372036854775807", "-9223372036854775808", "0"}[r.IntN(6)]
		}
		return strconv.Itoa(r.IntN(6))
	}
	switch r.IntN(20) {
	case 0, 1, 2:
		return append([]string{"SADD", key()}, mems()...), diffExact
	case 3:
		return append([]string{"SREM", key()}, mems()...), diffExact
	case 4:
		return []string{"SMEMBERS", key()}, diffSorted
	case 5:
		return []string{"SISMEMBER", key(), mem()}, diffExact
	case 6:
		return append([]string{"SMISMEMBER", key()}, mems()...), diffExact
	case 7:
		return []string{"SCARD", key()}, diffExact
	case 8:
		if r.IntN(3) == 0 {
			return []string{"SPOP", key()}, diffResync
		}
		if r.IntN(4) == 0 {
			return []string{"SPOP", key(), num(), "x"}, diffExact
		}
		return []string{"SPOP", key(), num()}, diffResync
	case 9:
		switch r.IntN(4) {
		case 0:
			return []string{"SRANDMEMBER", key()}, diffShape
		case 1:
			return []string{"SRANDMEMBER", key(), "100"}, diffSorted
		case 2:
			return []string{"SRANDMEMBER", key(), "-" + strconv.Itoa(r.IntN(5))}, diffShape // a huge one would have redis-server answer gigabytes
		}
		return []string{"SRANDMEMBER", key(), num()}, diffShape
	case 10:
		return []string{"SMOVE", key(), key(), mem()}, diffExact
	case 11:
		return append([]string{[]string{"SINTER", "SUNION", "SDIFF"}[r.IntN(3)]}, keysN()...), diffSorted
	case 12:
		return append([]string{[]string{"SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"}[r.IntN(3)], key()}, keysN()...), diffExact
	case 13:
		ks := keysN()
		n := strconv.Itoa(len(ks))
		if r.IntN(8) == 0 {
			n = []string{"0", "-1", "x", "9"}[r.IntN(4)]
		}
		cmd := append([]string{"SINTERCARD", n}, ks...)
		if r.IntN(2) == 0 {
			cmd = append(cmd, "LIMIT", num())
		}
		if r.IntN(10) == 0 {
			cmd = append(cmd, "LIMIT")
		}
		return cmd, diffExact
	case 14:
		cmd := []string{"SSCAN", key(), []string{"0", "0", "x"}[r.IntN(3)], "COUNT", "1000"}
		if r.IntN(2) == 0 {
			cmd = append(cmd, "MATCH", []string{"*", "x*", "1?", "[a-z]"}[r.IntN(4)])
		}
		if r.IntN(8) == 0 {
			cmd = append(cmd, "COUNT", "0")
		}
		return cmd, diffScan
	case 15:
		return []string{"TYPE", key()}, diffExact
	case 16:
		return []string{[]string{"SADD", "SREM", "SISMEMBER", "SMOVE", "SINTERCARD", "SSCAN", "SMISMEMBER"}[r.IntN(7)], key()}, diffExact
	case 17:
		return []string{"DEL", key()}, diffExact
	case 18:
		return []string{"EXISTS", key()}, diffExact
	default:
		return []string{"SCAN", "0", "TYPE", "set", "COUNT", "1000"}, diffScan
	}
}

// resyncSet makes got's key what ref's is, after a random change.
func resyncSet(ref, got *exactConn, key string) {
	if parseReply(ref.do("TYPE", key)).head != "+set\r\n" {
		return
	}
	members := parseReply(ref.do("SMEMBERS", key))
	got.do("DEL", key)
	if len(members.kids) > 0 {
		cmd := []string{"SADD", key}
		for _, k := range members.kids {
			cmd = append(cmd, strings.TrimSuffix(k.body, "\r\n"))
		}
		got.do(cmd...)
	}
}

// TestSetDifferential checks the set commands reply as redis-server 7.0
// does (S40), in RESP2 and RESP3: random sequences on a few keys (one a
// string) run on both, replies compared byte for byte (a set's members in
// any order; random picks by shape) and the sets compared after each
// step.
func TestSetDifferential(t *testing.T) {
	d := &typedDiff{t: t, gen: randSetCommand, keys: []string{"a", "b", "c", "none", "s"},
		state:  func(k string) []string { return []string{"SMEMBERS", k} },
		resync: resyncSet,
		setup:  [][]string{{"SET", "s", "string"}}}
	d.run(8, 400)
}

// TestSMoveWatchMatchesRedis (S40): SMOVE touches for WATCH its
// destination only when the member was added there, as redis-server 7.0
// (a transaction watching a destination that had the member runs; one
// watching the source, or a destination that gained the member, fails).
func TestSMoveWatchMatchesRedis(t *testing.T) {
	p := newPeers(t, 2, 2, nil)
	p.same(0, "SADD", "src", "a", "b", "c")
	p.same(0, "SADD", "dst", "a", "x")
	for _, tc := range [][]string{
		{"dst", "a"}, // dst had a: unchanged
		{"src", "b"}, // src lost b
		{"dst", "c"}, // dst gained c
	} {
		p.same(1, "WATCH", tc[0])
		p.same(0, "SMOVE", "src", "dst", tc[1])
		p.same(1, "MULTI")
		p.same(1, "SET", "k", tc[1])
		p.same(1, "EXEC")
	}
}

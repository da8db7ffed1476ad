package server

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// sortPool are the elements SORT's sources draw from: numbers as strtod
// reads them and does not, strings of every byte order, and the element
// sets may not hold (NUL bytes, which strcoll reads only up to: equal
// elements of a set would keep its internal order, Redis's).
var sortPool = []string{"1", "2", "3", "-3", "10", "010", "1.5", "-0.25", "1e3", "0x10", " 5", "20",
	"inf", "-inf", "a", "b", "B", "abc", "", "x y", "\xc3\xa9", "\x80", "zz", "7"}

// sortListOnly are elements only lists get.
var sortListOnly = []string{"a\x00b", "a\x00c", "5 ", "nan", "0x1p-1074"}

// sortWeights are the values of the numeric weight keys w_*.
var sortWeights = []string{"1", "2.5", "-3", "0", "", " 7", "0x1A", "inf", "-inf", "1e-300", "100", "3", "3", "-0"}

// sortBadWeights make a SORT refuse its weights (with one that passes:
// what strtod reads of a number before a NUL). Those strtod refuses with
// ERANGE are TestSortErrorsMatchRedis's: redis-server reads errno without
// clearing it first, so that one leaves every numeric SORT after it
// refused until a failed call sets errno again.
var sortBadWeights = []string{"abc", "7 ", "nan", "5\x00x", "  ", "0x1p-1074"}

// sortData fills both servers with one round's keys: numeric and mixed
// lists, sets and sorted sets, the weights w_* (numeric), wa_* (a
// distinct string per element, for ALPHA: no ties), hashes h_* (field f
// numeric, g any, u distinct) and hu_* (u distinct, every element's),
// and GET targets g_*, some of another kind.
func sortData(r *rand.Rand, both func(args ...string)) {
	pick := func(pool []string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = pool[r.IntN(len(pool))]
		}
		return out
	}
	nums := sortPool[:14]
	all := append(slices.Clone(sortPool), sortListOnly...)
	both(append([]string{"RPUSH", "l1"}, pick(nums, 1+r.IntN(12))...)...)
	both(append([]string{"RPUSH", "l2"}, pick(all, 1+r.IntN(14))...)...)
	both(append([]string{"SADD", "s1"}, pick(nums, 1+r.IntN(12))...)...)
	both(append([]string{"SADD", "s2"}, pick(sortPool, 1+r.IntN(16))...)...)
	z := []string{"ZADD", "z1"}
	for _, m := range pick(sortPool, 1+r.IntN(12)) {
		z = append(z, strconv.Itoa(r.IntN(5)-2), m)
	}
	both(z...)
	bad := r.IntN(3) == 0
	for i, e := range all {
		switch r.IntN(6) {
		case 0: // no weight
		case 1:
			both("HSET", "w_"+e, "f", "1") // of another kind: no weight
		default:
			w := sortWeights[r.IntN(len(sortWeights))]
			if bad && r.IntN(4) == 0 {
				w = sortBadWeights[r.IntN(len(sortBadWeights))]
			}
			both("SET", "w_"+e, w)
		}
		both("SET", "wa_"+e, strings.Repeat("\xc3\xa9", r.IntN(2))+strconv.Itoa(r.IntN(1000))+"."+strconv.Itoa(i))
		both("HSET", "hu_"+e, "u", strconv.Itoa(r.IntN(1000))+"."+strconv.Itoa(i))
		switch r.IntN(4) {
		case 0:
			both("SET", "h_"+e, "string")
		case 1:
		default:
			h := []string{"HSET", "h_" + e, "u", "u" + strconv.Itoa(r.IntN(1000)) + "." + strconv.Itoa(i)}
			if r.IntN(3) > 0 {
				h = append(h, "f", sortWeights[r.IntN(len(sortWeights))])
			}
			if r.IntN(2) == 0 {
				h = append(h, "g", all[r.IntN(len(all))])
			}
			both(h...)
		}
		if r.IntN(3) > 0 {
			both("SET", "g_"+e, "got-"+e)
		}
	}
	both("SET", "str", "x")
	both("HSET", "hash", "a", "1")
	both("SET", "dst", "old")
}

// randSort is a random SORT or SORT_RO of the round's keys, and whether
// its reply may order a set's elements as the set holds them (BY
// nosort): compared sorted, or by shape when LIMIT cut them.
func randSort(r *rand.Rand) (cmd []string, kind diffKind) {
	src := []string{"l1", "l2", "s1", "s2", "z1", "none", "str", "hash"}[r.IntN(8)]
	isSet := src == "s1" || src == "s2"
	ro := r.IntN(4) == 0
	name := "SORT"
	if ro {
		name = "SORT_RO"
	}
	var opts [][]string
	alpha := r.IntN(3) == 0
	if alpha {
		opts = append(opts, []string{"ALPHA"})
	}
	if r.IntN(2) == 0 {
		opts = append(opts, []string{[]string{"ASC", "DESC", "desc"}[r.IntN(3)]})
	}
	limit := r.IntN(3) == 0
	if limit {
		opts = append(opts, []string{"LIMIT", []string{"-2", "-1", "0", "1", "2", "5", "100"}[r.IntN(7)],
			[]string{"-1", "0", "1", "2", "3", "100", "-5"}[r.IntN(7)]})
	}
	var by string
	if r.IntN(2) == 0 {
		by = []string{"w_*", "h_*->f", "nosort", "w_*", "wa_*", "hw_*->u", "h_*->u", "w_*->", "*", "#", "no{*}x"}[r.IntN(11)]
		// ALPHA by weights that tie (missing ones, equal ones) orders the
		// tied elements as they came: a set's or sorted set's internal
		// order, or Redis's partial quicksort's under LIMIT. Distinct
		// weights then.
		if alpha && hasStar([]byte(by)) && (src != "l1" && src != "l2" || limit) {
			by = []string{"wa_*", "hu_*->u"}[r.IntN(2)]
		}
		opts = append(opts, []string{"BY", by})
	}
	store := !ro && r.IntN(3) == 0
	if store {
		opts = append(opts, []string{"STORE", "dst"})
	}
	for range r.IntN(3) {
		opts = append(opts, []string{"GET", []string{"#", "g_*", "h_*->g", "h_*->f", "w_*", "nosuch", "*->", "#x"}[r.IntN(8)]})
	}
	if r.IntN(12) == 0 { // an error in the options
		opts = append(opts, [][]string{{"LIMIT", "0"}, {"LIMIT", "x", "1"}, {"LIMIT", "0", "1.5"}, {"FOO"},
			{"STORE"}, {"BY"}, {"GET"}, {"STORE", "dst"}}[r.IntN(8)])
	}
	r.Shuffle(len(opts), func(i, j int) { opts[i], opts[j] = opts[j], opts[i] })
	cmd = []string{name, src}
	for _, o := range opts {
		cmd = append(cmd, o...)
	}
	if dontsort, store, limited := sortParse(cmd); isSet && dontsort && !store {
		if limited {
			return cmd, diffShape
		}
		return cmd, diffSorted
	}
	return cmd, diffExact
}

// sortParse reads SORT's options as Redis's loop does, for what decides
// the reply's order: a BY without '*' (even before another BY), a STORE,
// a LIMIT.
func sortParse(cmd []string) (dontsort, store, limited bool) {
	for j := 2; j < len(cmd); j++ {
		left := len(cmd) - j - 1
		switch w := strings.ToUpper(cmd[j]); {
		case w == "LIMIT" && left >= 2:
			limited = true
			j += 2
		case w == "STORE" && left >= 1 && cmd[0] == "SORT":
			store = true
			j++
		case w == "BY" && left >= 1:
			dontsort = dontsort || !strings.Contains(cmd[j+1], "*")
			j++
		case w == "GET" && left >= 1:
			j++
		}
	}
	return dontsort, store, limited
}

// TestSortMatchesRedis (S68): SORT and SORT_RO answer as redis-server
// 7.0, byte for byte in RESP2 and RESP3, on random lists, sets and
// sorted sets with random weights (strings, hash fields, missing, of
// another kind, not numbers) and random options (BY, GET, LIMIT, ASC,
// DESC, ALPHA, STORE, errors), some inside MULTI; after each the STORE
// destination holds what redis-server's does (TYPE, LRANGE).
func TestSortMatchesRedis(t *testing.T) {
	t.Setenv("LC_ALL", "C") // redis-server's strcoll, for ALPHA: strcmp
	d := &typedDiff{t: t, gen: randSort, keys: []string{"dst"}, fill: sortData,
		// the stored list in order, one string (the state is compared sorted)
		state: func(k string) []string {
			return []string{"EVAL", "return table.concat(redis.call('LRANGE', KEYS[1], 0, -1), '|')", "1", k}
		},
		resync: func(ref, got *exactConn, key string) {
			got.do("DEL", key)
			if v := parseReply(ref.do("GET", key)); v.head[0] == '$' && v.head != "$-1\r\n" {
				got.do("SET", key, strings.TrimSuffix(v.body, "\r\n"))
			} else if items := parseReply(ref.do("LRANGE", key, "0", "-1")); len(items.kids) > 0 {
				cmd := []string{"RPUSH", key}
				for _, k := range items.kids {
					cmd = append(cmd, strings.TrimSuffix(k.body, "\r\n"))
				}
				got.do(cmd...)
			}
		}}
	d.run(12, 150)
}

// TestSortEdgesMatchRedis (S68): SORT's and SORT_RO's argument errors,
// wrong types, LIMIT's clamps, patterns' '*', "->" and NUL rules,
// scripts (a set's BY nosort sorted as strings in one; SORT refused in a
// read-only one, SORT_RO not), keyspace events ("sortstore", "new",
// "del"), WATCH (only the destination is touched), tracking invalidation
// of the destination, a BLPOP on the destination served, COMMAND
// GETKEYS, and last the weights strtod refuses with ERANGE, answered as
// redis-server 7.0 does, in RESP2 and RESP3.
func TestSortEdgesMatchRedis(t *testing.T) {
	t.Setenv("LC_ALL", "C")
	for _, proto := range []int{2, 3} {
		p := newPeers(t, 3, proto, nil)
		for _, c := range [][]string{
			{"RPUSH", "l", "3", "1", "2", "10", "1"}, {"SADD", "s", "3", "1", "2", "10", "b", "a"},
			{"SADD", "si", "3", "1", "2", "10"}, {"ZADD", "z", "2", "a", "1", "b", "3", "c", "1", "a0"},
			{"SET", "str", "x"}, {"HSET", "hash", "a", "1"},
			{"SET", "w_1", "5"}, {"SET", "w_2", "-1"}, {"SET", "w_3", "2"}, {"HSET", "h_1", "f", "9", "f->g", "7"},
			{"HSET", "h_10", "f", "-4"}, {"SET", "x*y_1", "a"}, {"SET", "x1y", "b"}, {"SET", "x1y->", "c"},
			{"SET", "k\x00_1", "n"}, {"SET", "w_a", "1"}, {"SET", "w_b", "0"},
		} {
			p.same(0, c...)
		}
		for _, c := range [][]string{
			{"SORT"}, {"SORT_RO"}, {"SORT", "str"}, {"SORT", "hash"}, {"SORT_RO", "str", "BY", "w_*"},
			{"SORT", "none"}, {"SORT", "none", "BY", "w_*", "GET", "#"}, {"SORT", "str", "FOO"},
			{"SORT", "l"}, {"SORT", "l", "DESC"}, {"SORT", "l", "desc", "asc"}, {"SORT", "l", "ALPHA", "DESC"},
			{"SORT", "s"}, {"SORT", "s", "ALPHA"}, {"SORT", "s", "ALPHA", "DESC", "LIMIT", "1", "2"},
			{"SORT", "l", "LIMIT", "0"}, {"SORT", "l", "LIMIT", "x", "1"}, {"SORT", "l", "LIMIT", "0", "x"},
			{"SORT", "l", "LIMIT", "1.5", "1"}, {"SORT", "l", "LIMIT", "", "1"}, {"SORT", "l", "FOO"},
			{"SORT", "l", "STORE"}, {"SORT", "l", "BY"}, {"SORT", "l", "GET"}, {"SORT_RO", "l", "STORE", "d"},
			{"SORT", "l", "LIMIT\x00x", "0", "1"}, {"SORT", "l", "desc\x00"}, {"SORT", "l", "FOO", "LIMIT", "x", "y"},
			{"SORT", "l", "LIMIT", "x", "y", "FOO"}, {"SORT", "str", "LIMIT", "x", "y"},
			{"SORT", "l", "LIMIT", "-5", "2"}, {"SORT", "l", "LIMIT", "1", "-1"}, {"SORT", "l", "LIMIT", "2", "0"},
			{"SORT", "l", "LIMIT", "4", "10"}, {"SORT", "l", "LIMIT", "5", "1"}, {"SORT", "l", "LIMIT", "100", "1"},
			{"SORT", "l", "LIMIT", "9223372036854775807", "9223372036854775807"},
			{"SORT", "l", "LIMIT", "1", "9223372036854775807"}, {"SORT", "l", "LIMIT", "-9223372036854775808", "2"},
			{"SORT", "l", "LIMIT", "0", "2", "LIMIT", "1", "1"},
			{"SORT", "l", "BY", "nosort"}, {"SORT", "l", "BY", "nosort", "DESC"}, {"SORT", "l", "BY", "nosort", "DESC", "LIMIT", "1", "2"},
			{"SORT", "z", "BY", "nosort"}, {"SORT", "z", "BY", "nosort", "DESC", "LIMIT", "1", "2"}, {"SORT", "z"},
			{"SORT", "z", "ALPHA"},
			{"SORT", "l", "BY", "w_*"}, {"SORT", "l", "BY", "w_*", "DESC"}, {"SORT", "l", "BY", "w_*", "GET", "#", "GET", "w_*"},
			{"SORT", "l", "BY", "h_*->f"}, {"SORT", "l", "BY", "h_*->f", "GET", "h_*->f", "GET", "h_*->f->g"},
			{"SORT", "l", "BY", "h_*->"}, {"SORT", "l", "GET", "h_*->"}, {"SORT", "l", "GET", "x*y_*"},
			{"SORT", "l", "GET", "x*y"}, {"SORT", "l", "GET", "x*y->"}, {"SORT", "l", "GET", "k\x00_*"},
			{"SORT", "l", "GET", "nostar"}, {"SORT", "l", "GET", "#"}, {"SORT", "l", "GET", "#\x00x"}, {"SORT", "l", "GET", "##"},
			{"SORT", "l", "BY", "nosort", "BY", "w_*"}, {"SORT", "l", "BY", "w_*", "BY", "nosort"},
			{"SORT", "s", "BY", "w_*", "ALPHA"}, {"SORT", "s", "BY", "w_*", "ALPHA", "STORE", "d"}, {"LRANGE", "d", "0", "-1"},
			{"SORT", "s", "BY", "nosort", "STORE", "d"}, {"LRANGE", "d", "0", "-1"},
			{"SORT", "si", "BY", "nosort", "STORE", "d", "DESC"}, {"LRANGE", "d", "0", "-1"},
			{"SORT", "l", "GET", "w_*", "GET", "#", "STORE", "d"}, {"LRANGE", "d", "0", "-1"}, {"TYPE", "d"},
			{"SET", "d", "string"}, {"EXPIRE", "d", "100"}, {"SORT", "l", "STORE", "d"}, {"TYPE", "d"}, {"TTL", "d"},
			{"SORT", "l", "STORE", "d", "STORE", "d2"}, {"EXISTS", "d", "d2"}, {"SORT", "none", "STORE", "d2"}, {"EXISTS", "d2"},
			{"SORT", "str", "STORE", "d"}, {"SORT", "s", "STORE", "d", "LIMIT", "0", "x"}, {"LRANGE", "d", "0", "-1"},
			{"SORT", "l", "BY", "w_*", "STORE", "l"}, {"LRANGE", "l", "0", "-1"},
			{"SORT", "s", "BY", "w_*"}, {"SORT", "s", "BY", "w_*", "LIMIT", "0", "3"},
			{"SORT", "l", "LIMIT", "0", "2", "GET", "w_*", "STORE", "d"}, {"LRANGE", "d", "0", "-1"},
			{"COMMAND", "GETKEYS", "SORT", "a", "STORE", "b", "GET", "x", "STORE", "c", "LIMIT", "0", "1"},
			{"COMMAND", "GETKEYS", "SORT", "a", "LIMIT", "STORE", "b"}, {"COMMAND", "GETKEYS", "SORT", "a", "STORE"},
			{"COMMAND", "GETKEYS", "SORT", "a", "BY", "STORE", "x"}, {"COMMAND", "GETKEYS", "SORT_RO", "a", "STORE", "b"},
			{"COMMAND", "GETKEYS", "SORT", "a", "store", "b"}, {"COMMAND", "GETKEYS", "SORT"},
			// scripts: a set's BY nosort is sorted as strings; SORT is a write
			{"EVAL", "return redis.call('SORT', KEYS[1], 'BY', 'nosort')", "1", "s"},
			{"EVAL", "return redis.call('SORT', KEYS[1], 'BY', 'nosort', 'DESC')", "1", "si"},
			{"EVAL", "return redis.call('SORT_RO', KEYS[1], 'BY', 'nosort', 'LIMIT', 1, 2)", "1", "s"},
			{"EVAL", "return redis.call('SORT', KEYS[1], 'STORE', KEYS[2])", "2", "l", "d"}, {"LRANGE", "d", "0", "-1"},
			{"EVAL_RO", "return redis.call('SORT', KEYS[1])", "1", "l"},
			{"EVAL_RO", "return redis.call('SORT_RO', KEYS[1], 'BY', 'w_*')", "1", "l"},
			{"EVAL", "#!lua flags=no-writes\nreturn redis.call('SORT', KEYS[1], 'STORE', 'd')", "1", "l"},
			{"EVAL", "return redis.pcall('SORT', KEYS[1], 'LIMIT', 'x', 1)", "1", "l"},
			{"MULTI"}, {"SORT", "l", "BY", "w_*", "STORE", "d"}, {"SORT_RO", "l", "STORE", "d"}, {"EXEC"},
			{"MULTI"}, {"SORT", "s", "BY", "nosort", "STORE", "d"}, {"SORT", "d", "DESC"}, {"EXEC"},
		} {
			p.same(0, c...)
		}
		// WATCH: only a destination written or deleted is touched.
		p.watchedExec("e", "SORT", "l", "STORE", "e")
		p.watchedExec("l", "SORT", "l", "STORE", "e")
		p.watchedExec("l", "SORT", "l")
		p.watchedExec("e", "SORT", "none", "STORE", "e")
		p.watchedExec("e", "SORT", "none", "STORE", "e")
		p.watchedExec("e", "SORT", "l", "LIMIT", "x", "1", "STORE", "e")
		// A client blocked on the destination is served by the store.
		p.blockThenPush(2, []string{"BLPOP", "b", "0"}, []string{"SORT", "l", "DESC", "STORE", "b"})
		p.same(0, "LRANGE", "b", "0", "-1")
		// Keyspace events and tracking: the destination's, only.
		p.same(0, "CONFIG", "SET", "notify-keyspace-events", "KEAn")
		p.same(1, "PSUBSCRIBE", "__key*__:*")
		if proto == 3 {
			p.same(2, "CLIENT", "TRACKING", "ON")
			p.same(2, "LRANGE", "e", "0", "-1")
			p.same(2, "LRANGE", "l", "0", "-1")
		}
		for _, c := range [][]string{
			{"SORT", "l", "STORE", "e"}, {"SORT", "l", "STORE", "e", "DESC"}, {"SORT", "l"}, {"SORT", "l", "LIMIT", "0", "0", "STORE", "e"},
			{"SORT", "none", "STORE", "e"}, {"SORT", "l", "LIMIT", "x", "1", "STORE", "e"}, {"SORT", "str", "STORE", "e"},
			{"SORT_RO", "l", "BY", "w_*"},
		} {
			p.same(0, c...)
			p.events(1, strings.Join(c, " "))
			if proto == 3 {
				p.events(2, strings.Join(c, " ")+" (tracking)")
				p.same(2, "LRANGE", "e", "0", "-1")
			}
		}
		// Last: strtod's ERANGE, which redis-server's errno keeps after.
		for _, w := range []string{"1e400", "-1e400", "1e-400", "1e-310", "4.9e-324", "0x1.8p-1074", "2.225e-308"} {
			p.same(0, "SET", "w_1", w)
			p.same(0, "SORT", "l", "BY", "w_*")
		}
	}
}

// TestSortClusterMatchesRedis (S68): in cluster mode SORT and SORT_RO
// refuse a BY pattern with '*' and every GET, as redis-server 7.0 in
// cluster mode does, and a STORE to another slot than the key is
// CROSSSLOT.
func TestSortClusterMatchesRedis(t *testing.T) {
	peer, _, _ := startRedisCluster(t)
	_, sock, _ := startClusterServer(t, nil)
	p := &peerPair{t: t, ours: dialRaw(t, sock), peer: peer}
	for _, args := range [][]string{
		{"RPUSH", "{a}l", "2", "1", "3"}, {"SORT", "{a}l"}, {"SORT", "{a}l", "BY", "nosort"}, {"SORT", "{a}l", "BY", "w_*"},
		{"SORT", "{a}l", "BY", "{a}w_*"}, {"SORT_RO", "{a}l", "BY", "*"}, {"SORT", "{a}l", "GET", "#"},
		{"SORT", "{a}l", "GET", "{a}*"}, {"SORT", "{a}l", "LIMIT", "x", "1", "GET", "#"}, {"SORT", "{a}l", "GET", "#", "LIMIT", "x", "1"},
		{"SORT", "{a}l", "STORE", "{a}d"}, {"LRANGE", "{a}d", "0", "-1"}, {"SORT", "{a}l", "STORE", "d"},
		{"SORT", "{a}l", "BY", "w_*", "STORE", "d"}, {"SORT_RO", "{a}l", "STORE", "d"},
		{"COMMAND", "GETKEYS", "SORT", "{a}l", "STORE", "d"},
		{"MULTI"}, {"SORT", "{a}l", "STORE", "d"}, {"EXEC"},
	} {
		if o, r := p.do(args...); o != r {
			t.Errorf("%q:\n tiercache    %q\n redis-server %q", args, o, r)
		}
	}
}

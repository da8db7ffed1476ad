package server

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// hllSparse is a sparse HyperLogLog string: the header (cache valid, 0)
// and the opcodes given.
func hllSparse(ops string) string { return "HYLL\x01\x00\x00\x00" + strings.Repeat("\x00", 8) + ops }

// hllCases are PFADD, PFCOUNT and PFMERGE edge cases: arguments, types,
// strings that are not HyperLogLogs, corrupt sparse ones, cached
// cardinalities, MULTI, scripts, WATCH and key positions; each followed
// where it matters by a GET showing the stored string.
var hllCases = [][]string{
	{"PFADD", "h"}, {"GET", "h"}, {"PFADD", "h"}, {"PFCOUNT", "h"}, {"GET", "h"},
	{"PFADD", "h", "a", "b", "c"}, {"GET", "h"}, {"PFADD", "h", "a"}, {"PFCOUNT", "h"}, {"GET", "h"}, {"PFCOUNT", "h"},
	{"PFADD", "h2", "a", "x", "y", "z"}, {"PFCOUNT", "h", "h2"}, {"GET", "h2"}, {"PFCOUNT", "h", "nosuch"}, {"PFCOUNT", "nosuch"},
	{"PFCOUNT", "nosuch", "nosuch2"}, {"PFMERGE", "m", "h", "h2"}, {"GET", "m"}, {"PFCOUNT", "m"}, {"GET", "m"},
	{"PFMERGE", "m2"}, {"GET", "m2"}, {"PFMERGE", "m2", "nosuch"}, {"GET", "m2"}, {"PFMERGE", "h", "h2"}, {"GET", "h"},
	{"PFADD"}, {"PFCOUNT"}, {"PFMERGE"}, {"pfadd", "h", ""}, {"GET", "h"},
	// types and strings that are no HyperLogLog
	{"RPUSH", "l", "x"}, {"PFADD", "l", "a"}, {"PFCOUNT", "l"}, {"PFCOUNT", "h", "l"}, {"PFMERGE", "l", "h"}, {"PFMERGE", "h", "l"},
	{"PFMERGE", "nosuch3", "h", "l"}, {"EXISTS", "nosuch3"}, {"GET", "h"},
	{"SET", "s", "hello"}, {"PFADD", "s", "a"}, {"PFCOUNT", "s"}, {"PFMERGE", "s"}, {"PFMERGE", "m", "s"}, {"GET", "m"},
	{"SET", "s", ""}, {"PFADD", "s"}, {"PFCOUNT", "s"}, {"SET", "s", "12345"}, {"PFADD", "s", "x"},
	{"SET", "s", "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"}, {"PFADD", "s", "x"}, {"PFCOUNT", "s"},
	{"SET", "s", "HYLX\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff"}, {"PFADD", "s", "x"},
	{"SET", "s", "HYLL\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff"}, {"PFCOUNT", "s"},
	{"SET", "s", "HYLL\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff"}, {"PFCOUNT", "s"}, {"PFADD", "s", "a"},
	{"SET", "s", "HYLL\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80" + strings.Repeat("\x00", 12288)}, {"PFCOUNT", "s"},
	{"PFADD", "s", "a", "b"}, {"PFCOUNT", "s"}, {"GET", "s"}, {"PFMERGE", "sm", "s", "h"}, {"PFCOUNT", "sm"}, {"STRLEN", "sm"},
	{"SET", "s", "HYLL\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80" + strings.Repeat("\xff", 12288)}, {"PFCOUNT", "s"}, {"PFCOUNT", "s", "h"},
	{"SET", "s", "HYLL\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80" + strings.Repeat("\x41\x10\x04", 4096)}, {"PFCOUNT", "s"}, {"PFCOUNT", "s", "s"},
	// corrupt sparse strings: too few registers, too many, a VAL past the end, a cut XZERO
	{"SET", "c", hllSparse("\x7f\xfe")}, {"PFCOUNT", "c"}, {"PFCOUNT", "c", "h"}, {"PFMERGE", "h", "c"}, {"GET", "h"}, {"PFADD", "c", "a", "b", "c", "d"},
	{"SET", "c", hllSparse("\x7f\xff\x00")}, {"PFCOUNT", "c"}, {"PFCOUNT", "c", "nosuch"}, {"PFMERGE", "c2", "c"}, {"EXISTS", "c2"},
	{"SET", "c", hllSparse("\x7f\xfe\x84")}, {"PFCOUNT", "c"}, {"PFCOUNT", "c", "c"}, {"SET", "c", hllSparse("\x7f\xfd\x87")}, {"PFCOUNT", "c", "c"},
	{"SET", "c", hllSparse("")}, {"PFCOUNT", "c"}, {"PFADD", "c", "a"}, {"PFCOUNT", "c", "c"}, {"PFMERGE", "c"}, {"GET", "c"},
	{"SET", "c", hllSparse("\x3e" + strings.Repeat("\x3f", 3) + "\x7f")}, {"PFCOUNT", "c"}, {"PFCOUNT", "c", "c"}, {"GET", "c"},
	{"SET", "c", hllSparse("\x7f\xff")}, {"SETRANGE", "c", "8", "\x07\x00\x00\x00\x00\x00\x00\x00"}, {"PFCOUNT", "c"}, {"PFCOUNT", "c", "c"},
	{"SET", "c", hllSparse("\x40\x00\x7f\xfe")}, {"PFADD", "c", "a"}, {"GET", "c"}, {"PFCOUNT", "c"}, {"GET", "c"},
	{"SET", "c", hllSparse("\x84\x84\x84\x7f\xfc")}, {"PFADD", "c", "a", "b"}, {"GET", "c"}, {"PFCOUNT", "c"},
	// MULTI, scripts, WATCH, key positions, the config knob
	{"MULTI"}, {"PFADD", "t", "a"}, {"PFCOUNT", "t"}, {"PFMERGE", "t2", "t"}, {"GET", "t2"}, {"PFCOUNT", "t", "l"}, {"EXEC"},
	{"WATCH", "h"}, {"PFMERGE", "m", "h"}, {"MULTI"}, {"PING"}, {"EXEC"},
	{"WATCH", "m"}, {"PFMERGE", "m", "h"}, {"MULTI"}, {"PING"}, {"EXEC"},
	{"WATCH", "h"}, {"PFADD", "h", "a"}, {"MULTI"}, {"PING"}, {"EXEC"},
	{"WATCH", "h"}, {"PFADD", "h", "new element"}, {"MULTI"}, {"PING"}, {"EXEC"},
	{"WATCH", "h"}, {"PFCOUNT", "h"}, {"MULTI"}, {"PING"}, {"EXEC"},
	{"WATCH", "h"}, {"PFCOUNT", "h"}, {"MULTI"}, {"PING"}, {"EXEC"},
	{"EVAL", "return redis.call('pfadd', KEYS[1], 'a', 'b')", "1", "e"}, {"EVAL", "return redis.call('pfcount', KEYS[1])", "1", "e"},
	{"EVAL_RO", "return redis.call('pfcount', KEYS[1])", "1", "h2"}, {"EVAL_RO", "return redis.pcall('pfadd', KEYS[1], 'z')", "1", "h2"},
	{"EVAL", "return redis.pcall('pfcount', KEYS[1])", "1", "l"}, {"EVAL", "return redis.call('pfmerge', KEYS[1], KEYS[2])", "2", "e2", "e"}, {"GET", "e2"},
	{"COMMAND", "GETKEYS", "pfadd", "k", "a"}, {"COMMAND", "GETKEYS", "pfcount", "a", "b", "c"}, {"COMMAND", "GETKEYS", "pfmerge", "d", "s1", "s2"},
	{"CONFIG", "GET", "hll-sparse-max-bytes"}, {"CONFIG", "SET", "hll-sparse-max-bytes", "30"}, {"PFADD", "p", "a", "b", "c", "d", "e", "f", "g"}, {"GET", "p"},
	{"PFADD", "p2", "a"}, {"PFMERGE", "p2", "p"}, {"STRLEN", "p2"}, {"CONFIG", "SET", "hll-sparse-max-bytes", "1kb"}, {"CONFIG", "GET", "hll-sparse-max-bytes"},
	{"CONFIG", "SET", "hll-sparse-max-bytes", "-1"}, {"CONFIG", "SET", "hll-sparse-max-bytes", "3000"},
	// PFDEBUG and PFSELFTEST
	{"PFSELFTEST"}, {"PFSELFTEST", "x"}, {"PFDEBUG", "foo", "nosuch"}, {"PFDEBUG", "FOO", "h2"}, {"PFDEBUG", "getreg"},
	{"PFDEBUG", "ENCODING", "h2", "x"}, {"PFDEBUG", "ENCODING", "l"}, {"PFDEBUG", "ENCODING", "s"}, {"PFDEBUG", "decode", "c"},
	{"PFADD", "dbg", "a", "b"}, {"PFDEBUG", "DECODE", "dbg"}, {"PFDEBUG", "Encoding", "dbg"}, {"WATCH", "dbg"}, {"PFDEBUG", "TODENSE", "dbg"},
	{"MULTI"}, {"PING"}, {"EXEC"}, {"PFDEBUG", "TODENSE", "dbg"}, {"PFDEBUG", "ENCODING", "dbg"}, {"PFDEBUG", "DECODE", "dbg"},
	{"GET", "dbg"}, {"PFADD", "dbg2", "x"}, {"PFDEBUG", "GETREG", "dbg2"}, {"GET", "dbg2"}, {"PFDEBUG", "GETREG", "c"}, {"PFDEBUG", "TODENSE", "c"},
	{"SET", "c", hllSparse("\x7f\xfe")}, {"PFDEBUG", "DECODE", "c"}, {"PFDEBUG", "TODENSE", "c"}, {"PFDEBUG", "GETREG", "c"},
	{"COMMAND", "GETKEYS", "pfdebug", "getreg", "k"}, {"INFO", "errorstats"},
}

// TestHLLMatchesRedis (S61): PFADD, PFCOUNT and PFMERGE answer hllCases
// as redis-server 7.0 does, byte for byte in RESP2 and RESP3, and leave
// the same strings.
func TestHLLMatchesRedis(t *testing.T) { casesMatchRedis(t, hllCases) }

// randHLLCommand is a random HyperLogLog command on a few keys: PFADD of
// up to a few hundred elements from a universe of thousands (so keys go
// dense), PFCOUNT of one or several keys, PFMERGE, now and then a
// hll-sparse-max-bytes change, a SETRANGE that may corrupt a string, or a
// DEL.
func randHLLCommand(r *rand.Rand, keys []string) []string {
	key := func() string { return keys[r.IntN(len(keys))] }
	switch n := r.IntN(100); {
	case n < 45:
		cmd := []string{"PFADD", key()}
		count := r.IntN(8)
		if r.IntN(4) == 0 {
			count = r.IntN(400)
		}
		universe := 1 + r.IntN(20000)
		for range count {
			cmd = append(cmd, "e"+strconv.Itoa(r.IntN(universe)))
		}
		return cmd
	case n < 65:
		return []string{"PFCOUNT", key()}
	case n < 75:
		cmd := []string{"PFCOUNT", key()}
		for k := 1 + r.IntN(3); k > 0; k-- {
			cmd = append(cmd, key())
		}
		return cmd
	case n < 90:
		cmd := []string{"PFMERGE", key()}
		for k := r.IntN(4); k > 0; k-- {
			cmd = append(cmd, key())
		}
		return cmd
	case n < 93:
		return []string{"CONFIG", "SET", "hll-sparse-max-bytes", []string{"3000", "3000", "200", "40", "1000"}[r.IntN(5)]}
	case n < 96:
		return []string{"SETRANGE", key(), strconv.Itoa(r.IntN(40)), string([]byte{byte(r.IntN(256))})}
	case n < 98:
		return []string{"DEL", key()}
	}
	return []string{"GET", key()}
}

// TestHLLDifferential (S61): random PFADD, PFCOUNT, PFMERGE sequences
// (enough elements for keys to turn dense, hll-sparse-max-bytes changed,
// strings corrupted by SETRANGE, a list among the keys) run on
// redis-server 7.0 and on tiercache answer the same, byte for byte in
// RESP2 and RESP3, some inside MULTI, and leave every key's string the
// same after each command. The one difference allowed: a PFADD Redis
// answers INVALIDOBJ after raising registers for the elements before the
// corrupt spot leaves them raised in Redis, unchanged here (a command
// that answers an error changes nothing); the key is then copied from
// redis-server.
func TestHLLDifferential(t *testing.T) {
	redisSock := startRedis(t)
	_, ourSock := startServerWith(t, newTierCache(t), nil)
	r := rand.New(rand.NewPCG(diffSeed(t), 60))
	keys := []string{"a", "b", "c", "l", "nosuch"}
	dense := 0
	for round := range 6 {
		p := newDiffPair(t, redisSock, ourSock, round)
		ref, got, both := p.ref, p.got, p.both
		both("CONFIG", "SET", "hll-sparse-max-bytes", "3000")
		both("RPUSH", "l", "x")
		for i := range 250 {
			cmd := randHLLCommand(r, keys[:4])
			var before []string // for the failure's message
			for _, k := range keys {
				before = append(before, ref.do("GET", k))
			}
			// now and then alone in a transaction: EXEC's reply is compared
			tx := [][]string{cmd}
			if multi := r.IntN(12) == 0; multi {
				tx = [][]string{{"MULTI"}, cmd, {"EXEC"}}
			}
			var want, have string
			for _, c := range tx {
				want, have = both(c...)
			}
			if want != have {
				for i, k := range keys {
					t.Logf("%s before: %.200q", k, before[i])
				}
				t.Fatalf("round %d step %d %.120q: redis-server %.300q, tiercache %.300q", round, i, tx, want, have)
			}
			for _, k := range keys {
				w, h := both("GET", k)
				if w == h {
					if strings.HasPrefix(w, "$12304\r\nHYLL\x00") {
						dense++
					}
					continue
				}
				if cmd[0] == "PFADD" && strings.Contains(want, "INVALIDOBJ") && k == cmd[1] {
					both("DEL", k)
					if v := parseReply(w); v != nil && strings.HasPrefix(w, "$") {
						got.do("SET", k, w[strings.Index(w, "\r\n")+2:len(w)-2])
						ref.do("SET", k, w[strings.Index(w, "\r\n")+2:len(w)-2])
					}
					continue
				}
				t.Fatalf("round %d step %d %.120q: %s is %.300q in redis-server, %.300q in tiercache", round, i, cmd, k, w, h)
			}
		}
	}
	if dense == 0 {
		t.Errorf("no key turned dense: the test did not reach the dense encoding")
	}
}

// TestHLLTrackingMatchesRedis (S61): a tracking client that read a
// HyperLogLog (GET, PFCOUNT of one key or several) is told of PFADD's
// and PFMERGE's changes, and of another client's PFCOUNT that cached the
// cardinality in the string, but not of a PFADD that changed nothing nor
// of a PFCOUNT answered from the cache; its own PFCOUNT that cached the
// cardinality of a key it did not track tells it nothing, as
// redis-server 7.0 (RESP3 pushes, default mode and NOLOOP).
func TestHLLTrackingMatchesRedis(t *testing.T) {
	trackingMatchesRedis(t, []trackingStep{
		{1, []string{"PFADD", "k", "a", "b"}}, {0, []string{"PFCOUNT", "k"}}, {1, []string{"PFADD", "k", "a"}},
		{1, []string{"PFADD", "k", "c"}}, {0, []string{"GET", "k"}}, {1, []string{"PFCOUNT", "k"}}, {1, []string{"PFCOUNT", "k"}},
		{0, []string{"PFCOUNT", "k", "k2"}}, {1, []string{"PFADD", "k2", "z"}}, {0, []string{"PFCOUNT", "k", "k2"}},
		{1, []string{"PFMERGE", "k2", "k"}}, {1, []string{"PFMERGE", "k3", "k"}}, {0, []string{"PFCOUNT", "k3"}},
		{0, []string{"PFADD", "k", "own"}}, {0, []string{"PFCOUNT", "k"}}, {0, []string{"PFCOUNT", "k"}},
		{1, []string{"PFADD", "k4", "x"}}, {0, []string{"PFCOUNT", "k4"}}, {1, []string{"PFADD", "k4", "y"}},
		{0, []string{"MULTI"}}, {0, []string{"PFCOUNT", "k4"}}, {0, []string{"EXEC"}},
		{1, []string{"EVAL", "return redis.call('pfadd', KEYS[1], 'w')", "1", "k4"}}, {0, []string{"EVAL_RO", "return redis.call('pfcount', KEYS[1])", "1", "k4"}},
	})
}

// trackingStep is a command of client who (0 tracks keys, 1 does not).
type trackingStep struct {
	who int
	cmd []string
}

// trackingMatchesRedis runs steps on both servers with client 0
// tracking keys (default mode, then NOLOOP) and compares every reply and
// every invalidation it receives.
func trackingMatchesRedis(t *testing.T, steps []trackingStep) {
	drain := func(p *peers, i int, what string) {
		for p.sameRead(i, 40*time.Millisecond, what) != "" {
		}
	}
	for _, mode := range [][]string{{"CLIENT", "TRACKING", "ON"}, {"CLIENT", "TRACKING", "ON", "NOLOOP"}} {
		p := newPeers(t, 2, 3, nil)
		p.same(0, mode...)
		for _, s := range steps {
			p.same(s.who, s.cmd...)
			drain(p, 0, "after "+strings.Join(s.cmd, " "))
		}
	}
}

// TestHLLTenants (S61): the keys PFADD and PFMERGE make are their
// tenant's, as any write's.
func TestHLLTenants(t *testing.T) {
	_, path := startServerWith(t, newRagTenantCache(t), nil)
	r := dialRaw(t, path)
	r.expect([]step{
		{[]string{"PFADD", "rag:h", "a", "b"}, ":1"},
		{[]string{"PFMERGE", "rag:m", "rag:h", "nosuch"}, "+OK"},
		{[]string{"PFCOUNT", "rag:m"}, ":2"},
		{[]string{"PFADD", "other", "c"}, ":1"},
		{[]string{"PFCOUNT", "rag:h", "other"}, ":3"},
	})
	ragHoldsTwo(t, r, "rag:h and rag:m")
}

// ragHoldsTwo checks that INFO tenants counts two keys (what) in the rag
// tenant.
func ragHoldsTwo(t *testing.T, r *rawConn, what string) {
	t.Helper()
	r.cmd("INFO", "tenants")
	info := r.reply()
	line := info[strings.Index(info, "tenant_rag:"):]
	line = line[:strings.Index(line, "\r\n")]
	if !strings.Contains(line, ",keys=2,") {
		t.Errorf("rag holds %s: %q", what, line)
	}
}

// TestHLLThroughRemote (S61, tier T39): what PFADD, PFMERGE and a
// caching PFCOUNT write on one sidecar reaches another through the
// shared remote tier, byte for byte.
func TestHLLThroughRemote(t *testing.T) {
	a, b := remoteSidecarPair(t, "hll:")
	await := func(c *rawPeer, key, want string) { t.Helper(); awaitGet(t, c, key, want) }
	if r := b.do("PFADD", "h", "a", "b", "c"); r != ":1\r\n" {
		t.Fatalf("PFADD: %q", r)
	}
	await(a, "h", b.do("GET", "h"))
	if r := a.do("PFCOUNT", "h"); r != ":3\r\n" {
		t.Fatalf("PFCOUNT: %q", r)
	}
	await(b, "h", a.do("GET", "h")) // the cached cardinality
	b.do("PFMERGE", "m", "h")
	await(a, "m", b.do("GET", "m"))
	a.do("PFADD", "m", "d")
	await(b, "m", a.do("GET", "m"))
	if r := b.do("PFCOUNT", "m"); r != ":4\r\n" {
		t.Fatalf("PFCOUNT m: %q", r)
	}
}

// TestHLLStringsCrossServers (S61): a HyperLogLog string made by
// redis-server's PFADD, copied here with SET, counts and merges as it
// does in redis-server, and one made here reads the same in
// redis-server: sparse and dense, cache stale and valid.
func TestHLLStringsCrossServers(t *testing.T) {
	ref := dialExact(t, startRedis(t))
	_, ourSock := startServerWith(t, newTierCache(t), nil)
	got := dialExact(t, ourSock)
	bulk := func(r string) string { return r[strings.Index(r, "\r\n")+2 : len(r)-2] }
	for _, n := range []int{1, 10, 200, 1000, 3000, 20000} {
		add := []string{"PFADD", "src"}
		for i := range n {
			add = append(add, "m"+strconv.Itoa(i*7919))
		}
		for _, dir := range []struct {
			name     string
			from, to *exactConn
		}{{"redis→tiercache", ref, got}, {"tiercache→redis", got, ref}} {
			for _, c := range []*exactConn{ref, got} {
				c.do("FLUSHALL")
			}
			dir.from.do(add...)
			for _, cached := range []bool{false, true} {
				if cached {
					dir.from.do("PFCOUNT", "src")
				}
				v := bulk(dir.from.do("GET", "src"))
				dir.to.do("SET", "src", v)
				for _, c := range [][]string{{"PFCOUNT", "src"}, {"GET", "src"}, {"PFADD", "other", "x", "y"},
					{"PFCOUNT", "src", "other"}, {"PFMERGE", "dst", "other", "src"}, {"GET", "dst"}, {"PFCOUNT", "dst"},
					{"PFADD", "src", "extra"}, {"GET", "src"}} {
					if w, h := dir.from.do(c...), dir.to.do(c...); w != h {
						t.Fatalf("%s, %d elements, cached %v, %q: %.200q, then %.200q", dir.name, n, cached, c, w, h)
					}
				}
				dir.from.do("SET", "src", v) // as before the commands, for the cached round
				dir.to.do("DEL", "other", "dst")
				dir.from.do("DEL", "other", "dst")
			}
		}
	}
}

// randSparse is a random sparse HyperLogLog body: a few random opcodes,
// most of the time padded with zeros to cover exactly 16384 registers,
// now and then a byte flipped or the end cut.
func randSparse(r *rand.Rand) string {
	var b []byte
	sum := 0
	for n := r.IntN(8); n > 0; n-- {
		switch r.IntN(3) {
		case 0:
			l := 1 + r.IntN(64)
			b, sum = append(b, byte(l-1)), sum+l
		case 1:
			l := 1 + r.IntN(6000)
			b, sum = append(b, byte((l-1)>>8)|0x40, byte(l-1)), sum+l
		default:
			v, l := 1+r.IntN(32), 1+r.IntN(4)
			b, sum = append(b, byte((v-1)<<2|(l-1))|0x80), sum+l
		}
	}
	if left := 16384 - sum; left > 0 && r.IntN(4) != 0 {
		for left > 0 {
			l := min(left, 16384)
			b, left = append(b, byte((l-1)>>8)|0x40, byte(l-1)), left-l
		}
	}
	if len(b) > 0 && r.IntN(5) == 0 {
		b[r.IntN(len(b))] ^= byte(1 << r.IntN(8))
	}
	if len(b) > 0 && r.IntN(6) == 0 {
		b = b[:r.IntN(len(b))]
	}
	return hllSparse(string(b))
}

// TestHLLCorruptSparseDifferential (S61): random sparse strings, valid
// and corrupt, SET on redis-server 7.0 and on tiercache, then PFADD,
// PFCOUNT, PFMERGE and PFDEBUG answer the same and leave the same
// strings, but for a refused PFADD (see TestHLLDifferential).
func TestHLLCorruptSparseDifferential(t *testing.T) {
	ref := dialExact(t, startRedis(t))
	_, ourSock := startServerWith(t, newTierCache(t), nil)
	got := dialExact(t, ourSock)
	r := rand.New(rand.NewPCG(diffSeed(t), 61))
	for i := range 300 {
		body := randSparse(r)
		var cmd []string
		switch r.IntN(7) {
		case 0, 1:
			cmd = []string{"PFADD", "k"}
			for n := r.IntN(6); n > 0; n-- {
				cmd = append(cmd, "e"+strconv.Itoa(r.IntN(1000)))
			}
		case 2:
			cmd = []string{"PFCOUNT", "k"}
		case 3:
			cmd = []string{"PFCOUNT", "k", "k2"}
		case 4:
			cmd = []string{"PFMERGE", "k2", "k"}
		case 5:
			cmd = []string{"PFMERGE", "k", "k2"}
		default:
			cmd = []string{"PFDEBUG", []string{"DECODE", "TODENSE", "GETREG", "ENCODING"}[r.IntN(4)], "k"}
		}
		withK2 := r.IntN(2) == 0
		for _, c := range []*exactConn{ref, got} {
			c.do("SET", "k", body)
			c.do("DEL", "k2")
			if withK2 {
				c.do("PFADD", "k2", "x", "y", "z")
			}
		}
		want, have := ref.do(cmd...), got.do(cmd...)
		if want != have {
			t.Fatalf("step %d body %q %q: redis-server %.300q, tiercache %.300q", i, body, cmd, want, have)
		}
		for _, k := range []string{"k", "k2"} {
			w, h := ref.do("GET", k), got.do("GET", k)
			if w != h && !(cmd[0] == "PFADD" && k == "k" && strings.Contains(want, "INVALIDOBJ")) {
				t.Fatalf("step %d body %q %q: %s is %.300q in redis-server, %.300q in tiercache", i, body, cmd, k, w, h)
			}
		}
	}
}

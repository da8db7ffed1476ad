package server

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tiercache/tiercache/remote"
	"github.com/tiercache/tiercache/remote/redistest"
)

// bitopsCases are BITOP, BITFIELD, BITFIELD_RO and LCS edge cases, each
// followed where it matters by reads showing that a refused command
// changed nothing.
var bitopsCases = [][]string{
	{"SET", "a", "foobar"}, {"SET", "b", "abcdef\xff\x00\x80"}, {"RPUSH", "l", "x"}, {"SET", "e", ""},
	// BITOP
	{"BITOP", "AND", "d", "a", "b"}, {"GET", "d"}, {"BITOP", "or", "d", "a", "b"}, {"GET", "d"},
	{"BITOP", "Xor", "d", "a", "b", "a"}, {"GET", "d"}, {"BITOP", "NOT", "d", "b"}, {"GET", "d"},
	{"BITOP", "AND", "d", "a", "nosuch"}, {"GET", "d"}, {"BITOP", "OR", "d", "nosuch", "b"}, {"GET", "d"},
	{"BITOP", "AND", "d", "a"}, {"GET", "d"}, {"BITOP", "XOR", "d", "e", "e"}, {"EXISTS", "d"},
	{"SET", "d", "old"}, {"EXPIRE", "d", "100"}, {"BITOP", "OR", "d", "a"}, {"TTL", "d"}, {"GET", "d"},
	{"BITOP", "AND", "d", "nosuch"}, {"EXISTS", "d"}, {"BITOP", "AND", "d", "nosuch"},
	{"BITOP", "OR", "l2", "a"}, {"RPUSH", "l2", "y"}, {"BITOP", "OR", "l2", "a"}, {"TYPE", "l2"}, {"GET", "l2"},
	{"BITOP", "NOT", "d", "a", "b"}, {"BITOP", "NOT", "d"}, {"BITOP", "NOT", "d", "nosuch"}, {"EXISTS", "d"},
	{"BITOP", "NAND", "d", "a"}, {"BITOP", "DIFF", "d", "a", "b"}, {"BITOP", "ONE", "d", "a", "b"}, {"BITOP", "", "d", "a"},
	{"SET", "d", "keep"}, {"BITOP", "AND", "d", "a", "l"}, {"BITOP", "AND", "d", "l", "nosuch"}, {"GET", "d"},
	{"BITOP", "NOT", "d", "l"}, {"BITOP", "AND", "d"}, {"BITOP"}, {"GET", "d"},
	{"SET", "long", strings.Repeat("\xa5\x5a\x0f", 40)}, {"BITOP", "XOR", "d", "long", "a", "b"}, {"GET", "d"},
	{"BITOP", "AND", "d", "long", "long"}, {"GET", "d"}, {"BITOP", "NOT", "d", "long"}, {"GET", "d"},
	// BITFIELD
	{"BITFIELD", "f", "SET", "i8", "0", "100", "GET", "i8", "0", "INCRBY", "i8", "0", "100", "GET", "u8", "0"},
	{"BITFIELD", "f", "OVERFLOW", "SAT", "INCRBY", "i8", "0", "100", "OVERFLOW", "FAIL", "INCRBY", "i8", "0", "1", "OVERFLOW", "WRAP", "INCRBY", "i8", "0", "1"},
	{"GET", "f"}, {"BITFIELD", "f"}, {"EXISTS", "f"}, {"BITFIELD", "nosuch"}, {"EXISTS", "nosuch"},
	{"BITFIELD", "f", "GET", "u63", "0", "GET", "i64", "0", "GET", "i64", "#1", "GET", "u1", "#7", "GET", "i1", "7"},
	{"BITFIELD", "f", "SET", "i64", "#1", "-9223372036854775808", "INCRBY", "i64", "#1", "-1", "OVERFLOW", "SAT", "INCRBY", "i64", "#1", "-5"},
	{"BITFIELD", "f", "SET", "u63", "3", "9223372036854775807", "INCRBY", "u63", "3", "1", "OVERFLOW", "SAT", "INCRBY", "u63", "3", "9"},
	{"BITFIELD", "f", "OVERFLOW", "SAT", "SET", "u8", "0", "-1", "OVERFLOW", "WRAP", "SET", "u8", "0", "-1", "OVERFLOW", "FAIL", "SET", "u8", "0", "-1"},
	{"BITFIELD", "f", "OVERFLOW", "SAT", "SET", "i4", "0", "-100", "SET", "i4", "0", "100", "OVERFLOW", "WRAP", "SET", "i4", "0", "-100"},
	{"BITFIELD", "f", "OVERFLOW", "SAT", "INCRBY", "u4", "100", "-9223372036854775808", "INCRBY", "u4", "100", "9223372036854775807", "INCRBY", "i5", "3", "-9223372036854775808"},
	{"BITFIELD", "f", "INCRBY", "u7", "5", "-9223372036854775808", "INCRBY", "i9", "5", "9223372036854775807", "GET", "u16", "#1000"},
	{"GET", "f"}, {"STRLEN", "f"},
	{"BITFIELD", "f", "get", "u8", "0", "set", "u8", "0", "1", "incrby", "u8", "0", "1", "overflow", "sat"},
	// a refused BITFIELD changes nothing, whichever subcommand is wrong
	{"BITFIELD", "f", "SET", "u8", "0", "7", "GET", "u64", "0"}, {"BITFIELD", "f", "SET", "u8", "0", "7", "GET", "i65", "0"},
	{"BITFIELD", "f", "SET", "u8", "0", "7", "GET", "i0", "0"}, {"BITFIELD", "f", "SET", "u8", "0", "7", "GET", "x8", "0"},
	{"BITFIELD", "f", "SET", "u8", "0", "7", "GET", "I8", "0"}, {"BITFIELD", "f", "SET", "u8", "0", "7", "GET", "i08", "0"},
	{"BITFIELD", "f", "SET", "u8", "0", "7", "GET", "", "0"}, {"BITFIELD", "f", "SET", "u8", "0", "7", "GET", "i", "0"},
	{"BITFIELD", "f", "SET", "u8", "0", "7", "GET", "u8", "-1"}, {"BITFIELD", "f", "SET", "u8", "0", "7", "GET", "u8", "x"},
	{"BITFIELD", "f", "SET", "u8", "0", "7", "GET", "u8", "#-1"}, {"BITFIELD", "f", "SET", "u8", "0", "7", "GET", "u8", "#"},
	{"BITFIELD", "f", "SET", "u8", "0", "7", "GET", "u8", ""}, {"BITFIELD", "f", "SET", "u8", "0", "7", "GET", "u8", "4294967296"},
	{"BITFIELD", "f", "SET", "u8", "0", "7", "GET", "u8", "4294967295"}, {"BITFIELD", "f", "SET", "u8", "0", "7", "GET", "u8", "#536870912"},
	{"BITFIELD", "f", "SET", "u8", "0", "7", "GET", "u8", "#536870911"}, {"BITFIELD", "f", "SET", "u8", "0", "7", "GET", "i64", "#2305843009213693953"},
	{"BITFIELD", "f", "SET", "u8", "0", "7", "OVERFLOW", "MAYBE"}, {"BITFIELD", "f", "SET", "u8", "0", "7", "OVERFLOW"},
	{"BITFIELD", "f", "SET", "u8", "0", "7", "GET", "u8"}, {"BITFIELD", "f", "SET", "u8", "0", "7", "SET", "u8", "0"},
	{"BITFIELD", "f", "SET", "u8", "0", "7", "INCRBY", "u8", "0", "x"}, {"BITFIELD", "f", "SET", "u8", "0", "7", "SET", "u8", "0", "1.5"},
	{"BITFIELD", "f", "SET", "u8", "0", "7", "NOSUCH"}, {"BITFIELD", "f", "SET", "u8", "0", "7", "INCRBY", "u8", "0", "99999999999999999999"},
	{"GET", "f"}, {"EXISTS", "f2"},
	{"BITFIELD", "f2", "OVERFLOW", "FAIL", "SET", "u8", "100", "300"}, {"GET", "f2"}, {"STRLEN", "f2"},
	{"BITFIELD", "f2", "SET", "u8", "0", "0"}, {"BITFIELD", "f2", "SET", "u8", "200", "0"}, {"STRLEN", "f2"},
	{"BITFIELD", "l", "GET", "u8", "0"}, {"BITFIELD", "l", "SET", "u8", "0", "1"}, {"BITFIELD", "l", "SET", "u64", "0", "1"},
	{"BITFIELD", "l"}, {"BITFIELD_RO", "l", "GET", "u8", "0"}, {"BITFIELD_RO", "l", "SET", "u8", "0", "1"}, {"LRANGE", "l", "0", "-1"},
	// BITFIELD_RO
	{"BITFIELD_RO", "f", "GET", "u8", "0", "GET", "i16", "#3"}, {"BITFIELD_RO", "f"}, {"BITFIELD_RO", "nosuch", "GET", "u8", "0"},
	{"BITFIELD_RO", "f", "GET", "u8", "0", "SET", "u8", "0", "1"}, {"BITFIELD_RO", "f", "INCRBY", "u8", "0", "1"},
	{"BITFIELD_RO", "f", "OVERFLOW", "SAT"}, {"BITFIELD_RO", "f", "OVERFLOW", "X", "SET", "u8", "0", "1"},
	{"BITFIELD_RO", "f", "SET", "u65", "0", "1"}, {"BITFIELD_RO", "f", "GET", "u8"}, {"BITFIELD_RO"}, {"GET", "f"},
	// LCS
	{"SET", "x", "ohmytext"}, {"SET", "y", "mynewtext"}, {"LCS", "x", "y"}, {"LCS", "x", "y", "LEN"},
	{"LCS", "x", "y", "IDX"}, {"LCS", "x", "y", "idx", "MINMATCHLEN", "4"}, {"LCS", "x", "y", "IDX", "WITHMATCHLEN"},
	{"LCS", "x", "y", "IDX", "MINMATCHLEN", "2", "WITHMATCHLEN"}, {"LCS", "x", "y", "IDX", "MINMATCHLEN", "-5"},
	{"LCS", "x", "y", "LEN", "IDX"}, {"LCS", "x", "y", "IDX", "LEN"}, {"LCS", "x", "y", "MINMATCHLEN"}, {"LCS", "x", "y", "MINMATCHLEN", "x"},
	{"LCS", "x", "y", "MINMATCHLEN", "1", "LEN"}, {"LCS", "x", "y", "WITHMATCHLEN"}, {"LCS", "x", "y", "BOGUS"},
	{"LCS", "x", "l"}, {"LCS", "l", "x", "BOGUS"}, {"LCS", "x", "nosuch"}, {"LCS", "nosuch", "nosuch2", "IDX"},
	{"LCS", "nosuch", "x", "LEN"}, {"LCS", "x", "x", "IDX", "WITHMATCHLEN"}, {"LCS", "e", "x"}, {"LCS", "x"},
	{"SET", "p", "abcabcabcxyz"}, {"SET", "q", "xyzabcaabbcc"}, {"LCS", "p", "q"}, {"LCS", "p", "q", "IDX", "WITHMATCHLEN"},
	{"LCS", "a", "b", "IDX"}, {"LCS", "long", "b"}, {"LCS", "long", "d", "IDX", "WITHMATCHLEN", "MINMATCHLEN", "2"},
	// MULTI, scripts, WATCH (BITOP touches its destination only; a
	// BITFIELD that changed nothing touches nothing)
	{"MULTI"}, {"BITOP", "OR", "d", "a", "b"}, {"BITFIELD", "d", "INCRBY", "u8", "0", "1"}, {"LCS", "d", "a", "LEN"}, {"EXEC"},
	{"MULTI"}, {"BITFIELD", "d", "GET", "u65", "0"}, {"EXEC"},
	{"WATCH", "a", "b"}, {"BITOP", "OR", "d", "a", "b"}, {"MULTI"}, {"PING"}, {"EXEC"},
	{"WATCH", "d"}, {"BITOP", "OR", "d", "a", "b"}, {"MULTI"}, {"PING"}, {"EXEC"},
	{"WATCH", "d"}, {"BITOP", "AND", "d2", "nosuch"}, {"BITFIELD", "d", "GET", "u8", "0"}, {"BITFIELD", "d", "SET", "u8", "0", "0"},
	{"BITFIELD", "d", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "300"}, {"MULTI"}, {"PING"}, {"EXEC"},
	{"WATCH", "d"}, {"BITFIELD", "d", "SET", "u8", "0", "9"}, {"MULTI"}, {"PING"}, {"EXEC"},
	{"EVAL", "return redis.call('bitfield', KEYS[1], 'INCRBY', 'u8', 0, 300, 'GET', 'i8', 0)", "1", "s1"},
	{"EVAL", "return redis.call('bitop', 'xor', KEYS[1], KEYS[2], KEYS[3])", "3", "s2", "a", "b"},
	{"EVAL", "return redis.call('lcs', KEYS[1], KEYS[2], 'IDX')", "2", "x", "y"},
	{"EVAL", "return redis.pcall('bitfield', KEYS[1], 'GET', 'u64', 0)", "1", "s1"},
	{"EVAL_RO", "return redis.call('bitfield_ro', KEYS[1], 'GET', 'u8', 0)", "1", "s1"},
	{"EVAL_RO", "return redis.pcall('bitfield', KEYS[1], 'GET', 'u8', 0)", "1", "s1"},
	{"GET", "s1"}, {"GET", "s2"},
	{"COMMAND", "GETKEYS", "bitop", "and", "d", "a", "b"}, {"COMMAND", "GETKEYS", "lcs", "a", "b"},
	{"COMMAND", "GETKEYS", "bitfield", "k", "get", "u8", "0"}, {"COMMAND", "GETKEYS", "bitfield_ro", "k", "get", "u8", "0"},
}

// TestBitOpsMatchRedis (S55): BITOP, BITFIELD, BITFIELD_RO and LCS answer
// bitopsCases as redis-server 7.0 does, byte for byte in RESP2 and RESP3,
// refusals included, and a refused command leaves the keys as they were.
func TestBitOpsMatchRedis(t *testing.T) { casesMatchRedis(t, bitopsCases) }

// casesMatchRedis runs cases on a fresh redis-server and tiercache, in
// RESP2 then RESP3, comparing each reply byte for byte.
func casesMatchRedis(t *testing.T, cases [][]string) {
	redisSock := startRedis(t)
	_, ourSock := startServerWith(t, newTierCache(t), nil)
	for _, proto := range []string{"2", "3"} {
		ref, got := dialExact(t, redisSock), dialExact(t, ourSock)
		ref.do("FLUSHALL")
		got.do("FLUSHALL")
		ref.do("HELLO", proto) // the replies name each server
		got.do("HELLO", proto)
		for i, c := range cases {
			if want, have := ref.do(c...), got.do(c...); want != have {
				t.Errorf("RESP%s case %d %.200q: redis-server %.300q, tiercache %.300q", proto, i, c, want, have)
			}
		}
	}
}

// randBitCommand is a random bit command on a few short strings: random
// BITFIELD subcommand lists (any type, offset and value, OVERFLOW
// anywhere, a bad argument now and then), BITOP, LCS, SETBIT and SET.
func randBitCommand(r *rand.Rand) ([]string, diffKind) {
	keys := []string{"a", "b", "c", "nosuch"}
	key := func() string { return keys[r.IntN(len(keys))] }
	num := func() string {
		switch r.IntN(6) {
		case 0:
			return strconv.FormatInt(int64(r.Uint64()), 10)
		case 1:
			return []string{"9223372036854775807", "-9223372036854775808", "0", "-1", "1"}[r.IntN(5)]
		}
		return strconv.Itoa(r.IntN(600) - 300)
	}
	switch r.IntN(10) {
	case 0:
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return []string{"SET", key(), string(b)}, diffExact
	case 1:
		return []string{"SETBIT", key(), strconv.Itoa(r.IntN(100)), strconv.Itoa(r.IntN(2))}, diffExact
	case 2:
		cmd := []string{"BITOP", []string{"AND", "OR", "XOR", "NOT"}[r.IntN(4)], key()}
		for n := 1 + r.IntN(3); n > 0; n-- {
			cmd = append(cmd, key())
		}
		return cmd, diffExact
	case 3:
		cmd := []string{"LCS", key(), key()}
		for n := r.IntN(3); n > 0; n-- {
			cmd = append(cmd, []string{"IDX", "LEN", "WITHMATCHLEN", "MINMATCHLEN"}[r.IntN(4)])
			if cmd[len(cmd)-1] == "MINMATCHLEN" {
				cmd = append(cmd, strconv.Itoa(r.IntN(4)))
			}
		}
		return cmd, diffExact
	}
	name := "BITFIELD"
	if r.IntN(5) == 0 {
		name = "BITFIELD_RO"
	}
	cmd := []string{name, key()}
	for n := 1 + r.IntN(5); n > 0; n-- {
		signed := r.IntN(2) == 0
		bits := 1 + r.IntN(64)
		if !signed && bits == 64 && r.IntN(10) != 0 {
			bits = 63
		}
		typ := "u" + strconv.Itoa(bits)
		if signed {
			typ = "i" + strconv.Itoa(bits)
		}
		off := strconv.Itoa(r.IntN(90))
		if r.IntN(4) == 0 {
			off = "#" + strconv.Itoa(r.IntN(6))
		}
		switch r.IntN(8) {
		case 0:
			cmd = append(cmd, "OVERFLOW", []string{"WRAP", "SAT", "FAIL", "wrap", "sat", "fail", "NONE"}[r.IntN(7)])
		case 1, 2:
			cmd = append(cmd, "GET", typ, off)
		case 3, 4, 5:
			cmd = append(cmd, "INCRBY", typ, off, num())
		default:
			cmd = append(cmd, "SET", typ, off, num())
		}
	}
	return cmd, diffExact
}

// TestBitOpsDifferential (S55): random BITFIELD, BITFIELD_RO, BITOP, LCS,
// SETBIT and SET on a few strings (and a list) run on redis-server 7.0 and
// on tiercache give the same replies, byte for byte in RESP2 and RESP3,
// some inside MULTI, and leave the same strings after each command.
func TestBitOpsDifferential(t *testing.T) {
	d := &typedDiff{t: t, gen: randBitCommand, keys: []string{"a", "b", "c", "nosuch"},
		state: func(k string) []string { return []string{"GET", k} },
		setup: [][]string{{"RPUSH", "c", "x"}}}
	d.run(8, 400)
}

// TestBitOpsLimits (S55): with max_value at 64 bytes, a BITFIELD offset
// past it gets Redis's bit offset error, a write reaching past it the
// value limit's error, and an LCS whose table of lengths would pass it
// Redis's transient-memory error; each changes nothing.
func TestBitOpsLimits(t *testing.T) {
	_, path := startServerWith(t, newTierCache(t), func(o *Options) { o.MaxValueBytes = 64 })
	r := dialRaw(t, path)
	tooLong := "-ERR string exceeds maximum allowed size (max_value, 64 bytes)"
	r.expect([]step{
		{[]string{"BITFIELD", "f", "SET", "u8", "#64", "1"}, "-" + errBitOffset},
		{[]string{"BITFIELD", "f", "GET", "u8", "512"}, "-" + errBitOffset},
		{[]string{"BITFIELD_RO", "f", "GET", "u8", "#64"}, "-" + errBitOffset},
		{[]string{"BITFIELD", "f", "SET", "u8", "0", "1", "SET", "i64", "504", "1"}, tooLong},
		{[]string{"EXISTS", "f"}, ":0"},
		{[]string{"BITFIELD", "f", "GET", "i64", "504"}, "*[:0]"},
		{[]string{"BITFIELD", "f", "SET", "u8", "#63", "255"}, "*[:0]"},
		{[]string{"STRLEN", "f"}, ":64"},
		{[]string{"SET", "a", "abc"}, "+OK"},
		{[]string{"SET", "b", "abcd"}, "+OK"},
		{[]string{"LCS", "a", "a", "LEN"}, ":3"},
		{[]string{"LCS", "a", "b"}, "-" + errLCSMemory},
		{[]string{"LCS", "b", "a", "IDX"}, "-" + errLCSMemory},
		{[]string{"BITOP", "OR", "d", "f", "a"}, ":64"},
	})
}

// TestBitOpsTenants (S55): the keys BITFIELD and BITOP make are their
// tenant's, as any write's: INFO tenants counts them under the tenant
// whose prefix they have, and an empty BITOP result makes none.
func TestBitOpsTenants(t *testing.T) {
	_, path := startServerWith(t, newRagTenantCache(t), nil)
	r := dialRaw(t, path)
	r.expect([]step{
		{[]string{"BITFIELD", "rag:f", "SET", "u8", "0", "65"}, "*[:0]"},
		{[]string{"BITOP", "OR", "rag:d", "rag:f", "nosuch"}, ":1"},
		{[]string{"BITOP", "AND", "rag:e", "nosuch"}, ":0"},
		{[]string{"LCS", "rag:f", "rag:d"}, "$A"},
		{[]string{"BITFIELD", "other", "SET", "u8", "0", "66"}, "*[:0]"},
	})
	r.cmd("INFO", "tenants")
	info := r.reply()
	for _, want := range []string{"tenant_rag:", "tenant_default:"} {
		line := info[strings.Index(info, want):]
		line = line[:strings.Index(line, "\r\n")]
		if !strings.Contains(line, ",keys=") || strings.Contains(line, ",keys=0,") {
			t.Errorf("INFO tenants: %q", line)
		}
		if want == "tenant_rag:" && !strings.Contains(line, ",keys=2,") {
			t.Errorf("rag holds rag:f and rag:d: %q", line)
		}
	}
}

// TestBitOpsThroughRemote (S55, tier T39): what BITFIELD and BITOP write on
// one sidecar reaches another through the shared remote tier, as any
// write's: each reads the strings the other made and changed.
func TestBitOpsThroughRemote(t *testing.T) {
	a, b := remoteSidecarPair(t, "bits:")
	await := func(c *rawPeer, key, want string) { t.Helper(); awaitGet(t, c, key, want) }
	if r := b.do("BITFIELD", "f", "SET", "u8", "0", "65"); r != "*1\r\n:0\r\n" {
		t.Fatalf("BITFIELD: %q", r)
	}
	if r := b.do("BITOP", "OR", "d", "f", "nosuch"); r != ":1\r\n" {
		t.Fatalf("BITOP: %q", r)
	}
	await(a, "f", "$1\r\nA\r\n")
	await(a, "d", "$1\r\nA\r\n")
	a.do("BITFIELD", "d", "INCRBY", "u8", "0", "1")
	await(b, "d", "$1\r\nB\r\n")
	b.do("BITOP", "AND", "d", "nosuch")
	await(a, "d", "$-1\r\n")
}

// remoteSidecarPair is two sidecars sharing one remote tier (a Redis
// server, keys under prefix), a connection to each.
func remoteSidecarPair(t *testing.T, prefix string) (a, b *rawPeer) {
	rs := redistest.StartServer(t)
	open := func() *rawPeer {
		_, path := startRemoteSidecar(t, remote.Config{Addrs: []string{rs.Addr}, Prefix: prefix, Timeout: 500 * time.Millisecond}, nil)
		return dialPeer(t, path)
	}
	return open(), open()
}

// awaitGet waits, up to 5 s, for GET key to answer want on c (a write
// of another sidecar reaching c through the remote tier).
func awaitGet(t *testing.T, c *rawPeer, key, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for c.do("GET", key) != want {
		if time.Now().After(deadline) {
			t.Fatalf("GET %s never answered %q (last %q)", key, want, c.do("GET", key))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

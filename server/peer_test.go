package server

import (
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tiercache/tiercache/remote/redistest"
)

// startRedis runs a redis-server (the peer: Redis 7.0 semantics) on a Unix
// socket, with the extra configuration arguments given, and returns its
// path; it skips (fails in CI) without one.
func startRedis(t testing.TB, extra ...string) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		skipOrFail(t, "redis-server is not installed (apt-get install redis-server): no peer to compare with")
	}
	dir := t.TempDir()
	sock := shortSocket(t)
	cmd := exec.Command(bin, append([]string{"--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no", "--dir", dir}, extra...)...)
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := redistest.Start(cmd); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// redis-server binds its socket before it listens on it: wait for a
	// connection to be accepted, not for the file.
	for i := 0; ; i++ {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			return sock
		}
		if i == 200 {
			t.Fatalf("redis-server accepts no connection at %s", filepath.Base(sock))
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// peerPair is one connection to tiercache and one to redis-server.
type peerPair struct {
	t          *testing.T
	ours, peer *rawConn
}

func newPeerPair(t *testing.T) *peerPair {
	t.Helper()
	peer := dialRaw(t, startRedis(t))
	_, path := startServerWith(t, newTierCache(t), nil)
	return &peerPair{t: t, ours: dialRaw(t, path), peer: peer}
}

// do sends args to both and returns both replies.
func (p *peerPair) do(args ...string) (ours, peer string) {
	p.t.Helper()
	p.ours.cmd(args...)
	p.peer.cmd(args...)
	return p.ours.reply(), p.peer.reply()
}

// same sends each command to both and fails on the first that differs.
func (p *peerPair) same(cmds [][]string) {
	p.t.Helper()
	for i, args := range cmds {
		if ours, peer := p.do(args...); ours != peer {
			p.t.Fatalf("command %d %q: tiercache %q, redis-server %q", i, args, ours, peer)
		}
	}
}

// TestStringsAndHashesMatchRedis (S20, S3): the string and hash commands'
// edge cases answer as redis-server 7.0 answers, byte for byte.
func TestStringsAndHashesMatchRedis(t *testing.T) {
	p := newPeerPair(t)
	var cmds [][]string
	add := func(args ...string) { cmds = append(cmds, args) }
	// Counters and their errors.
	for _, v := range []string{"10", "-5", "007", "+1", " 1", "1 ", "x", "", "9223372036854775807", "-9223372036854775808", "0", "-0", "12345678901234567890"} {
		add("SET", "n", v)
		add("INCR", "n")
		add("GET", "n")
		add("SET", "n", v)
		add("DECR", "n")
		add("SET", "n", v)
		add("INCRBY", "n", "-3")
		add("DECRBY", "n", "-9223372036854775808")
		add("INCRBY", "n", v)
	}
	add("DEL", "n")
	add("INCRBY", "n", "abc")
	add("INCR", "n", "x")
	// Floats: long double sums and Redis's printing.
	for _, pair := range [][2]string{{"10.50", "0.1"}, {"5.0e3", "2.0e2"}, {"0.1", "0.2"}, {"1", "1e-20"}, {"3", "-3"}, {"0", "-0.0"},
		{"1e308", "1e308"}, {"1.7976931348623157e308", "1e308"}, {"inf", "1"}, {"1", "inf"}, {"1", "nan"}, {"abc", "1"}, {"1", " 1"},
		{"1", "0x10"}, {"1", "1e-5000"}, {"1", "1e5000"}, {"123456789.123456789", "0.000000001"}, {"-1.5", "1.5"}, {"1", "+.5"}} {
		add("SET", "f", pair[0])
		add("INCRBYFLOAT", "f", pair[1])
		add("GET", "f")
		add("HSET", "hf", "x", pair[0])
		add("HINCRBYFLOAT", "hf", "x", pair[1])
		add("HGET", "hf", "x")
	}
	add("DEL", "f", "hf")
	add("INCRBYFLOAT", "f", "2.5")
	add("HINCRBYFLOAT", "hf", "y", "2.5")
	// APPEND, GETRANGE, SETRANGE, GETSET, MSETNX.
	add("APPEND", "s", "hello")
	add("APPEND", "s", " world")
	for _, r := range [][2]string{{"0", "4"}, {"-5", "-1"}, {"-1", "-5"}, {"5", "2"}, {"0", "-1"}, {"-100", "100"}, {"20", "30"}, {"x", "1"}, {"3", "3"}} {
		add("GETRANGE", "s", r[0], r[1])
		add("SUBSTR", "s", r[0], r[1])
		add("GETRANGE", "nope", r[0], r[1])
	}
	add("SETRANGE", "s", "6", "WORLD")
	add("SETRANGE", "s", "15", "!")
	add("GET", "s")
	add("SETRANGE", "s", "-1", "x")
	add("SETRANGE", "s", "0", "")
	add("SETRANGE", "new", "3", "")
	add("EXISTS", "new")
	add("SETRANGE", "new", "2", "ab")
	add("GET", "new")
	add("GETSET", "s", "v2")
	add("GETSET", "fresh", "v")
	add("MSETNX", "m1", "a", "m2", "b")
	add("MSETNX", "m2", "c", "m3", "d")
	add("MGET", "m1", "m2", "m3")
	add("MSETNX", "m4", "a", "m4", "b")
	add("GET", "m4")
	add("MSETNX", "m5")
	add("MSETNX", "m5", "a", "m6")
	// Bits.
	for _, b := range [][]string{{"s", "0", "1"}, {"s", "7", "1"}, {"s", "100", "1"}, {"s", "7", "0"}, {"s", "-1", "1"}, {"s", "1", "2"},
		{"s", "4294967296", "1"}, {"s", "x", "1"}, {"b", "3", "1"}, {"b", "0", "x"}} {
		add(append([]string{"SETBIT"}, b...)...)
		add("GETBIT", b[0], b[1])
	}
	add("GET", "b")
	add("SET", "bits", "\xff\xf0\x00\x0f")
	for _, r := range [][]string{{}, {"0", "0"}, {"1", "-1"}, {"-2", "-1"}, {"-1", "-2"}, {"0", "0", "BIT"}, {"3", "12", "bit"}, {"5", "-3", "BIT"},
		{"0", "1", "BYTE"}, {"0", "1", "WORD"}, {"0"}, {"x", "1"}, {"0", "100"}, {"-100", "-50", "BIT"}} {
		add(append([]string{"BITCOUNT", "bits"}, r...)...)
		add(append([]string{"BITCOUNT", "nope"}, r...)...)
	}
	for _, bit := range []string{"0", "1", "2", "x"} {
		for _, r := range [][]string{{}, {"1"}, {"2", "-1"}, {"0", "0"}, {"0", "-1", "BIT"}, {"9", "20", "bit"}, {"-3", "-1", "BIT"},
			{"1", "1", "BYTE"}, {"0", "1", "WORD"}, {"5"}, {"-1"}, {"2", "1"}} {
			add(append([]string{"BITPOS", "bits", bit}, r...)...)
			add(append([]string{"BITPOS", "nope", bit}, r...)...)
		}
	}
	add("SET", "ones", "\xff\xff")
	add("BITPOS", "ones", "0")
	add("BITPOS", "ones", "0", "0")
	add("BITPOS", "ones", "0", "0", "-1")
	add("BITPOS", "ones", "0", "0", "-1", "BIT")
	add("SET", "empty", "")
	add("BITPOS", "empty", "0")
	add("BITPOS", "empty", "1")
	add("BITCOUNT", "empty", "0", "-1")
	// Hashes.
	add("HSET", "h", "a", "1", "b", "2", "a", "3")
	add("HSET", "h", "c")
	add("HMSET", "h", "d", "4")
	add("HMSET", "h", "d")
	add("HSETNX", "h", "a", "x")
	add("HSETNX", "h", "e", "5")
	add("HGETALL", "h")
	add("HKEYS", "h")
	add("HVALS", "h")
	add("HMGET", "h", "a", "zz", "e")
	add("HMGET", "nope", "a")
	add("HGET", "h", "zz")
	add("HGET", "nope", "a")
	add("HLEN", "h")
	add("HLEN", "nope")
	add("HEXISTS", "h", "a")
	add("HEXISTS", "h", "zz")
	add("HSTRLEN", "h", "a")
	add("HSTRLEN", "h", "zz")
	add("HDEL", "h", "a", "a", "zz")
	add("HSET", "h", "a", "again")
	add("HGETALL", "h")
	add("HINCRBY", "h", "n", "5")
	add("HINCRBY", "h", "n", "-9223372036854775808")
	add("HINCRBY", "h", "n", "9223372036854775807")
	add("HINCRBY", "h", "a", "1")
	add("HINCRBY", "h", "n", "x")
	add("HINCRBYFLOAT", "h", "a", "1")
	add("HINCRBYFLOAT", "h", "n", "x")
	add("HSCAN", "h", "0")
	add("HSCAN", "h", "0", "MATCH", "[ab]*")
	add("HSCAN", "h", "0", "COUNT", "1")
	add("HSCAN", "h", "0", "COUNT", "0")
	add("HSCAN", "h", "0", "COUNT", "x")
	add("HSCAN", "h", "x")
	add("HSCAN", "h", "0", "MATCH")
	add("HSCAN", "nope", "0", "BOGUS")
	add("HRANDFIELD", "nope")
	add("HRANDFIELD", "nope", "3")
	add("HRANDFIELD", "h", "0")
	add("HRANDFIELD", "h", "x")
	add("HRANDFIELD", "h", "1", "WITHVALUE")
	add("HRANDFIELD", "h", "1", "WITHVALUES", "x")
	add("HRANDFIELD", "h", "-9223372036854775807", "WITHVALUES")
	add("HRANDFIELD", "h", "100")
	add("HRANDFIELD", "h", "100", "WITHVALUES")
	add("HDEL", "h", "a", "b", "c", "d", "e", "n")
	add("EXISTS", "h")
	add("TYPE", "h")
	// WRONGTYPE both ways, arity.
	add("HSET", "h", "f", "v")
	add("SET", "str", "v")
	for _, c := range [][]string{{"INCR", "h"}, {"DECRBY", "h", "1"}, {"INCRBYFLOAT", "h", "1"}, {"APPEND", "h", "x"}, {"GETRANGE", "h", "0", "1"},
		{"SETRANGE", "h", "0", "x"}, {"GETSET", "h", "x"}, {"SETBIT", "h", "1", "1"}, {"GETBIT", "h", "1"}, {"BITCOUNT", "h"}, {"BITPOS", "h", "1"},
		{"SUBSTR", "h", "0", "1"}, {"STRLEN", "h"}, {"MSETNX", "h", "x"}} {
		add(c...)
	}
	for _, c := range [][]string{{"HSET", "str", "f", "v"}, {"HSETNX", "str", "f", "v"}, {"HGET", "str", "f"}, {"HMGET", "str", "f"}, {"HGETALL", "str"},
		{"HDEL", "str", "f"}, {"HEXISTS", "str", "f"}, {"HLEN", "str"}, {"HKEYS", "str"}, {"HVALS", "str"}, {"HSTRLEN", "str", "f"},
		{"HINCRBY", "str", "f", "1"}, {"HINCRBYFLOAT", "str", "f", "1"}, {"HRANDFIELD", "str"}, {"HRANDFIELD", "str", "2"}, {"HSCAN", "str", "0"}, {"HMSET", "str", "f", "v"}} {
		add(c...)
	}
	add("GET", "str")
	add("HGETALL", "h")
	for _, c := range [][]string{{"HSET", "h"}, {"HSET", "h", "f"}, {"HGET", "h"}, {"HDEL", "h"}, {"HINCRBY", "h", "f"}, {"HSCAN", "h"}, {"INCR"}, {"INCRBY", "n"},
		{"GETRANGE", "s", "0"}, {"SETBIT", "s", "0"}, {"BITPOS", "s"}, {"BITCOUNT"}, {"OBJECT"}, {"HRANDFIELD"}} {
		add(c...)
	}
	// TTLs: kept by the read-modify-writes, cleared by GETSET.
	add("SET", "t", "1", "EX", "1000")
	add("INCR", "t")
	add("TTL", "t")
	add("APPEND", "t", "0")
	add("SETRANGE", "t", "0", "9")
	add("SETBIT", "t", "0", "1")
	add("INCRBYFLOAT", "t", "1.5")
	add("TTL", "t")
	add("GETSET", "t", "x")
	add("TTL", "t")
	add("HSET", "ht", "a", "1")
	add("EXPIRE", "ht", "1000")
	add("HSET", "ht", "b", "2")
	add("HINCRBY", "ht", "a", "1")
	add("HDEL", "ht", "b")
	add("TTL", "ht")
	// SCAN TYPE, OBJECT.
	add("FLUSHALL")
	add("HSET", "hk", "a", "1")
	add("SET", "sk", "1")
	add("SCAN", "0", "TYPE", "hash")
	add("SCAN", "0", "TYPE", "string")
	add("SCAN", "0", "TYPE", "list")
	add("SCAN", "0", "MATCH", "h*", "TYPE", "HASH")
	add("OBJECT", "ENCODING", "hk")
	add("OBJECT", "ENCODING", "nope")
	add("OBJECT", "FREQ", "nope")
	add("OBJECT", "BOGUS", "hk")
	add("OBJECT", "ENCODING")
	add("OBJECT", "REFCOUNT", "hk")
	p.same(cmds)
}

// TestStringsAndHashesModel (S20): random sequences of string and hash
// commands over a few keys, fields and values, sent to tiercache and to
// redis-server, get the same replies (redis-server is the model). The
// seed is printed, so a failure can be replayed.
func TestStringsAndHashesModel(t *testing.T) {
	p := newPeerPair(t)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("TIERCACHE_MODEL_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (TIERCACHE_MODEL_SEED replays it)", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	pick := func(s ...string) string { return s[r.IntN(len(s))] }
	key := func() string { return pick("k1", "k2", "k3", "h1", "h2") }
	field := func() string { return pick("a", "b", "c", "d", "e") }
	val := func() string {
		return pick("1", "-3", "x", "10.5", "", "0", "007", "2", "9223372036854775806", "-9223372036854775807", "1e3", "0.1", "hello", "\x00\xff")
	}
	num := func() string { return strconv.Itoa(r.IntN(25) - 12) }
	gens := []func() []string{
		func() []string { return []string{"SET", key(), val()} },
		func() []string { return []string{"GET", key()} },
		func() []string { return []string{"DEL", key()} },
		func() []string { return []string{pick("INCR", "DECR"), key()} },
		func() []string { return []string{pick("INCRBY", "DECRBY"), key(), num()} },
		func() []string { return []string{"INCRBYFLOAT", key(), pick("0.1", "-2.5", "1e3", "3", "x")} },
		func() []string { return []string{"APPEND", key(), val()} },
		func() []string { return []string{pick("GETRANGE", "SUBSTR"), key(), num(), num()} },
		func() []string { return []string{"SETRANGE", key(), strconv.Itoa(r.IntN(12)), val()} },
		func() []string { return []string{"GETSET", key(), val()} },
		func() []string { return []string{"STRLEN", key()} },
		func() []string { return []string{"MSETNX", key(), val(), key(), val()} },
		func() []string { return []string{"SETBIT", key(), strconv.Itoa(r.IntN(40)), pick("0", "1")} },
		func() []string { return []string{"GETBIT", key(), strconv.Itoa(r.IntN(40))} },
		func() []string { return []string{"BITCOUNT", key(), num(), num(), pick("BYTE", "BIT")} },
		func() []string { return []string{"BITPOS", key(), pick("0", "1"), num(), num(), pick("BYTE", "BIT")} },
		func() []string { return []string{"BITPOS", key(), pick("0", "1"), num()} },
		func() []string { return []string{"HSET", key(), field(), val(), field(), val()} },
		func() []string { return []string{"HSETNX", key(), field(), val()} },
		func() []string { return []string{"HGET", key(), field()} },
		func() []string { return []string{"HMGET", key(), field(), field()} },
		func() []string { return []string{"HGETALL", key()} },
		func() []string { return []string{"HDEL", key(), field(), field()} },
		func() []string { return []string{"HEXISTS", key(), field()} },
		func() []string { return []string{"HLEN", key()} },
		func() []string { return []string{pick("HKEYS", "HVALS"), key()} },
		func() []string { return []string{"HSTRLEN", key(), field()} },
		func() []string { return []string{"HINCRBY", key(), field(), num()} },
		func() []string { return []string{"HINCRBYFLOAT", key(), field(), pick("0.1", "-2.5", "1e3", "x")} },
		func() []string { return []string{"HSCAN", key(), "0"} },
		func() []string { return []string{"TYPE", key()} },
		func() []string { return []string{"EXISTS", key()} },
	}
	n := 4000
	if testing.Short() {
		n = 500
	}
	for i := range n {
		args := gens[r.IntN(len(gens))]()
		if ours, peer := p.do(args...); ours != peer {
			t.Fatalf("step %d %q: tiercache %q, redis-server %q (seed %d)", i, args, ours, peer, seed)
		}
	}
}

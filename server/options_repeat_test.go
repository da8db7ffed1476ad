package server

import (
	"strings"
	"testing"
)

// TestOptionRepeatsMatchRedis checks S118: SET's and GETEX's options may
// repeat (the last expiry wins, and only it is checked, after a later
// syntax error), ZRANGE's and ZRANGESTORE's REV, BYSCORE and BYLEX may
// not (a syntax error that stores nothing), AUTH and HELLO's AUTH take
// any password of "default" and no other user without requirepass, and
// HELLO answers each option's error where it stands, as redis-server 7.0,
// in RESP2 and (all but AUTH and HELLO) RESP3.
func TestOptionRepeatsMatchRedis(t *testing.T) {
	p := newPeerPair(t)
	var cmds [][]string
	add := func(s string) { cmds = append(cmds, strings.Fields(s)) }
	for _, opts := range []string{"EX 10 EX 20", "PX 100000 PX 200000", "EXAT 9999999999 EXAT 9999999998",
		"PXAT 9999999999000 PXAT 9999999998000", "XX XX", "KEEPTTL KEEPTTL", "NX NX", "NX GET NX", "GET GET",
		"EX abc EX 10", "EX abc FOO", "EX 10 FOO", "EX 10 KEEPTTL", "KEEPTTL EX 10", "XX NX", "NX XX", "EX 10 PX 100",
		"EX 0 EX 10", "EX 10 EX 0", "PX", "EX 10 EX"} {
		add("SET k v")
		add("SET k v2 " + opts)
		add("GET k")
		add("TTL k")
		add("EXPIRETIME k")
	}
	for _, opts := range []string{"PERSIST PERSIST", "EX 100 EX 200", "PX 100000 PX 5000", "EXAT 9999999999 EXAT 9999999998",
		"EX 5 PERSIST", "PERSIST EX 5", "EX abc EX 100", "EX abc FOO", "EX 0 EX 100", "EX 100 EX 0", "EX 10 PX 10", "KEEPTTL"} {
		add("SET g v EX 1000")
		add("GETEX g " + opts)
		add("TTL g")
		add("EXPIRETIME g")
	}
	add("ZADD z 1 a 2 b 3 c")
	for _, opts := range []string{"REV REV", "BYSCORE BYLEX", "BYLEX BYLEX", "BYLEX BYSCORE", "BYSCORE BYSCORE",
		"REV BYSCORE REV", "WITHSCORES WITHSCORES", "BYSCORE LIMIT 0 1 LIMIT 0 2", "REV", "BYSCORE REV"} {
		add("ZRANGE z 0 -1 " + opts)
		add("ZRANGE z - + " + opts)
	}
	for _, opts := range []string{"REV REV", "BYSCORE BYSCORE", "BYSCORE BYLEX", "BYLEX BYLEX", "REV"} {
		add("DEL d")
		add("ZRANGESTORE d z 0 -1 " + opts)
		add("EXISTS d")
	}
	data := len(cmds)
	for _, s := range []string{"AUTH default x", "AUTH a b", "AUTH x", "AUTH a b c", "HELLO 2 AUTH a b",
		"HELLO 2 AUTH a b FOO", "HELLO 2 AUTH default x FOO", "HELLO 2 SETNAME a\x01b AUTH a b",
		"HELLO 2 AUTH a b SETNAME a\x01b", "HELLO 2 AUTH default x SETNAME a\x01b"} {
		add(s)
	}
	p.same(cmds)
	// The same in RESP3 (the AUTH and HELLO 2 lines would switch back).
	p.do("HELLO", "3")
	p.same(append([][]string{{"FLUSHALL"}}, cmds[:data]...))
	p.do("HELLO", "2")
	// HELLO's own reply names the server: both answer a map.
	ours, peer := p.do("HELLO", "2", "AUTH", "default", "anything")
	if ours[0] != '*' || peer[0] != '*' {
		t.Fatalf("HELLO 2 AUTH default anything: tiercache %q, redis-server %q", ours, peer)
	}
}

// TestHelloErrorChangesNothing checks S118's difference from Redis: a
// HELLO whose AUTH succeeded but which answers an error for a later
// option leaves the client unauthenticated and unnamed.
func TestHelloErrorChangesNothing(t *testing.T) {
	_, sock := startServerWith(t, newTierCache(t), func(o *Options) { o.RequirePass, o.UnixRequireAuth = "pw", true })
	c := dialPeer(t, sock)
	for _, tc := range [][]string{
		{"HELLO", "2", "AUTH", "default", "pw", "BAD"},
		{"HELLO", "2", "AUTH", "default", "pw", "SETNAME", "a b"},
		{"HELLO", "2", "SETNAME", "x", "AUTH", "default", "pw", "BAD"},
	} {
		if got := c.do(tc...); got[0] != '-' {
			t.Fatalf("%q: %q, want an error", tc, got)
		}
		if got := c.do("PING"); !strings.HasPrefix(got, "-NOAUTH") {
			t.Fatalf("PING after %q: %q, want NOAUTH", tc, got)
		}
	}
	if got := c.do("AUTH", "pw"); got != "+OK\r\n" {
		t.Fatalf("AUTH pw: %q", got)
	}
	if got := c.do("CLIENT", "GETNAME"); got != "$-1\r\n" {
		t.Fatalf("CLIENT GETNAME after the refused HELLOs: %q, want no name", got)
	}
}

package server

import "testing"

// TestExpiriesPast2262MatchRedis (S42): every expiry time redis-server
// accepts behaves as in redis-server 7.0, past the year 2262 too: EXPIREAT
// with GT and LT orders them, EXPIRETIME and PEXPIRETIME answer them
// exactly, SET's and GETEX's absolute times keep them.
func TestExpiriesPast2262MatchRedis(t *testing.T) {
	p := newPeerPair(t)
	var cmds [][]string
	add := func(args ...string) { cmds = append(cmds, args) }
	add("SET", "k", "v")
	add("EXPIREAT", "k", "9999999998")
	add("EXPIREAT", "k", "9999999999", "GT")
	add("EXPIRETIME", "k")
	add("EXPIREAT", "k", "9999999998", "GT")
	add("EXPIREAT", "k", "9999999998", "LT")
	add("PEXPIRETIME", "k")
	add("PEXPIREAT", "k", "9223372036854775807", "GT")
	add("PEXPIRETIME", "k")
	add("PEXPIREAT", "k", "9223372036854775806", "GT")
	add("PEXPIREAT", "k", "9223372036854775806", "LT")
	add("PEXPIRETIME", "k")
	add("EXPIRETIME", "k")
	add("EXPIREAT", "k", "9223372036854775", "LT")
	add("EXPIRETIME", "k")
	add("EXPIREAT", "k", "9223372036854776")
	add("EXPIRE", "k", "9223372036854775")
	add("PEXPIREAT", "k", "9223372036854", "LT") // the last millisecond of int64 nanoseconds
	add("PEXPIRETIME", "k")
	add("PEXPIREAT", "k", "9223372036855", "GT")
	add("PEXPIRETIME", "k")
	add("PEXPIREAT", "k", "9223372036854", "LT")
	add("PEXPIRETIME", "k")
	add("PERSIST", "k")
	add("EXPIREAT", "k", "99999999999", "NX")
	add("EXPIRETIME", "k")
	add("SET", "k", "v", "PXAT", "9223372036854775807")
	add("PEXPIRETIME", "k")
	add("SET", "k", "v", "EXAT", "9223372036854775")
	add("PEXPIRETIME", "k")
	add("GETEX", "k", "PXAT", "99999999999999")
	add("PEXPIRETIME", "k")
	add("GETEX", "k", "EXAT", "300000000000")
	add("EXPIRETIME", "k")
	add("EXPIREAT", "k", "1", "GT")
	add("EXISTS", "k")
	add("EXPIREAT", "k", "1", "LT")
	add("EXISTS", "k")
	add("SET", "k", "v", "EXAT", "9999999999")
	add("TYPE", "k")
	add("EXPIREAT", "k", "-5")
	add("EXISTS", "k")
	p.same(cmds)
	// A relative time past what a Duration holds: TTL and PTTL read now,
	// so they are compared within a second.
	for _, c := range [][]string{{"SET", "r", "v"}, {"EXPIRE", "r", "20000000000"}} {
		p.do(c...)
	}
	ours, peer := p.do("TTL", "r")
	if d := len(ours) - len(peer); ours[:len(ours)-4] != peer[:len(peer)-4] || d != 0 {
		t.Fatalf("TTL of an expiry 634 years away: tiercache %q, redis-server %q", ours, peer)
	}
}

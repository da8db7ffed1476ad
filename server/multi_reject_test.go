package server

import "testing"

// TestRejectedExecDiscards (S77): an EXEC refused before it runs (its
// arity, NOAUTH) answers EXECABORT with the refusal, as redis-server 7.0,
// and the connection leaves MULTI: what follows runs, its WATCHes are
// dropped. The busy-script refusal is TestBusyScriptAndKill's.
func TestRejectedExecDiscards(t *testing.T) {
	for _, proto := range []int{2, 3} {
		p := newPeers(t, 2, proto, func(o *Options) { o.RequirePass, o.UnixRequireAuth = "pw", true },
			"--requirepass", "pw")
		for i := range 2 {
			p.ours[i].do("AUTH", "pw")
			p.peer[i].do("AUTH", "pw")
		}
		p.same(0, "SET", "a", "1")
		p.same(0, "MULTI")
		p.same(0, "INCR", "a")
		p.same(0, "EXEC", "x")
		p.same(0, "PING", "asdf") // not QUEUED
		p.same(0, "GET", "a")
		p.same(0, "EXEC", "x") // outside MULTI too
		p.same(0, "EXEC")
		// The refused EXEC dropped the WATCH: a write by another client
		// does not abort the next transaction.
		p.same(0, "WATCH", "a")
		p.same(0, "MULTI")
		p.same(0, "EXEC", "x")
		p.same(1, "SET", "a", "2")
		p.same(0, "MULTI")
		p.same(0, "INCR", "a")
		p.same(0, "EXEC")
		// Before AUTH: EXEC is refused with NOAUTH inside EXECABORT.
		for _, side := range [][]*rawPeer{p.ours, p.peer} {
			side[1].do("RESET")
		}
		p.same(1, "EXEC")
		p.same(1, "MULTI")
	}
}

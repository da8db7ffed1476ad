package server

import (
	"slices"
	"strconv"
	"testing"
	"time"
)

// TestServedWaiterInvalidationAfterReply checks S90: a tracking client
// blocked in BLMOVE, BRPOPLPUSH or BZPOPMIN and served by another
// client's write gets its reply first and then the invalidations that
// serving it caused (the destination it had read; in BCAST mode every
// key the write and the serve changed), none in NOLOOP mode for its own
// serve's keys, as redis-server 7.0 (serveClientsBlockedOnListKey makes
// the receiver the current client, whose invalidations wait for its
// reply: trackingHandlePendingKeyInvalidations). Byte for byte in RESP3,
// and in RESP2 with REDIRECT to a __redis__:invalidate subscriber; each
// case several times, as the order used to depend on which goroutine ran
// first.
func TestServedWaiterInvalidationAfterReply(t *testing.T) {
	const rounds = 15
	type served struct {
		name  string
		setup [][]string // on connection 1, before the receiver reads
		read  []string   // the receiver's read that tracks what it will be served into
		block []string
		push  []string // connection 1's write that serves it
	}
	cases := []served{
		{"BLMOVE", [][]string{{"RPUSH", "list2", "a"}}, []string{"LRANGE", "list2", "0", "-1"},
			[]string{"BLMOVE", "list1", "list2", "LEFT", "LEFT", "0"}, []string{"RPUSH", "list1", "foo"}},
		{"BRPOPLPUSH", [][]string{{"RPUSH", "list2", "a"}}, []string{"LLEN", "list2"},
			[]string{"BRPOPLPUSH", "list1", "list2", "0"}, []string{"LPUSH", "list1", "x", "y"}},
		{"BLMOVE-new-dst", nil, []string{"EXISTS", "list2"},
			[]string{"BLMOVE", "list1", "list2", "RIGHT", "RIGHT", "0"}, []string{"RPUSH", "list1", "foo"}},
		{"BLMOVE-both-tracked", [][]string{{"RPUSH", "list2", "a"}}, []string{"EXISTS", "list1", "list2"},
			[]string{"BLMOVE", "list1", "list2", "LEFT", "RIGHT", "0"}, []string{"RPUSH", "list1", "foo"}},
		{"BZPOPMIN", nil, []string{"ZCARD", "z"},
			[]string{"BZPOPMIN", "z", "0"}, []string{"ZADD", "z", "1", "m"}},
		{"BLMOVE-by-EVAL", [][]string{{"RPUSH", "list2", "a"}}, []string{"LRANGE", "list2", "0", "-1"},
			[]string{"BLMOVE", "list1", "list2", "LEFT", "LEFT", "0"}, []string{"EVAL", "return redis.call('rpush', KEYS[1], 'x', 'y')", "1", "list1"}},
	}
	modes := [][]string{
		{"CLIENT", "TRACKING", "ON"},
		{"CLIENT", "TRACKING", "ON", "NOLOOP"},
		{"CLIENT", "TRACKING", "ON", "BCAST"},
	}
	t.Run("RESP3", func(t *testing.T) {
		p := newPeers(t, 2, 3, nil)
		for mi, mode := range modes {
			for _, c := range cases {
				for range rounds {
					p.same(0, "CLIENT", "TRACKING", "OFF")
					p.same(1, "FLUSHALL")
					for _, s := range c.setup {
						p.same(1, s...)
					}
					p.same(0, mode...)
					p.same(0, c.read...)
					p.served(c.block, c.push, c.name+" mode "+strconv.Itoa(mi))
				}
			}
		}
	})
	// A chain: the first client's move serves the second, blocked on its
	// destination; each tracks what the other's serve changes.
	t.Run("RESP3-chain", func(t *testing.T) {
		p := newPeers(t, 3, 3, nil)
		for range rounds {
			p.same(0, "CLIENT", "TRACKING", "OFF")
			p.same(2, "CLIENT", "TRACKING", "OFF")
			p.same(1, "FLUSHALL")
			p.same(0, "CLIENT", "TRACKING", "ON")
			p.same(2, "CLIENT", "TRACKING", "ON")
			p.same(0, "EXISTS", "l3")
			p.same(2, "EXISTS", "l2")
			for _, side := range [][]*rawPeer{p.ours, p.peer} {
				side[0].send("BLMOVE", "l1", "l2", "LEFT", "LEFT", "0")
				side[2].send("BLMOVE", "l2", "l3", "LEFT", "LEFT", "0")
			}
			p.waitBlocked(1, 2)
			p.same(1, "RPUSH", "l1", "foo")
			p.fence(0, "chain: the first")
			p.fence(2, "chain: the second")
		}
	})
	t.Run("RESP2-REDIRECT", func(t *testing.T) {
		p := newPeers(t, 3, 2, nil)
		p.trackRedirected()
		for _, c := range cases[:2] {
			for range rounds {
				p.same(1, "FLUSHALL")
				p.sameRead(2, 10*time.Second, "FLUSHALL's invalidation")
				for _, s := range c.setup {
					p.same(1, s...)
				}
				p.same(0, c.read...)
				p.served(c.block, c.push, c.name)
				p.sameRead(2, 10*time.Second, c.name+": the redirected invalidation")
			}
		}
	})
}

// served has connection 0 send block and connection 1 serve it with
// push, then reads what connection 0 gets up to the reply of a PING sent
// after it (in RESP2 and RESP3 alike "+PONG"), comparing each.
func (p *peers) served(block, push []string, what string) {
	p.t.Helper()
	p.ours[0].send(block...)
	p.peer[0].send(block...)
	p.waitBlocked(1, 1)
	p.same(1, push...)
	p.fence(0, what)
}

// fence reads what connection i gets up to the reply of a PING sent now
// (in RESP2 and RESP3 alike "+PONG"), on both servers, and fails unless
// the two are the same.
func (p *peers) fence(i int, what string) {
	p.t.Helper()
	p.ours[i].send("PING")
	p.peer[i].send("PING")
	var ours, peer []string
	for a := ""; a != "+PONG\r\n"; {
		a = p.ours[i].read(10 * time.Second)
		ours = append(ours, a)
		if a == "" {
			break
		}
	}
	for b := ""; b != "+PONG\r\n"; {
		b = p.peer[i].read(10 * time.Second)
		peer = append(peer, b)
		if b == "" {
			break
		}
	}
	if !slices.Equal(ours, peer) {
		p.t.Fatalf("%s: up to PING's reply\n tiercache    %q\n redis-server %q", what, ours, peer)
	}
}

// TestScriptPushServesBlocked checks S99: a push by a script's
// redis.call serves the clients blocked on the list once the script
// ended, as redis-server 7.0 serves them after the script (also when
// EXEC runs the script), byte for byte in RESP2 and RESP3, and the list
// keeps what the serves left.
func TestScriptPushServesBlocked(t *testing.T) {
	eachProto(t, 3, func(t *testing.T, p *peers, proto int) {
		push := []string{"EVAL", "redis.call('rpush', KEYS[1], 'a'); return redis.call('lpush', KEYS[1], 'b')", "1", "q"}
		for range 5 {
			p.same(1, "DEL", "q", "d")
			p.served([]string{"BLPOP", "q", "0"}, push, "BLPOP served by EVAL")
			p.same(1, "LRANGE", "q", "0", "-1")
			p.same(1, "DEL", "q")
			p.served([]string{"BLMOVE", "q", "d", "RIGHT", "LEFT", "0"}, push, "BLMOVE served by EVAL")
			p.same(1, "LRANGE", "q", "0", "-1")
			p.same(1, "LRANGE", "d", "0", "-1")
			p.same(1, "DEL", "q")
			p.same(1, "MULTI")
			p.same(1, push...)
			p.ours[0].send("BRPOP", "q", "0")
			p.peer[0].send("BRPOP", "q", "0")
			p.waitBlocked(2, 1) // connection 1 is in MULTI
			p.same(1, "EXEC")
			p.fence(0, "BRPOP served by EVAL in EXEC")
			p.same(1, "LRANGE", "q", "0", "-1")
		}
	})
}

package server

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// waitBlocked waits until n clients are blocked on s.
func waitBlocked(t testing.TB, s *Server, n int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for s.blk.waiting.Load() != n {
		if time.Now().After(deadline) {
			t.Fatalf("blocked clients: %d, want %d", s.blk.waiting.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestBlockingFIFO checks S22: clients blocked on a key are served in the
// order they blocked, one element each, by a push from another connection
// (a push of several elements serves several), with [key, element]; INFO
// counts them in blocked_clients.
func TestBlockingFIFO(t *testing.T) {
	s, path := startServerWith(t, newTierCache(t), nil)
	var ws []*exactConn
	for i := 0; i < 4; i++ {
		w := dialExact(t, path)
		w.send("BLPOP", "nokey", "q", "0")
		waitBlocked(t, s, int64(i+1))
		ws = append(ws, w)
	}
	p := dialRaw(t, path)
	p.cmd("INFO", "clients")
	if info := p.reply(); !strings.Contains(info, "blocked_clients:4") {
		t.Errorf("INFO clients during the wait: %q", info)
	}
	p.expect([]step{{[]string{"RPUSH", "q", "a", "b", "c"}, ":3"}})
	for i, want := range []string{"a", "b", "c"} {
		if got := ws[i].reply(); got != "*2\r\n$1\r\nq\r\n$1\r\n"+want+"\r\n" {
			t.Errorf("waiter %d: %q, want q %s", i, got, want)
		}
	}
	waitBlocked(t, s, 1)
	p.expect([]step{
		{[]string{"EXISTS", "q"}, ":0"},
		{[]string{"LPUSH", "nokey", "z"}, ":1"},
	})
	if got := ws[3].reply(); got != "*2\r\n$5\r\nnokey\r\n$1\r\nz\r\n" {
		t.Errorf("last waiter, served from its first key: %q", got)
	}
	p.cmd("INFO", "clients")
	if info := p.reply(); !strings.Contains(info, "blocked_clients:0") {
		t.Errorf("INFO clients after: %q", info)
	}
}

// TestBlockingTimeout checks S22: a blocking command whose timeout passes
// answers a nil array (RESP2 *-1, RESP3 _; BLMOVE too, as Redis 7.0), and
// inside MULTI nothing blocks: nil at once (a nil bulk for BLMOVE).
func TestBlockingTimeout(t *testing.T) {
	s, path := startServerWith(t, newTierCache(t), nil)
	c := dialExact(t, path)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"BLPOP", "q", "0.05"}, "*-1\r\n"},
		{[]string{"BRPOP", "q", "r", "0.01"}, "*-1\r\n"},
		{[]string{"BLMOVE", "q", "d", "LEFT", "RIGHT", "0.01"}, "*-1\r\n"},
		{[]string{"BRPOPLPUSH", "q", "d", "0.01"}, "*-1\r\n"},
		{[]string{"BLPOP", "q", "-1"}, "-ERR timeout is negative\r\n"},
		{[]string{"BLPOP", "q", "soon"}, "-ERR timeout is not a float or out of range\r\n"},
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"BLPOP", "q", "0"}, "+QUEUED\r\n"},
		{[]string{"BLMOVE", "q", "d", "LEFT", "RIGHT", "0"}, "+QUEUED\r\n"},
		{[]string{"EXEC"}, "*2\r\n*-1\r\n$-1\r\n"},
		{[]string{"HELLO", "3"}, ""},
		{[]string{"BLPOP", "q", "0.01"}, "_\r\n"},
	} {
		if got := c.do(tc.args...); tc.want != "" && got != tc.want {
			t.Errorf("%q: %q, want %q", tc.args, got, tc.want)
		}
	}
	waitBlocked(t, s, 0)
}

// TestBlockingMove checks S22 for BLMOVE: the element served lands on the
// destination, which serves the clients blocked on it in turn; a
// destination of another type answers WRONGTYPE to the waiter and leaves
// the element where it was.
func TestBlockingMove(t *testing.T) {
	s, path := startServerWith(t, newTierCache(t), nil)
	w1, w2 := dialExact(t, path), dialExact(t, path)
	w1.send("BLMOVE", "src", "dst", "RIGHT", "LEFT", "0")
	waitBlocked(t, s, 1)
	w2.send("BLPOP", "dst", "0")
	waitBlocked(t, s, 2)
	p := dialRaw(t, path)
	p.expect([]step{{[]string{"RPUSH", "src", "x", "y"}, ":2"}})
	if got := w1.reply(); got != "$1\r\ny\r\n" {
		t.Errorf("BLMOVE: %q", got)
	}
	if got := w2.reply(); got != "*2\r\n$3\r\ndst\r\n$1\r\ny\r\n" {
		t.Errorf("BLPOP on the destination: %q", got)
	}
	p.expect([]step{
		{[]string{"LRANGE", "src", "0", "-1"}, "*[$x]"},
		{[]string{"LRANGE", "dst", "0", "-1"}, "*[]"},
		{[]string{"SET", "str", "v"}, "+OK"},
		{[]string{"DEL", "src"}, ":1"},
	})
	w1.send("BLMOVE", "src", "str", "LEFT", "LEFT", "0")
	waitBlocked(t, s, 1)
	p.expect([]step{{[]string{"LPUSH", "src", "e"}, ":1"}})
	if got := w1.reply(); got != "-"+errWrongType+"\r\n" {
		t.Errorf("BLMOVE onto a string: %q", got)
	}
	p.expect([]step{
		{[]string{"LRANGE", "src", "0", "-1"}, "*[$e]"},
		{[]string{"BLPOP", "str", "0"}, "-" + errWrongType},
		{[]string{"BLMOVE", "str", "x", "LEFT", "LEFT", "0"}, "-" + errWrongType},
	})
	waitBlocked(t, s, 0)
}

// TestBlockingClientCloses checks S22: a client that hangs up while
// blocked is unblocked and takes nothing: a later push stays in the list.
// Server.Close ends the clients still blocked.
func TestBlockingClientCloses(t *testing.T) {
	s, path := startServerWith(t, newTierCache(t), nil)
	w := dialExact(t, path)
	w.send("BLPOP", "q", "0")
	waitBlocked(t, s, 1)
	w.nc.Close()
	waitBlocked(t, s, 0)
	p := dialRaw(t, path)
	p.expect([]step{
		{[]string{"RPUSH", "q", "a"}, ":1"},
		{[]string{"LLEN", "q"}, ":1"},
		{[]string{"DEL", "q"}, ":1"},
	})
	w2 := dialExact(t, path)
	w2.send("BRPOP", "q", "0")
	waitBlocked(t, s, 1)
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if r, err := readExact(w2.br); err == nil {
		t.Errorf("a blocked client got %q at shutdown, want the connection closed", r)
	}
	if n := s.blk.waiting.Load(); n != 0 {
		t.Errorf("%d clients still blocked after Close", n)
	}
}

// TestBlockingExactlyOnce checks S22 under concurrency: many clients
// blocked on two keys and several connections pushing at once; each
// element pushed goes to exactly one of them.
func TestBlockingExactlyOnce(t *testing.T) {
	s, path := startServerWith(t, newTierCache(t), nil)
	const waiters, pushers = 24, 4
	got := make(chan string, waiters)
	var wg sync.WaitGroup
	for i := 0; i < waiters; i++ {
		w := dialRaw(t, path)
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.cmd("BLPOP", "k1", "k2", "0")
			got <- w.reply()
		}()
	}
	waitBlocked(t, s, waiters)
	for p := 0; p < pushers; p++ {
		c := dialRaw(t, path)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < waiters/pushers; j++ {
				c.cmd([]string{"LPUSH", "RPUSH"}[j%2], []string{"k1", "k2"}[p%2], fmt.Sprintf("e%d-%d", p, j))
				c.reply()
			}
		}()
	}
	wg.Wait()
	close(got)
	seen := map[string]bool{}
	for r := range got {
		if seen[r] {
			t.Errorf("element served twice: %s", r)
		}
		seen[r] = true
	}
	if len(seen) != waiters {
		t.Errorf("%d distinct elements served, want %d", len(seen), waiters)
	}
	p := dialRaw(t, path)
	p.expect([]step{{[]string{"EXISTS", "k1", "k2"}, ":0"}})
}

// TestBlockedClientHoldsNoLock checks S22 beside S15: while a client is
// blocked, another connection's MULTI/EXEC (which takes the transaction
// lock exclusively) runs, and its push serves the blocked client.
func TestBlockedClientHoldsNoLock(t *testing.T) {
	s, path := startServerWith(t, newTierCache(t), nil)
	w := dialExact(t, path)
	w.send("BLPOP", "q", "0")
	waitBlocked(t, s, 1)
	p := dialRaw(t, path)
	p.expect([]step{
		{[]string{"MULTI"}, "+OK"},
		{[]string{"RPUSH", "q", "a", "b"}, "+QUEUED"},
		{[]string{"LLEN", "q"}, "+QUEUED"},
		{[]string{"EXEC"}, "*[:2 :2]"},
	})
	if got := w.reply(); got != "*2\r\n$1\r\nq\r\n$1\r\na\r\n" {
		t.Errorf("blocked client after the EXEC: %q", got)
	}
	p.expect([]step{{[]string{"LRANGE", "q", "0", "-1"}, "*[$b]"}})
}

// TestRenameAndCopyWakeBlockedClients checks S22: a RENAME or COPY that
// makes a key a list or a sorted set serves the clients blocked on it, as
// a push does (Redis's dbAdd signals the key as ready).
func TestRenameAndCopyWakeBlockedClients(t *testing.T) {
	s, path := startServerWith(t, newTierCache(t), nil)
	p := dialRaw(t, path)
	for i, move := range [][]string{{"RENAME", "src", "dst"}, {"COPY", "src", "dst"}, {"RENAMENX", "src", "dst"}} {
		w := dialExact(t, path)
		w.send("BLPOP", "dst", "5")
		waitBlocked(t, s, 1)
		p.expect([]step{{[]string{"RPUSH", "src", fmt.Sprint("x", i)}, ":1"}})
		p.cmd(move...)
		p.reply()
		if got := w.reply(); got != fmt.Sprintf("*2\r\n$3\r\ndst\r\n$2\r\nx%d\r\n", i) {
			t.Errorf("%v: the blocked BLPOP got %q", move, got)
		}
		p.expect([]step{{[]string{"DEL", "src", "dst"}, fmt.Sprintf(":%d", map[bool]int{true: 1, false: 0}[move[0] == "COPY"])}})
	}
	// A sorted set made so serves BZPOPMIN.
	for i, move := range [][]string{{"RENAME", "zsrc", "zdst"}, {"COPY", "zsrc", "zdst"}, {"RENAMENX", "zsrc", "zdst"}} {
		w := dialExact(t, path)
		w.send("BZPOPMIN", "zdst", "5")
		waitBlocked(t, s, 1)
		p.expect([]step{{[]string{"ZADD", "zsrc", "1", fmt.Sprint("m", i)}, ":1"}})
		p.cmd(move...)
		p.reply()
		if got := w.reply(); got != fmt.Sprintf("*3\r\n$4\r\nzdst\r\n$2\r\nm%d\r\n$1\r\n1\r\n", i) {
			t.Errorf("%v: the blocked BZPOPMIN got %q", move, got)
		}
		p.expect([]step{{[]string{"DEL", "zsrc", "zdst"}, fmt.Sprintf(":%d", map[bool]int{true: 1, false: 0}[move[0] == "COPY"])}})
	}
}

package server

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestKeyspaceCommands(t *testing.T) {
	clock := newTestClock()
	_, path := startServerWith(t, newClockedCache(t, clock), nil)
	c := dialRaw(t, path)
	at := clock.time().Add(time.Hour).Unix()
	sat := fmt.Sprint(at)
	c.expect([]step{
		{[]string{"SET", "a", "1"}, "+OK"},
		{[]string{"RENAME", "nokey", "b"}, "-ERR no such key"},
		{[]string{"RENAMENX", "nokey", "b"}, "-ERR no such key"},
		{[]string{"RENAME", "a", "a"}, "+OK"},
		{[]string{"RENAMENX", "a", "a"}, ":0"},
		{[]string{"EXPIREAT", "a", sat}, ":1"},
		{[]string{"EXPIRETIME", "a"}, ":" + sat},
		{[]string{"PEXPIRETIME", "a"}, ":" + sat + "000"},
		{[]string{"RENAME", "a", "b"}, "+OK"},
		{[]string{"EXISTS", "a"}, ":0"},
		{[]string{"EXPIRETIME", "b"}, ":" + sat},
		{[]string{"SET", "c", "3"}, "+OK"},
		{[]string{"RENAMENX", "b", "c"}, ":0"},
		{[]string{"RENAMENX", "b", "d"}, ":1"},
		{[]string{"COPY", "d", "d"}, "-ERR source and destination objects are the same"},
		{[]string{"COPY", "d", "c"}, ":0"},
		{[]string{"COPY", "d", "c", "REPLACE"}, ":1"},
		{[]string{"GET", "c"}, "$1"},
		{[]string{"EXPIRETIME", "c"}, ":" + sat},
		{[]string{"COPY", "d", "e", "DB", "0"}, ":1"},
		{[]string{"COPY", "d", "e", "DB", "1"}, "-ERR DB index is out of range"},
		{[]string{"COPY", "d", "e", "DB", "x"}, "-ERR value is not an integer or out of range"},
		{[]string{"COPY", "d", "e", "FOO"}, "-ERR syntax error"},
		{[]string{"COPY", "nokey", "e"}, ":0"},
		{[]string{"EXPIRETIME", "nokey"}, ":-2"},
		{[]string{"PERSIST", "c"}, ":1"},
		{[]string{"EXPIRETIME", "c"}, ":-1"},
		{[]string{"EXPIREAT", "c", sat, "XX"}, ":0"},
		{[]string{"EXPIREAT", "c", sat, "NX"}, ":1"},
		{[]string{"EXPIREAT", "c", fmt.Sprint(at + 10), "LT"}, ":0"},
		{[]string{"EXPIREAT", "c", fmt.Sprint(at + 10), "GT"}, ":1"},
		{[]string{"PEXPIREAT", "c", fmt.Sprint(at*1000 + 5), "LT"}, ":1"},
		{[]string{"PEXPIRETIME", "c"}, fmt.Sprintf(":%d", at*1000+5)},
		{[]string{"EXPIREAT", "c", "100", "NX", "XX"}, "-ERR NX and XX, GT or LT options at the same time are not compatible"},
		{[]string{"EXPIREAT", "c", "100", "GT", "LT"}, "-ERR GT and LT options at the same time are not compatible"},
		{[]string{"EXPIREAT", "c", "100", "FOO"}, "-ERR Unsupported option FOO"},
		{[]string{"EXPIREAT", "c", "100", "GT"}, ":0"},
		{[]string{"EXPIREAT", "c", "100"}, ":1"}, // in the past: deleted
		{[]string{"EXISTS", "c"}, ":0"},
		{[]string{"FLUSHALL"}, "+OK"},
		{[]string{"RANDOMKEY"}, "nil"},
		{[]string{"SET", "only", "x"}, "+OK"},
		{[]string{"RANDOMKEY"}, "$only"},
	})
}

func TestWatch(t *testing.T) {
	clock := newTestClock()
	_, path := startServerWith(t, newClockedCache(t, clock), nil)
	a, b := dialRaw(t, path), dialRaw(t, path)
	a.expect([]step{
		{[]string{"SET", "w", "1"}, "+OK"},
		{[]string{"WATCH", "w", "other"}, "+OK"},
		{[]string{"MULTI"}, "+OK"},
		{[]string{"WATCH", "x"}, "-ERR WATCH inside MULTI is not allowed"},
		{[]string{"SET", "w", "2"}, "+QUEUED"},
	})
	b.expect([]step{{[]string{"SET", "w", "9"}, "+OK"}})
	a.expect([]step{
		{[]string{"EXEC"}, "nil"}, // aborted: w changed
		{[]string{"GET", "w"}, "$9"},
		// An untouched watch lets EXEC run, and EXEC unwatches.
		{[]string{"WATCH", "w"}, "+OK"},
		{[]string{"MULTI"}, "+OK"},
		{[]string{"SET", "w", "2"}, "+QUEUED"},
		{[]string{"EXEC"}, "*[+OK]"},
	})
	b.expect([]step{{[]string{"SET", "w", "3"}, "+OK"}})
	a.expect([]step{
		{[]string{"MULTI"}, "+OK"},
		{[]string{"EXEC"}, "*[]"},
		// UNWATCH and DISCARD forget the keys.
		{[]string{"WATCH", "w"}, "+OK"},
		{[]string{"UNWATCH"}, "+OK"},
	})
	b.expect([]step{{[]string{"SET", "w", "4"}, "+OK"}})
	a.expect([]step{
		{[]string{"MULTI"}, "+OK"},
		{[]string{"EXEC"}, "*[]"},
		{[]string{"WATCH", "w"}, "+OK"},
		{[]string{"MULTI"}, "+OK"},
		{[]string{"DISCARD"}, "+OK"},
	})
	b.expect([]step{{[]string{"SET", "w", "5"}, "+OK"}})
	a.expect([]step{
		{[]string{"MULTI"}, "+OK"},
		{[]string{"EXEC"}, "*[]"},
		// Expiry, EXPIRE, RENAME onto the key and FLUSHALL touch it.
		{[]string{"SET", "e", "1", "PX", "100000"}, "+OK"},
		{[]string{"WATCH", "e"}, "+OK"},
	})
	clock.advance(time.Hour)
	a.expect([]step{
		{[]string{"MULTI"}, "+OK"},
		{[]string{"EXEC"}, "nil"},
	})
	for _, touch := range [][]string{{"EXPIRE", "w", "100"}, {"RENAME", "x", "w"}, {"FLUSHALL"}, {"COPY", "x", "w", "REPLACE"}} {
		a.expect([]step{{[]string{"SET", "w", "1"}, "+OK"}, {[]string{"SET", "x", "1"}, "+OK"}, {[]string{"WATCH", "w"}, "+OK"}})
		b.cmd(touch...)
		b.reply()
		a.expect([]step{{[]string{"MULTI"}, "+OK"}, {[]string{"EXEC"}, "nil"}})
	}
	// A write command that changed nothing does not touch the key, as in
	// Redis; one that did, even if undone since, does.
	for _, c := range []struct {
		cmds  [][]string
		abort bool
	}{
		{[][]string{{"SETNX", "w", "2"}}, false},
		{[][]string{{"SET", "w", "2", "NX"}}, false},
		{[][]string{{"DEL", "absent"}}, false},
		{[][]string{{"EXPIRE", "absent", "10"}}, false},
		{[][]string{{"EXPIRE", "w", "10", "XX"}}, false},
		{[][]string{{"GETEX", "w"}}, false},
		{[][]string{{"RENAMENX", "x", "w"}}, false},
		{[][]string{{"RENAME", "absent", "w"}}, false},
		{[][]string{{"SET", "w", "1", "EX", "0"}}, false}, // an error changed nothing
		{[][]string{{"SET", "absent", "1"}, {"DEL", "absent"}}, true},
		{[][]string{{"GETDEL", "w"}}, true},
	} {
		a.expect([]step{{[]string{"SET", "w", "1"}, "+OK"}, {[]string{"SET", "x", "1"}, "+OK"},
			{[]string{"WATCH", "w", "absent"}, "+OK"}})
		for _, cmd := range c.cmds {
			b.cmd(cmd...)
			b.reply()
		}
		want := "*[]"
		if c.abort {
			want = "nil"
		}
		a.expect([]step{{[]string{"MULTI"}, "+OK"}, {[]string{"EXEC"}, want}})
	}
	// A key that did not exist at WATCH and still does not: EXEC runs;
	// FLUSHALL does not touch it.
	b.expect([]step{{[]string{"SET", "keep", "1"}, "+OK"}})
	a.expect([]step{{[]string{"WATCH", "absent"}, "+OK"}})
	b.expect([]step{{[]string{"FLUSHALL"}, "+OK"}})
	a.expect([]step{{[]string{"MULTI"}, "+OK"}, {[]string{"EXEC"}, "*[]"}})
}

// TestWatchRacingTransactions: connections increment one counter with
// WATCH, GET, MULTI, SET, EXEC (optimistic locking) while others write
// unrelated keys; the counter ends at exactly the number of EXECs that
// ran (a lost update would leave it lower), and aborted ones changed
// nothing.
func TestWatchRacingTransactions(t *testing.T) {
	_, path := startServer(t, nil)
	const conns = 6
	rounds := 300
	if testing.Short() {
		rounds = 60
	}
	var wg sync.WaitGroup
	wins := make([]int, conns)
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c := dialRaw(t, path)
			for r := 0; r < rounds; r++ {
				c.cmd("WATCH", "ctr")
				c.reply()
				c.cmd("GET", "ctr")
				n := 0
				if v := c.reply(); v != "nil" {
					fmt.Sscan(strings.TrimPrefix(v, "$"), &n)
				}
				c.cmd("MULTI")
				c.reply()
				c.cmd("SET", "ctr", fmt.Sprint(n+1))
				c.reply()
				c.cmd("SET", fmt.Sprint("mine", i), fmt.Sprint(r))
				c.reply()
				c.cmd("EXEC")
				switch got := c.reply(); got {
				case "nil":
				case "*[+OK +OK]":
					wins[i]++
				default:
					t.Errorf("EXEC: %q", got)
					return
				}
			}
		}(i)
	}
	wg.Wait()
	total := 0
	for _, w := range wins {
		total += w
	}
	c := dialRaw(t, path)
	c.cmd("GET", "ctr")
	if got, want := c.reply(), fmt.Sprintf("$%d", total); got != want {
		t.Fatalf("counter %s after %d successful transactions (per connection %v)", got, total, wins)
	}
	if total < rounds {
		t.Fatalf("only %d of %d transactions ran", total, conns*rounds)
	}
}

// TestExecIsolated: transactions write the same value to two keys while
// other connections read both with MGET and write them one by one; a
// reader never sees the two keys differ right after an EXEC wrote them
// both, because no command runs inside another connection's EXEC (S15).
func TestExecIsolated(t *testing.T) {
	_, path := startServer(t, nil)
	rounds := 400
	if testing.Short() {
		rounds = 100
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c := dialRaw(t, path)
			for r := 0; r < rounds; r++ {
				c.cmd("MULTI")
				c.reply()
				v := fmt.Sprintf("%d-%d", i, r)
				for j := 0; j < 40; j++ { // x first, y last, padding between
					k := fmt.Sprint("pad", j)
					switch j {
					case 0:
						k = "x"
					case 39:
						k = "y"
					}
					c.cmd("SET", k, v)
					c.reply()
				}
				c.cmd("EXEC")
				c.reply()
			}
		}(i)
	}
	bad := make(chan string, 1)
	var rwg sync.WaitGroup
	for i := 0; i < 2; i++ {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			c := dialRaw(t, path)
			for {
				select {
				case <-stop:
					return
				default:
				}
				c.cmd("MGET", "x", "y")
				if got := c.reply(); strings.Count(got, "$") == 2 {
					parts := strings.Fields(strings.Trim(got, "*[]"))
					if parts[0] != parts[1] {
						select {
						case bad <- got:
						default:
						}
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	rwg.Wait()
	select {
	case got := <-bad:
		t.Fatalf("a reader saw a half-applied transaction: MGET x y = %s", got)
	default:
	}
}

// TestTTLInMilliseconds checks S42's unit: PTTL is the expiry's
// millisecond less the clock's (Redis's), TTL that rounded to seconds,
// and EXPIRE's GT compares milliseconds, a fraction of a millisecond after
// the SET as in the SET's own millisecond.
func TestTTLInMilliseconds(t *testing.T) {
	clock := newTestClock()
	clock.ns.Store(clock.now()/1e6*1e6 + 200_000) // 0.2 ms into a millisecond
	_, path := startServerWith(t, newClockedCache(t, clock), nil)
	c := dialRaw(t, path)
	c.expect([]step{
		{[]string{"SET", "a", "v", "PX", "1500"}, "+OK"},
		{[]string{"SET", "b", "v", "PX", "2500"}, "+OK"},
		{[]string{"SET", "c", "v", "EX", "100"}, "+OK"},
	})
	clock.advance(300 * time.Microsecond)
	c.expect([]step{
		{[]string{"PTTL", "a"}, ":1500"},
		{[]string{"TTL", "a"}, ":2"},
		{[]string{"TTL", "b"}, ":3"},
		{[]string{"EXPIRE", "c", "100", "GT"}, ":0"},
		{[]string{"PEXPIRE", "c", "99999", "LT"}, ":1"},
	})
	clock.advance(time.Millisecond)
	c.expect([]step{
		{[]string{"PTTL", "a"}, ":1499"},
		{[]string{"EXPIRE", "c", "100", "GT"}, ":1"},
		{[]string{"PTTL", "c"}, ":100000"},
	})
	clock.advance(600 * time.Millisecond)
	c.expect([]step{{[]string{"TTL", "a"}, ":1"}}) // 899 ms left
	// The clock's millisecond, not the time left: 0.9 ms after a SET
	// 0.2 ms into a millisecond, PTTL has lost one.
	clock.ns.Store(clock.now()/1e6*1e6 + 200_000)
	c.expect([]step{{[]string{"SET", "d", "v", "PX", "1500"}, "+OK"}})
	clock.advance(900 * time.Microsecond)
	c.expect([]step{
		{[]string{"PTTL", "d"}, ":1499"},
		{[]string{"PEXPIREAT", "e", "1"}, ":0"},
	})
}

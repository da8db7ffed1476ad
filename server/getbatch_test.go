package server

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// startMapServer is startServer with the cache in the caller's hands.
func startMapServer(t *testing.T, mod func(*Options)) (*Server, *mapCache, string) {
	t.Helper()
	mc := newMapCache()
	s, path := startServerWith(t, mc, mod)
	return s, mc, path
}

// pipeline renders cmds as RESP arrays in one string (sent in one write).
func pipeline(cmds ...[]string) string {
	var b strings.Builder
	for _, args := range cmds {
		fmt.Fprintf(&b, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
	}
	return b.String()
}

// TestColdGetBatch: GETs pipelined behind a GET that read the cold device
// are answered by one MGetPrefix, up to the first other command; replies
// keep the order of the requests, and each GET counts as a command.
func TestColdGetBatch(t *testing.T) {
	var mu sync.Mutex
	observed := 0
	s, mc, path := startMapServer(t, func(o *Options) {
		o.ObserveLatency = func(cmd string) func(time.Duration) {
			return func(d time.Duration) {
				mu.Lock()
				defer mu.Unlock()
				if cmd == "get" {
					observed++
				}
			}
		}
	})
	c := dialRaw(t, path)
	for i := 1; i <= 5; i++ {
		c.cmd("SET", fmt.Sprint("cold:", i), fmt.Sprint("v", i))
		c.reply()
	}
	c.cmd("SET", "hot", "h")
	c.reply()
	before := s.Stats()
	c.send(pipeline(
		[]string{"GET", "cold:1"}, // reads the device: the GETs behind it go together
		[]string{"GET", "cold:2"},
		[]string{"get", "cold:3"},
		[]string{"GET", "nope"},
		[]string{"GET", "hot"},
		[]string{"SET", "x", "y"}, // ends the batch
		[]string{"GET", "hot"},    // memory: no batch
		[]string{"GET", "cold:4"},
		[]string{"gEt", "cold:5"},
		[]string{"GET", "cold:5", "extra"}, // not a one-key GET: ends the batch
		[]string{"GET", "cold:1"},
	))
	want := []string{"$v1", "$v2", "$v3", "nil", "$h", "+OK", "$h", "$v4", "$v5",
		"-ERR wrong number of arguments for 'get' command", "$v1"}
	for i, w := range want {
		if got := c.reply(); got != w {
			t.Fatalf("reply %d = %q, want %q", i, got, w)
		}
	}
	mc.mu.Lock()
	calls := mc.prefixCalls
	mc.mu.Unlock()
	wantCalls := [][]string{{"cold:2", "cold:3", "nope", "hot"}, {"cold:5"}}
	if !slices.EqualFunc(calls, wantCalls, slices.Equal) {
		t.Fatalf("MGetPrefixAny calls %q, want %q", calls, wantCalls)
	}
	after := s.Stats()
	if d := after.CommandsProcessed - before.CommandsProcessed; d != uint64(len(want)) {
		t.Errorf("commands processed grew by %d, want %d", d, len(want))
	}
	if after.ColdGetBatches-before.ColdGetBatches != 2 || after.ColdGetBatched-before.ColdGetBatched != 5 {
		t.Errorf("cold GET batches %d, batched %d; want 2 and 5",
			after.ColdGetBatches-before.ColdGetBatches, after.ColdGetBatched-before.ColdGetBatched)
	}
	if d := after.KeyspaceHits - before.KeyspaceHits; d != 8 {
		t.Errorf("keyspace hits grew by %d, want 8", d)
	}
	if d := after.KeyspaceMisses - before.KeyspaceMisses; d != 1 {
		t.Errorf("keyspace misses grew by %d, want 1", d)
	}
	mu.Lock()
	if observed != 9 {
		t.Errorf("observed %d GET latencies, want 9 (one per GET, batched or not)", observed)
	}
	mu.Unlock()
	c.cmd("INFO", "stats")
	if info := c.reply(); !strings.Contains(info, "cold_get_batches:2") || !strings.Contains(info, "cold_get_batched:5") {
		t.Errorf("INFO stats lacks the batch counters:\n%s", info)
	}
}

// TestColdGetBatchLimits: ColdGetBatch bounds the GETs taken per batch,
// ColdGetBatchBytes the values one MGetPrefixAny holds, and -1 turns batching
// off; the replies are the same every way.
func TestColdGetBatchLimits(t *testing.T) {
	for _, tc := range []struct {
		name      string
		batch     int
		bytes     int
		wantCalls [][]string
	}{
		{"default", 0, 0, [][]string{{"cold:2", "cold:3", "cold:4", "cold:5"}}},
		{"off", -1, 0, nil},
		{"two per batch", 2, 0, [][]string{{"cold:2", "cold:3"}, {"cold:5"}}},       // cold:4 then reads alone and batches cold:5
		{"bytes", 0, 5, [][]string{{"cold:2"}, {"cold:3"}, {"cold:4"}, {"cold:5"}}}, // values of 3 bytes, budget 5: one each
		{"bytes for two", 0, 6, [][]string{{"cold:2", "cold:3"}, {"cold:4", "cold:5"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, mc, path := startMapServer(t, func(o *Options) {
				o.ColdGetBatch, o.ColdGetBatchBytes = tc.batch, tc.bytes
			})
			c := dialRaw(t, path)
			var cmds [][]string
			for i := 1; i <= 5; i++ {
				c.cmd("SET", fmt.Sprint("cold:", i), fmt.Sprint("v", i, "x"))
				c.reply()
				cmds = append(cmds, []string{"GET", fmt.Sprint("cold:", i)})
			}
			c.send(pipeline(cmds...))
			for i := 1; i <= 5; i++ {
				if got, want := c.reply(), fmt.Sprint("$v", i, "x"); got != want {
					t.Fatalf("reply %d = %q, want %q", i, got, want)
				}
			}
			mc.mu.Lock()
			defer mc.mu.Unlock()
			if !slices.EqualFunc(mc.prefixCalls, tc.wantCalls, slices.Equal) {
				t.Fatalf("MGetPrefixAny calls %q, want %q", mc.prefixCalls, tc.wantCalls)
			}
		})
	}
}

// TestColdGetBatchAfterExec: GETs queued in a transaction are never taken
// out of it (the cold ones inside EXEC start no batch), and the GETs after
// EXEC batch as usual.
func TestColdGetBatchAfterExec(t *testing.T) {
	_, mc, path := startMapServer(t, nil)
	c := dialRaw(t, path)
	c.expect([]step{
		{[]string{"SET", "cold:a", "1"}, "+OK"},
		{[]string{"SET", "cold:b", "2"}, "+OK"},
	})
	c.send(pipeline(
		[]string{"MULTI"},
		[]string{"GET", "cold:a"},
		[]string{"GET", "cold:b"},
		[]string{"EXEC"},
		[]string{"GET", "cold:b"},
		[]string{"GET", "cold:a"},
	))
	for i, w := range []string{"+OK", "+QUEUED", "+QUEUED", "*[$1 $2]", "$2", "$1"} {
		if got := c.reply(); got != w {
			t.Fatalf("reply %d = %q, want %q", i, got, w)
		}
	}
	mc.mu.Lock()
	defer mc.mu.Unlock()
	want := [][]string{{"cold:a"}} // behind the first GET after EXEC
	if !slices.EqualFunc(mc.prefixCalls, want, slices.Equal) {
		t.Fatalf("MGetPrefixAny calls %q, want %q", mc.prefixCalls, want)
	}
}

// TestGetRun: a run of pipelined GETs answered through NextGet gives the
// replies, counters and latency observations of GETs answered one by one,
// up to and including a malformed frame, which is still answered with a
// protocol error after the replies before it.
func TestGetRun(t *testing.T) {
	var mu sync.Mutex
	observed := map[string]int{}
	s, _, path := startMapServer(t, func(o *Options) {
		o.ObserveLatency = func(cmd string) func(time.Duration) {
			return func(time.Duration) {
				mu.Lock()
				observed[cmd]++
				mu.Unlock()
			}
		}
	})
	c := dialRaw(t, path)
	c.expect([]step{{[]string{"SET", "a", "1"}, "+OK"}, {[]string{"SET", "b", "22"}, "+OK"}})
	var cmds [][]string
	var want []string
	for i := 0; i < 40; i++ {
		switch i % 4 {
		case 0, 1:
			cmds, want = append(cmds, []string{"GET", "a"}), append(want, "$1")
		case 2:
			cmds, want = append(cmds, []string{"get", "b"}), append(want, "$22")
		case 3:
			cmds, want = append(cmds, []string{"GET", "nope"}), append(want, "nil")
		}
	}
	cmds, want = append(cmds, []string{"PING"}), append(want, "+PONG")
	cmds, want = append(cmds, []string{"GET", "a"}), append(want, "$1")
	before := s.Stats()
	c.send(pipeline(cmds...) + "*2\r\n$3\r\nGET\r\n$x\r\n")
	for i, w := range want {
		if got := c.reply(); got != w {
			t.Fatalf("reply %d = %q, want %q", i, got, w)
		}
	}
	if got := c.reply(); !strings.HasPrefix(got, "-ERR Protocol error") {
		t.Fatalf("malformed GET after the run: %q, want a protocol error", got)
	}
	c.expectClosed()
	after := s.Stats()
	if d := after.CommandsProcessed - before.CommandsProcessed; d != uint64(len(cmds)) {
		t.Errorf("commands processed grew by %d, want %d", d, len(cmds))
	}
	if h, m := after.KeyspaceHits-before.KeyspaceHits, after.KeyspaceMisses-before.KeyspaceMisses; h != 31 || m != 10 {
		t.Errorf("hits %d, misses %d; want 31 and 10", h, m)
	}
	mu.Lock()
	defer mu.Unlock()
	if observed["get"] != 41 || observed["ping"] != 1 {
		t.Errorf("observed %v, want 41 GETs and 1 PING", observed)
	}
}

package server

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/coldstore"
	"github.com/tiercache/tiercache/tier"
	"github.com/tiercache/tiercache/uring"
)

// coldValueMin is the shortest value startColdServer's cache keeps in its
// cold tier alone: hot takes values of up to 4 bytes, there is no warm
// tier, so a longer value is written to the emulated namespace and every
// GET of it reads the device.
const coldValueMin = 5

// startColdServer is startServer over a cache whose hot tier takes values
// of less than coldValueMin bytes and whose cold tier is the emulated
// namespace (openColdCache), in the caller's hands.
func startColdServer(t *testing.T, mod func(*Options)) (*Server, *tier.Cache, string) {
	t.Helper()
	tc := openColdCache(t, func(o *tier.Options, _ *coldstore.Config) { o.HotMaxValue = coldValueMin - 1 })
	s, path := startServerWith(t, tc, mod)
	return s, tc, path
}

// openColdCache opens a tier.Cache with a hot tier and a cold one, the
// emulated namespace on a file of 16 MiB in a temporary directory, after
// edit (if not nil) changed the options and the cold store's config.
func openColdCache(t *testing.T, edit func(*tier.Options, *coldstore.Config)) *tier.Cache {
	t.Helper()
	if r, err := uring.New(uring.Options{Entries: 4}); err != nil {
		skipOrFail(t, "io_uring unavailable, the emulated cold store cannot run: %v", err)
	} else {
		r.Close()
	}
	o := tier.Options{HotBytes: testHotBytes}
	cc := coldstore.Config{DataDir: t.TempDir(), Capacity: 16 << 20, RegionBytes: 256 << 10}
	if edit != nil {
		edit(&o, &cc)
	}
	if o.OpenCold == nil {
		o.OpenCold = func(p backend.Params) (backend.Store, error) { return coldstore.Open(cc, p) }
	}
	tc, err := tier.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tc.Close() })
	return tc
}

// mgetSubmissions counts the cold device submissions of tc's MGets: one
// per MGetPrefixAny with a cold key among its keys.
func mgetSubmissions(tc *tier.Cache) uint64 { return tc.Stats().MGetSubmissions }

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

// TestColdGetBatch (S11): GETs pipelined behind a GET that read the cold
// device are answered by one MGetPrefixAny (one device submission), up to
// the first other command; replies keep the order of the requests, and
// each GET counts as a command.
func TestColdGetBatch(t *testing.T) {
	var mu sync.Mutex
	observed := 0
	s, tc, path := startColdServer(t, func(o *Options) {
		o.ObserveLatency = func(cmd string) func(time.Duration, int) {
			return func(_ time.Duration, n int) {
				mu.Lock()
				defer mu.Unlock()
				if cmd == "get" {
					observed += n
				}
			}
		}
	})
	c := dialRaw(t, path)
	for i := 1; i <= 5; i++ {
		c.cmd("SET", fmt.Sprint("cold:", i), fmt.Sprint("value", i))
		c.reply()
	}
	c.cmd("SET", "hot", "h")
	c.reply()
	before, submissions := s.Stats(), mgetSubmissions(tc)
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
	want := []string{"$value1", "$value2", "$value3", "nil", "$h", "+OK", "$h", "$value4", "$value5",
		"-ERR wrong number of arguments for 'get' command", "$value1"}
	for i, w := range want {
		if got := c.reply(); got != w {
			t.Fatalf("reply %d = %q, want %q", i, got, w)
		}
	}
	// cold:2, cold:3, nope and hot behind cold:1, then cold:5 behind cold:4.
	if d := mgetSubmissions(tc) - submissions; d != 2 {
		t.Fatalf("%d cold submissions of MGetPrefixAny, want 2", d)
	}
	after := s.Stats()
	// All but the GET with two arguments, refused before it runs (S110).
	if d := after.CommandsProcessed - before.CommandsProcessed; d != uint64(len(want)-1) {
		t.Errorf("commands processed grew by %d, want %d", d, len(want)-1)
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

// TestColdGetBatchLimits (S11): ColdGetBatch bounds the GETs taken per
// batch, ColdGetBatchBytes the values one MGetPrefixAny holds (one device
// submission each), and -1 turns batching off; the replies are the same
// every way.
func TestColdGetBatchLimits(t *testing.T) {
	for _, tc := range []struct {
		name        string
		batch       int
		bytes       int
		submissions uint64
	}{
		{"default", 0, 0, 1},        // cold:2-5
		{"off", -1, 0, 0},           // each GET reads alone
		{"two per batch", 2, 0, 2},  // cold:2-3; cold:4 reads alone and batches cold:5
		{"bytes", 0, 5, 4},          // values of 6 bytes, budget 5: one each (a batch takes one at least)
		{"bytes for two", 0, 12, 2}, // cold:2-3, cold:4-5
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, cache, path := startColdServer(t, func(o *Options) {
				o.ColdGetBatch, o.ColdGetBatchBytes = tc.batch, tc.bytes
			})
			c := dialRaw(t, path)
			var cmds [][]string
			for i := 1; i <= 5; i++ {
				c.cmd("SET", fmt.Sprint("cold:", i), fmt.Sprint("value", i))
				c.reply()
				cmds = append(cmds, []string{"GET", fmt.Sprint("cold:", i)})
			}
			before := mgetSubmissions(cache)
			c.send(pipeline(cmds...))
			for i := 1; i <= 5; i++ {
				if got, want := c.reply(), fmt.Sprint("$value", i); got != want {
					t.Fatalf("reply %d = %q, want %q", i, got, want)
				}
			}
			if d := mgetSubmissions(cache) - before; d != tc.submissions {
				t.Fatalf("%d cold submissions of MGetPrefixAny, want %d", d, tc.submissions)
			}
		})
	}
}

// TestColdGetBatchAfterExec (S11): GETs queued in a transaction are never
// taken out of it (the cold ones inside EXEC start no batch), and the GETs
// after EXEC batch as usual.
func TestColdGetBatchAfterExec(t *testing.T) {
	_, cache, path := startColdServer(t, nil)
	c := dialRaw(t, path)
	c.expect([]step{
		{[]string{"SET", "cold:a", "value1"}, "+OK"},
		{[]string{"SET", "cold:b", "value2"}, "+OK"},
	})
	before := mgetSubmissions(cache)
	c.send(pipeline(
		[]string{"MULTI"},
		[]string{"GET", "cold:a"},
		[]string{"GET", "cold:b"},
		[]string{"EXEC"},
		[]string{"GET", "cold:b"},
		[]string{"GET", "cold:a"},
	))
	for i, w := range []string{"+OK", "+QUEUED", "+QUEUED", "*[$value1 $value2]", "$value2", "$value1"} {
		if got := c.reply(); got != w {
			t.Fatalf("reply %d = %q, want %q", i, got, w)
		}
	}
	if d := mgetSubmissions(cache) - before; d != 1 { // cold:a, behind the first GET after EXEC
		t.Fatalf("%d cold submissions of MGetPrefixAny, want 1", d)
	}
}

// TestGetRun: a run of pipelined GETs answered through NextGet gives the
// replies, counters and latency observations of GETs answered one by one,
// up to and including a malformed frame, which is still answered with a
// protocol error after the replies before it.
func TestGetRun(t *testing.T) {
	var mu sync.Mutex
	observed := map[string]int{}
	s, path := startServer(t, func(o *Options) {
		o.ObserveLatency = func(cmd string) func(time.Duration, int) {
			return func(_ time.Duration, n int) {
				mu.Lock()
				observed[cmd] += n
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

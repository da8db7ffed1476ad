package server

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tiercache/tiercache/numa"
	"github.com/tiercache/tiercache/tier"
)

// TestCorruptHashIsRefused (S19): a hash value that does not decode is
// answered with an error by reads and writes alike, and left as it is.
func TestCorruptHashIsRefused(t *testing.T) {
	tc := newTierCache(t)
	_, path := startServerWith(t, tc, nil)
	if _, err := tc.Set([]byte("h"), []byte("\x01\x05junk"), tier.SetOptions{Kind: kindHash}); err != nil {
		t.Fatal(err)
	}
	r := dialRaw(t, path)
	want := "-" + errCorruptHash
	for _, args := range [][]string{{"HGET", "h", "a"}, {"HGETALL", "h"}, {"HSET", "h", "a", "1"}, {"HDEL", "h", "a"}, {"HLEN", "h"}, {"HINCRBY", "h", "a", "1"}, {"HSCAN", "h", "0"}} {
		r.cmd(args...)
		if got := r.reply(); got != want {
			t.Errorf("%q: %q, want %q", args, got, want)
		}
	}
	v, kind, _, ok, _, _ := tc.ViewAny(nil, []byte("h"))
	if !ok || kind != kindHash || string(v) != "\x01\x05junk" {
		t.Fatalf("the corrupt value changed: %q kind %d ok %v", v, kind, ok)
	}
	r.expect([]step{{[]string{"PING"}, "+PONG"}})
}

// TestAggregateLimits (S20): a hash over server.max_hash_fields, a value
// over max_value, a bit offset past it, are refused with a clear error
// before anything is allocated, and change nothing.
func TestAggregateLimits(t *testing.T) {
	tc := newTierCache(t)
	_, path := startServerWith(t, tc, func(o *Options) { o.MaxHashFields, o.MaxValueBytes = 3, 64 })
	r := dialRaw(t, path)
	r.expect([]step{
		{[]string{"HSET", "h", "a", "1", "b", "2", "c", "3"}, ":3"},
		{[]string{"HSET", "h", "d", "4"}, "-ERR hash would have 4 fields, the limit (server.max_hash_fields) is 3"},
		{[]string{"HSETNX", "h", "d", "4"}, "-ERR hash would have 4 fields, the limit (server.max_hash_fields) is 3"},
		{[]string{"HINCRBY", "h", "d", "4"}, "-ERR hash would have 4 fields, the limit (server.max_hash_fields) is 3"},
		{[]string{"HSET", "h", "a", "1", "d", "4", "e", "5"}, "-ERR hash would have 4 fields, the limit (server.max_hash_fields) is 3"},
		{[]string{"HSET", "h", "a", strings.Repeat("x", 60)}, "-ERR hash would take 73 bytes, the limit (max_value) is 64"},
		{[]string{"HGETALL", "h"}, "*[$a $1 $b $2 $c $3]"},
		{[]string{"HSET", "h", "a", "9"}, ":0"},
		{[]string{"SET", "s", strings.Repeat("x", 60)}, "+OK"},
		{[]string{"APPEND", "s", "12345"}, "-ERR string exceeds maximum allowed size (max_value, 64 bytes)"},
		{[]string{"SETRANGE", "s", "60", "12345"}, "-ERR string exceeds maximum allowed size (max_value, 64 bytes)"},
		{[]string{"SETRANGE", "big", "1000000000", "x"}, "-ERR string exceeds maximum allowed size (max_value, 64 bytes)"},
		{[]string{"SETBIT", "s", "512", "1"}, "-" + errBitOffset},
		{[]string{"MSETNX", "m", strings.Repeat("y", 65)}, "-ERR string exceeds maximum allowed size (max_value, 64 bytes)"},
		{[]string{"STRLEN", "s"}, ":60"},
		{[]string{"EXISTS", "big", "m"}, ":0"},
		{[]string{"SETBIT", "s", "511", "1"}, ":0"},
		{[]string{"STRLEN", "s"}, ":64"},
	})
}

// newWarmTierCache is newTierCache with a warm log beside hot: what
// cleaning hot demotes stays in DRAM.
func newWarmTierCache(t testing.TB) *tier.Cache {
	t.Helper()
	c, err := tier.Open(tier.Options{HotBytes: 8 << 20, HotMaxValue: 1 << 20,
		WarmConfig: tier.WarmConfig{WarmBytes: 8 << 20, WarmSegmentBytes: 256 << 10, WarmArena: numa.ArenaOptions{Node: numa.Unbound}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestCountersAreAtomic (S21, T24): INCR, INCRBY, HINCRBY and
// INCRBYFLOAT from several connections at once lose no update.
func TestCountersAreAtomic(t *testing.T) {
	tc := newWarmTierCache(t)
	_, path := startServerWith(t, tc, nil)
	const conns, each = 6, 300
	var wg sync.WaitGroup
	for i := range conns {
		r := dialRaw(t, path)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range each {
				r.cmd("INCR", "n")
				r.cmd("INCRBY", "m", "-2")
				r.cmd("HINCRBY", "h", "f"+strconv.Itoa(j%3), "1")
				r.cmd("HINCRBYFLOAT", "h", "x", "0.5")
				r.cmd("HSET", "h", fmt.Sprintf("c%d-%d", i, j), "v")
				for range 5 {
					if s := r.reply(); strings.HasPrefix(s, "-") {
						t.Errorf("conn %d: %s", i, s)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	r := dialRaw(t, path)
	r.expect([]step{
		{[]string{"GET", "n"}, "$" + strconv.Itoa(conns*each)},
		{[]string{"GET", "m"}, "$" + strconv.Itoa(-2*conns*each)},
		{[]string{"HGET", "h", "f0"}, "$" + strconv.Itoa(conns*each/3)},
		{[]string{"HGET", "h", "f2"}, "$" + strconv.Itoa(conns*each/3)},
		{[]string{"HGET", "h", "x"}, "$" + strconv.Itoa(conns*each/2)},
		{[]string{"HLEN", "h"}, ":" + strconv.Itoa(conns*each+4)},
	})
}

// TestMSetNXAllOrNothing (S21): MSETNX calls racing on overlapping keys
// each set all of their keys or none: at the end every key holds the
// value of the one call that answered 1 for it, and a reader racing them
// never sees one of a call's keys without the other.
func TestMSetNXAllOrNothing(t *testing.T) {
	tc := newTierCache(t)
	_, path := startServerWith(t, tc, nil)
	for round := range 40 {
		keys := []string{fmt.Sprint("a", round), fmt.Sprint("b", round), fmt.Sprint("c", round)}
		won := make([]bool, 4)
		var wg sync.WaitGroup
		stop := make(chan struct{})
		reader := dialRaw(t, path)
		readerDone := make(chan string)
		go func() {
			for {
				select {
				case <-stop:
					readerDone <- ""
					return
				default:
				}
				reader.cmd("MGET", keys[0], keys[1], keys[2])
				got := strings.Fields(strings.Trim(reader.reply(), "*[]"))
				var set []string
				for _, v := range got {
					if v != "nil" {
						set = append(set, v)
					}
				}
				if len(set) == 1 || len(set) == 3 || len(set) == 2 && set[0] != set[1] {
					readerDone <- fmt.Sprintf("MGET saw %q", got)
					return
				}
			}
		}()
		for i := range 4 {
			r := dialRaw(t, path)
			wg.Add(1)
			go func() {
				defer wg.Done()
				v := strconv.Itoa(i)
				// Each call names two of the three keys, so calls overlap.
				r.cmd("MSETNX", keys[i%3], v, keys[(i+1)%3], v)
				won[i] = r.reply() == ":1"
			}()
		}
		wg.Wait()
		close(stop)
		if msg := <-readerDone; msg != "" {
			t.Fatalf("round %d: a reader saw part of an MSETNX: %s", round, msg)
		}
		r := dialRaw(t, path)
		for i := range 4 {
			if !won[i] {
				continue
			}
			for _, k := range []string{keys[i%3], keys[(i+1)%3]} {
				r.cmd("GET", k)
				if got := r.reply(); got != "$"+strconv.Itoa(i) {
					t.Fatalf("round %d: call %d answered 1 but %s holds %s", round, i, k, got)
				}
			}
		}
	}
}

// TestHScanLargeHash (S20): HSCAN of a hash above hash.ScanWhole walks it in
// steps of about COUNT fields; a field present for the whole scan comes
// back exactly once while other fields are added and removed.
func TestHScanLargeHash(t *testing.T) {
	tc := newTierCache(t)
	_, path := startServerWith(t, tc, nil)
	r := dialRaw(t, path)
	w := dialRaw(t, path)
	args := []string{"HSET", "h"}
	for i := range 1000 {
		args = append(args, fmt.Sprint("f", i), strconv.Itoa(i))
	}
	r.cmd(args...)
	if got := r.reply(); got != ":1000" {
		t.Fatal(got)
	}
	seen := map[string]int{}
	cursor, calls := "0", 0
	for {
		r.cmd("HSCAN", "h", cursor, "COUNT", "25")
		s := r.reply() // "*[$cursor *[$f $v ...]]"
		s = strings.TrimSuffix(strings.TrimPrefix(s, "*[$"), "]]")
		cur, rest, _ := strings.Cut(s, " *[")
		items := strings.Fields(rest)
		if len(items)%2 != 0 || len(items) > 2*40 {
			t.Fatalf("call %d: %d items", calls, len(items))
		}
		for i := 0; i < len(items); i += 2 {
			seen[strings.TrimPrefix(items[i], "$")]++
		}
		calls++
		// A writer churns other fields between the calls.
		w.cmd("HSET", "h", fmt.Sprint("new", calls), "x")
		w.cmd("HDEL", "h", fmt.Sprint("new", calls-1))
		w.reply()
		w.reply()
		if cursor = cur; cursor == "0" {
			break
		}
	}
	for i := range 1000 {
		if n := seen[fmt.Sprint("f", i)]; n != 1 {
			t.Fatalf("f%d returned %d times", i, n)
		}
	}
	if calls < 1000/40 {
		t.Fatalf("%d calls: a large hash was not walked in steps", calls)
	}
	r.expect([]step{{[]string{"HSCAN", "h", "0", "COUNT", "5000", "MATCH", "f99*"}, "*[$0 *[$f99 $99 $f990 $990 $f991 $991 $f992 $992 $f993 $993 $f994 $994 $f995 $995 $f996 $996 $f997 $997 $f998 $998 $f999 $999]]"}})
}

// TestHRandField (S20): HRANDFIELD's counts: a positive one gives distinct
// fields (all of them when it is larger than the hash), a negative one
// exactly that many, repeating; WITHVALUES pairs each with its value, in
// RESP2 flat and in RESP3 as pairs.
func TestHRandField(t *testing.T) {
	tc := newTierCache(t)
	_, path := startServerWith(t, tc, nil)
	r := dialRaw(t, path)
	r.expect([]step{{[]string{"HSET", "h", "a", "1", "b", "2", "c", "3", "d", "4"}, ":4"}})
	vals := map[string]string{"a": "1", "b": "2", "c": "3", "d": "4"}
	items := func(s string) []string {
		return strings.Fields(strings.NewReplacer("*[", " ", "]", " ", "$", "").Replace(s))
	}
	for range 50 {
		r.cmd("HRANDFIELD", "h")
		if f := strings.TrimPrefix(r.reply(), "$"); vals[f] == "" {
			t.Fatalf("HRANDFIELD: %q", f)
		}
		r.cmd("HRANDFIELD", "h", "3")
		got := items(r.reply())
		if len(got) != 3 || got[0] == got[1] || got[1] == got[2] || got[0] == got[2] {
			t.Fatalf("HRANDFIELD 3: %q", got)
		}
		r.cmd("HRANDFIELD", "h", "-7", "WITHVALUES")
		got = items(r.reply())
		if len(got) != 14 {
			t.Fatalf("HRANDFIELD -7 WITHVALUES: %q", got)
		}
		for i := 0; i < len(got); i += 2 {
			if vals[got[i]] != got[i+1] {
				t.Fatalf("HRANDFIELD -7 WITHVALUES: %q", got)
			}
		}
	}
	r.expect([]step{
		{[]string{"HRANDFIELD", "h", "10"}, "*[$a $b $c $d]"},
		// Redis reads the count from -LONG_MAX to LONG_MAX (t_hash.c:
		// hrandfieldCommand, getRangeLongFromObjectOrReply).
		{[]string{"HRANDFIELD", "h", "-9223372036854775808"}, "-ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"},
		{[]string{"HRANDFIELD", "h", "-9223372036854775808", "WITHVALUES"}, "-ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"},
		{[]string{"HRANDFIELD", "h", "x"}, "-ERR value is not an integer or out of range"},
		{[]string{"HDEL", "h", "a", "b", "c"}, ":3"},
		{[]string{"HRANDFIELD", "h", "-2", "WITHVALUES"}, "*[$d $4 $d $4]"},
		{[]string{"HRANDFIELD", "h", "-" + strconv.Itoa(maxRandCount+1)}, "-ERR count is too large: at most 1048576 fields with repetitions"},
		{[]string{"SADD", "s", "a"}, ":1"},
		{[]string{"SRANDMEMBER", "s", "-" + strconv.Itoa(maxRandCount+1)}, "-ERR count is too large: at most 1048576 members with repetitions"},
		{[]string{"ZADD", "z", "1", "a"}, ":1"},
		{[]string{"ZRANDMEMBER", "z", "-" + strconv.Itoa(maxRandCount+1)}, "-ERR count is too large: at most 1048576 members with repetitions"},
	})
	r.cmd("HELLO", "3")
	r.reply()
	r.expect([]step{
		{[]string{"HRANDFIELD", "h", "-2", "WITHVALUES"}, "*[*[$d $4] *[$d $4]]"},
		{[]string{"HGETALL", "h"}, "%[$d $4]"},
		{[]string{"HGETALL", "nope"}, "%[]"},
	})
}

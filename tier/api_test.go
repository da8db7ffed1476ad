package tier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/flusher"
	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu"
	"github.com/tiercache/tiercache/policy"
)

// countingNS counts device submissions: all of them, and those with a
// Retrieve (reads; the flusher's background writes are not among them).
type countingNS struct {
	nvmekv.Namespace
	all, n atomic.Int64
}

func (c *countingNS) Do(ctx context.Context, ops ...*nvmekv.Op) error {
	c.all.Add(1)
	for _, op := range ops {
		if op.Code == nvmekv.OpRetrieve {
			c.n.Add(1)
			break
		}
	}
	return c.Namespace.Do(ctx, ops...)
}

func TestMGetSendsColdLookupsInOneSubmission(t *testing.T) {
	needURing(t)
	dir := t.TempDir()
	var cns *countingNS
	o := smallOptions(newFakeClock())
	o.Clock = nil
	o.Promotion = policy.PromotionOptions{Disabled: true}
	o.MGetColdBatch = 1000
	o.OpenCold = func(p backend.Params) (backend.Store, error) {
		ns, err := emu.Open(emu.Options{Path: dir + "/cold.kv", Capacity: 256 << 20, ReadSlots: 1024, RingEntries: 2048})
		if err != nil {
			return nil, err
		}
		cns = &countingNS{Namespace: ns}
		kv, err := nvmekv.NewKV(cns, nvmekv.KVOptions{KeepExpired: true})
		if err != nil {
			return nil, err
		}
		return newColdKV(kv, "counting", p)
	}
	c, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	val := func(i int) []byte { return []byte(fmt.Sprintf("value-%05d-%s", i, strings.Repeat("x", 500))) }
	for i := 0; i < 3000; i++ {
		if _, err := c.Set([]byte(fmt.Sprintf("m%05d", i)), val(i), SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Let the demotions run out: hot evictions go to warm through a queue,
	// warm evictions to cold through the flusher; settled when no device
	// write happened for a while with both queues empty.
	for i := 0; i < 100; i++ {
		settle(t, c)
		n := cns.all.Load()
		time.Sleep(20 * time.Millisecond)
		if cns.all.Load() == n && c.fl.Stats().Queue == 0 {
			break
		}
	}
	var mem, cold [][]byte
	var memIdx, coldIdx []int
	for i := 0; i < 3000; i++ {
		k := []byte(fmt.Sprintf("m%05d", i))
		switch c.Where(k) {
		case "hot", "warm":
			mem, memIdx = append(mem, k), append(memIdx, i)
		case "cold":
			cold, coldIdx = append(cold, k), append(coldIdx, i)
		}
	}
	// What DRAM keeps of 3,000 values varies a little (690 once under
	// -race): 600 in memory and 300 in cold make the batch.
	if len(mem) < 600 || len(cold) < 311 {
		t.Fatalf("population: %d keys in memory, %d in cold; need 600 and 311", len(mem), len(cold))
	}
	keys := append(append([][]byte{}, mem[:600]...), cold[:300]...)
	idx := append(append([]int{}, memIdx[:600]...), coldIdx[:300]...)
	before := cns.n.Load()
	vs, err := c.MGet(keys)
	if err != nil {
		t.Fatal(err)
	}
	if subs := cns.n.Load() - before; subs != 1 {
		t.Errorf("MGet of 900 keys (300 cold) made %d device submissions, want 1", subs)
	}
	for i, v := range vs {
		if !bytes.Equal(v, val(idx[i])) {
			t.Fatalf("MGet[%d] (%s) = %.20q", i, keys[i], v)
		}
	}

	// View says when it read the device; MGetPrefix takes the prefix that
	// fits its byte budget (every value here is len(val(0)) bytes).
	if _, _, ok, cold, err := c.View(nil, mem[0], nil); !ok || cold || err != nil {
		t.Errorf("View of a key in memory: ok=%v cold=%v err=%v; want a hit without a device read", ok, cold, err)
	}
	k := cold[300] // not read above, so still only in cold (promotion is off)
	if v, _, ok, fromCold, err := c.View(nil, k, nil); !ok || !fromCold || err != nil || !bytes.Equal(v, val(coldIdx[300])) {
		t.Errorf("View of a cold key: %.20q ok=%v cold=%v err=%v; want its value, read from the device", v, ok, fromCold, err)
	}
	size := int64(len(val(0)))
	for _, tc := range []struct {
		budget int64
		want   int
	}{{-1, 10}, {0, 1}, {size - 1, 1}, {3 * size, 3}, {3*size + size/2, 3}, {100 * size, 10}} {
		before := cns.n.Load()
		vs, n, err := c.MGetPrefix(cold[301:311], tc.budget)
		if err != nil || n != tc.want || len(vs) != n {
			t.Fatalf("MGetPrefix(10 cold keys, %d bytes) = %d values, n=%d, %v; want %d", tc.budget, len(vs), n, err, tc.want)
		}
		if subs := cns.n.Load() - before; subs != 1 {
			t.Errorf("MGetPrefix of %d cold keys made %d device submissions, want 1", n, subs)
		}
		for i, v := range vs {
			if !bytes.Equal(v, val(coldIdx[301+i])) {
				t.Fatalf("MGetPrefix[%d] = %.20q", i, v)
			}
		}
	}
}

func TestWhereFollowsTheValue(t *testing.T) {
	c := openCold(t, nil)
	c.Set([]byte("small"), []byte("v"), SetOptions{})
	if w := c.Where([]byte("small")); w != "hot" {
		t.Errorf("Where(small) = %q, want hot", w)
	}
	c.Set([]byte("medium"), bytes.Repeat([]byte{1}, 32<<10), SetOptions{}) // > HotMaxValue (16 KiB)
	if w := c.Where([]byte("medium")); w != "warm" {
		t.Errorf("Where(medium) = %q, want warm", w)
	}
	c.Set([]byte("large"), bytes.Repeat([]byte{2}, 200<<10), SetOptions{}) // > warm segment (64 KiB)
	if w := c.Where([]byte("large")); w != "cold" {
		t.Errorf("Where(large) = %q, want cold", w)
	}
	if w := c.Where([]byte("absent")); w != "" {
		t.Errorf("Where(absent) = %q", w)
	}
}

func TestFlushEmptiesEveryTier(t *testing.T) {
	c := openCold(t, nil)
	for i := 0; i < 500; i++ {
		c.Set([]byte(fmt.Sprint("f", i)), bytes.Repeat([]byte{byte(i)}, 1+i*100), SetOptions{})
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := c.Len(); n != 0 {
		t.Fatalf("Len after Flush = %d", n)
	}
	for i := 0; i < 500; i++ {
		if _, ok, _ := c.Get(nil, []byte(fmt.Sprint("f", i))); ok {
			t.Fatalf("key f%d survived Flush", i)
		}
	}
	// The background purge queues the cold deletes; once it ended and the
	// flusher drained, cold holds none of the keys.
	if err := c.WaitPurge(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.fl.Drain(context.Background())
	for i := 0; i < 500; i++ {
		if _, _, found, _ := c.cold.Get(context.Background(), nil, []byte(fmt.Sprint("f", i)), -1); found {
			t.Fatalf("key f%d still in cold after Flush drained", i)
		}
	}
}

// TestExpirySweepAndLen (T12): Len leaves out expired keys at once; Keys,
// read from the shards' counters, counts them until the sweep removes
// them, then agrees with Len.
func TestExpirySweepAndLen(t *testing.T) {
	clk := newFakeClock()
	o := smallOptions(clk)
	c, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 0; i < 100; i++ {
		c.Set([]byte(fmt.Sprint("t", i)), []byte("v"), SetOptions{TTL: time.Duration(1+i%2) * time.Second})
	}
	clk.Advance(int64(1500 * time.Millisecond))
	if n := c.Len(); n != 50 {
		t.Fatalf("Len after half expired = %d, want 50", n)
	}
	if n := c.Keys(); n != 100 {
		t.Fatalf("Keys before the sweep = %d, want 100 (expired keys count until swept)", n)
	}
	c.sweep(c.now())
	if n, l := c.Keys(), c.Len(); n != 50 || l != 50 {
		t.Fatalf("after the sweep Keys = %d, Len = %d, want 50", n, l)
	}
	if got := c.Stats().Expired; got != 50 {
		t.Fatalf("sweep purged %d, want 50", got)
	}
	if ttl, ok := c.TTL([]byte("t1")); !ok || ttl != 500*time.Millisecond {
		t.Fatalf("TTL(t1) = %v, %v", ttl, ok)
	}
	// SET with an expiry in the past deletes.
	c.Set([]byte("t1"), []byte("v"), SetOptions{ExpireAt: time.Unix(0, clk.Now()-1)})
	if _, ok, _ := c.Get(nil, []byte("t1")); ok {
		t.Fatal("SET with a past expiry left the key")
	}
}

func TestCloseIsIdempotentAndFailsLaterCalls(t *testing.T) {
	c, err := Open(smallOptions(newFakeClock()))
	if err != nil {
		t.Fatal(err)
	}
	c.Set([]byte("a"), []byte("b"), SetOptions{})
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Get(nil, []byte("a")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Get after Close: %v", err)
	}
	if _, err := c.Set([]byte("a"), []byte("b"), SetOptions{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Set after Close: %v", err)
	}
}

func TestBadInputIsAClearError(t *testing.T) {
	c, err := Open(Options{HotBytes: 1 << 20, MaxValue: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Set(nil, []byte("v"), SetOptions{}); !errors.Is(err, ErrEmptyKey) {
		t.Errorf("Set(empty key) = %v", err)
	}
	if _, err := c.Set([]byte("k"), make([]byte, 1001), SetOptions{}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Set(too large) = %v", err)
	}
	if _, _, err := c.Get(nil, nil); !errors.Is(err, ErrEmptyKey) {
		t.Errorf("Get(empty key) = %v", err)
	}
}

func TestOptionsValidateReportsEveryProblem(t *testing.T) {
	o := Options{HotBytes: 10, Durability: "sometimes", WarmConfig: WarmConfig{WarmBytes: -1}, Flusher: flusher.Options{}}
	o.EnsureDefaults()
	err := o.Validate()
	for _, want := range []string{"HotBytes", "Durability", "WarmBytes"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to name %s", err, want)
		}
	}
	if _, err := Open(Options{Durability: DurabilityDrain}); err == nil {
		t.Error("drain without a cold tier was accepted")
	}
}

// TestMGetEmptyValueIsAHit: an empty value is a hit (non-nil) in MGet, from
// every tier, not a miss.
func TestMGetEmptyValueIsAHit(t *testing.T) {
	c, err := Open(smallOptions(newFakeClock()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Set([]byte("empty"), nil, SetOptions{}); err != nil {
		t.Fatal(err)
	}
	check := func(where string) {
		t.Helper()
		vs, err := c.MGet([][]byte{[]byte("empty"), []byte("absent")})
		if err != nil || vs[0] == nil || len(vs[0]) != 0 || vs[1] != nil {
			t.Fatalf("%s: MGet = %q (nil: %v, %v), %v", where, vs, vs[0] == nil, vs[1] == nil, err)
		}
	}
	check("hot")
}

// TestHugeTTL: a TTL past what unix nanoseconds hold (the year 2262) is
// kept as the latest expiry there is, as Redis keeps any TTL; before,
// now + ttl wrapped into the past and SET EX or EXPIRE deleted the key.
func TestHugeTTL(t *testing.T) {
	c, err := Open(smallOptions(newFakeClock()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	huge := time.Duration(math.MaxInt64) // 292 years, from 2023 on
	if _, err := c.Set([]byte("a"), []byte("v"), SetOptions{TTL: huge}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Set([]byte("b"), []byte("v"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if !c.Expire([]byte("b"), huge) {
		t.Fatal("Expire found no key")
	}
	if _, err := c.Set([]byte("c"), []byte("v"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := c.GetEx(nil, []byte("c"), Expiry{TTL: huge}); !ok || err != nil {
		t.Fatalf("GetEx: %v %v", ok, err)
	}
	for _, k := range []string{"a", "b", "c"} {
		if ttl, ok := c.TTL([]byte(k)); !ok || ttl < 200*365*24*time.Hour {
			t.Errorf("%s: TTL %v, %v after a TTL of %v", k, ttl, ok, huge)
		}
	}
	lt1, err1 := c.ExpireIf([]byte("a"), time.Hour, ExpireLT)
	lt2, err2 := c.ExpireIf([]byte("a"), huge, ExpireLT)
	if !lt1 || lt2 || err1 != nil || err2 != nil {
		t.Error("LT: an hour is earlier than the saturated expiry, and the saturated expiry is not earlier than an hour")
	}
}

// TestConcurrentExpireGT: goroutines race EXPIRE GT on one key; the check
// and the change are one step (ExpireIf), so the key ends with the longest
// TTL any of them asked for. A TTL lookup followed by an Expire could let
// a shorter TTL overwrite a longer one.
func TestConcurrentExpireGT(t *testing.T) {
	o := smallOptions(newFakeClock()) // a clock that stands still: TTLs are exact
	c, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	key := []byte("k")
	if _, err := c.Set(key, []byte("v"), SetOptions{TTL: time.Second}); err != nil {
		t.Fatal(err)
	}
	const workers, each = 4, 2000
	longest := make([]time.Duration, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for i := 0; i < each; i++ {
				d := time.Duration(1+r.IntN(1_000_000)) * time.Second
				c.ExpireIf(key, d, ExpireGT)
				longest[w] = max(longest[w], d)
			}
		}()
	}
	wg.Wait()
	want := slices.Max(longest)
	if ttl, ok := c.TTL(key); !ok || ttl != want {
		t.Fatalf("TTL %v, %v; want %v, the longest asked for", ttl, ok, want)
	}
}

// TestMGetValuesSpanChunks: MGet copies DRAM records into chunks of
// mgetChunk bytes; values across several chunks come back whole, and each
// is capped at its length, so appending to one cannot overwrite the next.
func TestMGetValuesSpanChunks(t *testing.T) {
	c, err := Open(smallOptions(newFakeClock()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n := 3 * mgetChunk / 1500
	keys := make([][]byte, n)
	val := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 1500) }
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("chunk%04d", i))
		if _, err := c.Set(keys[i], val(i), SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var ch Chunks
	for _, in := range []*Chunks{nil, &ch, &ch} { // fresh memory, pooled chunks, chunks given back and taken again
		vs, err := c.MGetIn(in, keys)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vs {
			if !bytes.Equal(v, val(i)) {
				t.Fatalf("value %d: %d bytes, want %d bytes of %d", i, len(v), 1500, i)
			}
			if cap(v) != len(v) {
				t.Fatalf("value %d: cap %d > len %d: an append would overwrite the next value", i, cap(v), len(v))
			}
		}
		if in != nil {
			if ch.Held() < 3*mgetChunk {
				t.Fatalf("chunks hold %d bytes of the values, want at least %d", ch.Held(), 3*mgetChunk)
			}
			ch.Release()
			if ch.Held() != 0 {
				t.Fatalf("after Release chunks hold %d bytes", ch.Held())
			}
		}
	}
}

// TestChunksKeepOnlySmallArrays (T10): a Chunks reuses an MGet's arrays
// for the next one up to keptArrays keys, and keeps none of a larger one.
func TestChunksKeepOnlySmallArrays(t *testing.T) {
	c, err := Open(smallOptions(newFakeClock()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var ch Chunks
	for _, n := range []int{10, keptArrays + 1} {
		keys := make([][]byte, n)
		for i := range keys {
			keys[i] = []byte(fmt.Sprint("k", i))
		}
		if _, err := c.MGetIn(&ch, keys); err != nil {
			t.Fatal(err)
		}
		ch.Release()
		if cap(ch.vals) > keptArrays {
			t.Fatalf("after an MGet of %d keys the Chunks keeps arrays of %d", n, cap(ch.vals))
		}
	}
	if cap(ch.vals) < 10 {
		t.Fatalf("the arrays of the MGet of 10 keys were not kept (cap %d)", cap(ch.vals))
	}
}

// TestExpireGTInOneMillisecond checks T43's unit: GT and LT compare
// expiries in whole milliseconds rounded down, so EXPIRE k 100 GT a
// fraction of a millisecond after SET k v EX 100 does not apply (Redis's
// expiries are milliseconds), and does a millisecond later; LT likewise;
// a past time is earlier than any live expiry.
func TestExpireGTInOneMillisecond(t *testing.T) {
	clock := newFakeClock()
	c, err := Open(smallOptions(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	key := []byte("k")
	clock.Advance(int64(200 * time.Microsecond)) // inside a millisecond
	if _, err := c.Set(key, []byte("v"), SetOptions{TTL: 100 * time.Second}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(int64(300 * time.Microsecond)) // the same millisecond
	if ok, err := c.ExpireIf(key, 100*time.Second, ExpireGT); ok || err != nil {
		t.Errorf("GT in the same millisecond: %v, %v; want false", ok, err)
	}
	if ok, err := c.ExpireIf(key, 100*time.Second-400*time.Microsecond, ExpireLT); ok || err != nil {
		t.Errorf("LT to the same millisecond: %v, %v; want false", ok, err)
	}
	clock.Advance(int64(time.Millisecond))
	if ok, err := c.ExpireIf(key, 100*time.Second, ExpireGT); !ok || err != nil {
		t.Errorf("GT a millisecond later: %v, %v; want true", ok, err)
	}
	if ok, err := c.ExpireIf(key, 99*time.Second, ExpireLT); !ok || err != nil {
		t.Errorf("LT a second earlier: %v, %v; want true", ok, err)
	}
	// Against an absolute expiry: milliseconds rounded down, Redis's.
	at := time.Unix(0, clock.Now()).Truncate(time.Millisecond).Add(time.Second)
	clock.Advance(int64(300 * time.Microsecond))
	if ok, err := c.ExpireAtIf(key, at, 0); !ok || err != nil {
		t.Fatalf("PEXPIREAT: %v, %v", ok, err)
	}
	if ok, _ := c.ExpireIf(key, time.Second, ExpireGT); ok {
		t.Error("GT to the same millisecond as the PEXPIREAT's: applied")
	}
	if ok, _ := c.ExpireIf(key, 999*time.Millisecond, ExpireLT); !ok {
		t.Error("LT a millisecond before the PEXPIREAT's: not applied")
	}
	// A time already past is earlier than any live key's expiry, even one
	// within this millisecond: LT deletes.
	if _, err := c.Set(key, []byte("v"), SetOptions{TTL: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(int64(900 * time.Microsecond))
	if ok, err := c.ExpireIf(key, -time.Second, ExpireLT); !ok || err != nil {
		t.Errorf("LT to a past time: %v, %v; want true", ok, err)
	}
	if _, ok := c.TTLMillis(key); ok {
		t.Error("the key is still there after EXPIRE -1 LT")
	}
}

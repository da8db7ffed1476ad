package tier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/coldstore"
	"github.com/tiercache/tiercache/flusher"
	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu"
	"github.com/tiercache/tiercache/uring"
)

// needURing skips (or fails under TIERCACHE_NO_SKIP) where io_uring, which
// the emulated namespace runs on, is unavailable.
func needURing(t testing.TB) {
	t.Helper()
	r, err := uring.New(uring.Options{Entries: 4})
	if err != nil {
		skipOrFail(t, "io_uring unavailable, the emulated cold store cannot run: %v", err)
		return
	}
	r.Close()
}

// openCold opens a cache with smallOptions and an emulated cold store in a
// temporary directory, after edit (if not nil) adjusted the options; Close
// runs at cleanup (again, if the test closed it: Close is idempotent).
func openCold(t *testing.T, edit func(*Options)) *Cache {
	t.Helper()
	needURing(t)
	o := smallOptions(newFakeClock())
	emuCold(&o, t.TempDir())
	if edit != nil {
		edit(&o)
	}
	c, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestModelEmulatedCold(t *testing.T) {
	clk := newFakeClock()
	// Warm of 4 segments: the keys the model writes overflow DRAM, so the
	// LFU evicts to cold and reads promote back.
	c := openCold(t, func(o *Options) { o.Clock, o.WarmBytes = clk.Now, 256<<10 })
	maxVal := 8 << 20
	if testing.Short() {
		maxVal = 1 << 20
	}
	// The seed is fixed (the run is deterministic under the fake clock);
	// the check below needs a sequence that takes every path in -short's
	// 2,000 steps too: seed 3 evicted nothing to cold once the live
	// operations joined the mix.
	runModel(t, c, clk, steps(t, 10000), 300, maxVal, 4)
	st := c.Stats()
	kst := kvOf(c).Stats()
	t.Logf("stats: %+v; kv: %+v", st, kst)
	if st.Demotions == 0 || st.Flushed == 0 || st.Promotions == 0 || st.Flusher.Written == 0 || kst.ChunksWritten == 0 {
		t.Errorf("not every path ran: demotions %d, flushed %d, promotions %d, written %d, chunks %d",
			st.Demotions, st.Flushed, st.Promotions, st.Flusher.Written, kst.ChunksWritten)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestModelSmallFlusherQueue (T25, flusher F2): the model on the emulated
// store through a flusher queue of 4 items and 64 KiB, the least the
// options allow, in Backpressure mode: the queue is full all the time, yet
// nothing is dropped, so the cache matches the map exactly.
func TestModelSmallFlusherQueue(t *testing.T) {
	clk := newFakeClock()
	c := openCold(t, func(o *Options) {
		o.Clock, o.WarmBytes = clk.Now, 256<<10
		o.Flusher = flusher.Options{QueueItems: 4, QueueBytes: 64 << 10, BatchItems: 2, InFlight: 1}
	})
	runModel(t, c, clk, steps(t, 10000), 300, 1<<20, 5)
	st := c.Stats()
	t.Logf("flusher: %+v; lost %d", st.Flusher, st.Lost)
	if st.Flusher.Drops != 0 || st.Flusher.Overflow == 0 {
		t.Errorf("flusher drops %d (want 0), overflow %d (want > 0: the queue was full)", st.Flusher.Drops, st.Flusher.Overflow)
	}
}

// TestConcurrentEmulatedCold runs the concurrent model on the emulated
// store through a flusher queue of 8 items, in both overload modes: with
// backpressure (T25) nothing is dropped; shedding drops copies, and a
// live key then may miss.
func TestConcurrentEmulatedCold(t *testing.T) {
	needURing(t)
	for _, mode := range []flusher.Overload{flusher.Backpressure, flusher.Shed} {
		t.Run(mode.String(), func(t *testing.T) {
			o := concOptions(nil)
			o.Flusher.Overload = mode
			emuCold(&o, t.TempDir())
			c, err := Open(o)
			if err != nil {
				t.Fatal(err)
			}
			res := runConcurrent(t, c, 4, 16, 4, steps(t, 3000))
			st := c.Stats()
			kst := kvOf(c).Stats()
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			t.Logf("reads %d hits %d missLive %d; stats %+v; kv chunks %d", res.reads.Load(), res.hits.Load(), res.missLive.Load(), st, kst.ChunksWritten)
			if st.Demotions == 0 || st.Flushed == 0 || st.Promotions == 0 || kst.ChunksWritten == 0 {
				t.Errorf("not every path ran: demotions %d, flushed %d, promotions %d, chunks %d",
					st.Demotions, st.Flushed, st.Promotions, kst.ChunksWritten)
			}
			switch {
			case mode == flusher.Shed && st.Flusher.Drops == 0:
				t.Errorf("shed: no flusher drops, the test does not exercise them")
			case mode == flusher.Backpressure && (st.Flusher.Drops != 0 || st.Flusher.Overflow == 0):
				t.Errorf("backpressure: flusher drops %d (want 0), overflow %d (want > 0: the queue was full)", st.Flusher.Drops, st.Flusher.Overflow)
			}
			if dropped(st) == 0 && res.missLive.Load() > 0 {
				t.Errorf("%d misses of live keys although nothing was dropped or lost", res.missLive.Load())
			}
		})
	}
}

// restartWorkload writes, overwrites and deletes keys and returns the model
// of what was acknowledged last (nil = deleted).
func restartWorkload(t *testing.T, c *Cache, n int, seed uint64) map[string][]byte {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	model := map[string][]byte{}
	for i := 0; i < n*3; i++ {
		k := fmt.Sprintf("r%04d", r.IntN(n))
		if r.IntN(6) == 0 {
			c.Delete([]byte(k))
			model[k] = nil
			continue
		}
		v := randValue(r, 600<<10)
		if _, err := c.Set([]byte(k), v, SetOptions{}); err != nil {
			t.Fatal(err)
		}
		model[k] = v
	}
	return model
}

func restartOptions(dir string, d Durability) Options {
	o := smallOptions(newFakeClock())
	o.Clock = nil
	o.Durability = d
	emuCold(&o, dir)
	return o
}

// reopenDrain closes c (drain mode) and opens a cache on the same store in
// dir again; the reopened cache is closed at cleanup.
func reopenDrain(t *testing.T, c *Cache, dir string) *Cache {
	t.Helper()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := Open(restartOptions(dir, DurabilityDrain))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// drainRestart runs restartWorkload(n, seed) in drain mode in a fresh
// directory, closes, and reopens the cache on the same store.
func drainRestart(t *testing.T, n int, seed uint64) (c *Cache, model map[string][]byte, dir string) {
	t.Helper()
	needURing(t)
	dir = t.TempDir()
	c, err := Open(restartOptions(dir, DurabilityDrain))
	if err != nil {
		t.Fatal(err)
	}
	model = restartWorkload(t, c, n, seed)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if c, err = Open(restartOptions(dir, DurabilityDrain)); err != nil {
		t.Fatal(err)
	}
	return c, model, dir
}

func TestRestartDrainBringsEveryKeyBack(t *testing.T) {
	c, model, _ := drainRestart(t, 400, 5)
	defer c.Close()
	live := 0
	for k, want := range model {
		v, ok, err := c.Get(nil, []byte(k))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case want == nil && ok:
			t.Errorf("deleted key %s came back after restart", k)
		case want != nil && !ok:
			t.Errorf("key %s missing after a drain restart", k)
		case want != nil && !bytes.Equal(v, want):
			t.Errorf("key %s: wrong value after restart (%d bytes, want %d)", k, len(v), len(want))
		}
		if want != nil {
			live++
		}
	}
	if got := c.Len(); got != live {
		t.Errorf("Len after reading every key = %d, want %d", got, live)
	}
	checkKeyCount(t, c) // keys adopted from cold are counted
	t.Logf("%d live keys restored, stats %+v", live, c.Stats())
}

func TestRestartCacheModeSubsetNeverWrong(t *testing.T) {
	needURing(t)
	dir := t.TempDir()
	c, err := Open(restartOptions(dir, DurabilityCache))
	if err != nil {
		t.Fatal(err)
	}
	model := restartWorkload(t, c, 400, 6)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c, err = Open(restartOptions(dir, DurabilityCache))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	back := 0
	for k, want := range model {
		v, ok, err := c.Get(nil, []byte(k))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case ok && want == nil:
			t.Errorf("deleted key %s came back after restart", k)
		case ok && !bytes.Equal(v, want):
			t.Errorf("key %s: stale or wrong value after restart (%d bytes, want %d)", k, len(v), len(want))
		case ok:
			back++
		}
	}
	if back == 0 {
		t.Errorf("no key came back: the small tiers should have flushed some to cold")
	}
	t.Logf("%d of %d keys came back", back, len(model))
}

func TestWriteThroughIsDurableBeforeSetReturns(t *testing.T) {
	needURing(t)
	dir := t.TempDir()
	c, err := Open(restartOptions(dir, DurabilityWriteThrough))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		k := []byte(fmt.Sprintf("wt%02d", i))
		v := bytes.Repeat([]byte{byte(i)}, 100+i*1000)
		if _, err := c.Set(k, v, SetOptions{}); err != nil {
			t.Fatal(err)
		}
		got, m, err := kvOf(c).Get(context.Background(), nil, k)
		if err != nil || !bytes.Equal(got, v) {
			t.Fatalf("key %s not in cold when Set returned: %v", k, err)
		}
		if m.Version == 0 {
			t.Fatalf("key %s: cold copy has no version", k)
		}
	}
	// Every written key has at least its header record in cold.
	for _, tl := range c.Stats().Tiers {
		if tl.Name == "cold" && tl.Items < 50 {
			t.Fatalf("cold reports %d records after 50 write-through Sets", tl.Items)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

// failingCold opens the real emulated namespace with its Fault seam: once
// fail is set, every region write fails with EIO.
func failingCold(o *Options, dir string, fail *atomic.Bool) {
	faultyCold(o, dir, fail, new(atomic.Bool))
}

// faultyCold is failingCold that can also fail every disk read (failReads).
func faultyCold(o *Options, dir string, failWrites, failReads *atomic.Bool) {
	o.OpenCold = func(p backend.Params) (backend.Store, error) {
		_, statErr := os.Stat(filepath.Join(dir, "cold.kv")) // an earlier run's store
		mode := emu.Cache
		if p.Strict {
			mode = emu.Strict
		}
		ns, err := emu.Open(emu.Options{Path: dir + "/cold.kv", Capacity: 64 << 20, RegionBytes: 64 << 10, Mode: mode,
			Fault: func(write bool, off int64, n int) syscall.Errno {
				if write && failWrites.Load() || !write && failReads.Load() {
					return syscall.EIO
				}
				return 0
			}})
		if err != nil {
			return nil, err
		}
		kv, err := nvmekv.NewKV(ns, nvmekv.KVOptions{KeepExpired: true})
		if err != nil {
			return nil, err
		}
		return coldstore.New(kv, "emulated-faulty", statErr == nil, p.Strict, p.MaxValue)
	}
}

func TestDeviceErrorsAreCountedAndCacheKeepsServing(t *testing.T) {
	needURing(t)
	var fail atomic.Bool
	o := smallOptions(newFakeClock())
	o.Clock = nil
	failingCold(&o, t.TempDir(), &fail)
	c, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if we := c.Stats().ColdWriteError; we != nil {
		t.Fatalf("Stats().ColdWriteError = %v before any failure", we)
	}
	fail.Store(true)
	r := rand.New(rand.NewPCG(9, 9))
	last := map[string][]byte{}
	for i := 0; i < 3000; i++ {
		k := fmt.Sprintf("f%03d", r.IntN(300))
		v := randValue(r, 100<<10)
		if _, err := c.Set([]byte(k), v, SetOptions{}); err != nil && !errors.Is(err, flusher.ErrDropped) {
			// values too large for warm go to cold and report its failure
			var se *nvmekv.StatusError
			if !errors.As(err, &se) && !errors.Is(err, syscall.EIO) {
				t.Logf("Set %s (%d bytes): %v", k, len(v), err)
			}
			delete(last, k)
			continue
		}
		last[k] = v
	}
	// Whatever was lost must be forgotten, never served wrong: once the
	// moving copies settled, a key either reads back exactly or is gone.
	settle(t, c)
	hits := 0
	for k, want := range last {
		v, ok, err := c.Get(nil, []byte(k))
		if err != nil {
			t.Fatalf("Get %s: %v", k, err)
		}
		switch {
		case ok && !bytes.Equal(v, want):
			t.Fatalf("key %s: wrong value while the device fails", k)
		case ok:
			hits++
		case c.Exists([]byte(k)) == 1:
			t.Errorf("key %s: Exists but Get misses (a lost copy was not forgotten)", k)
		}
	}
	st := c.Stats()
	t.Logf("hits %d of %d; flusher errors %d, cold errors %d, lost %d", hits, len(last), st.Flusher.Errors, st.ColdErrors, st.Lost)
	if st.Flusher.Errors == 0 || st.ColdErrors == 0 {
		t.Errorf("device errors were not counted: flusher %d, cache %d", st.Flusher.Errors, st.ColdErrors)
	}
	if st.Lost == 0 {
		t.Errorf("failed cold writes lost no key: Lost = 0")
	}
	if !errors.Is(st.ColdWriteError, syscall.EIO) {
		t.Errorf("Stats().ColdWriteError = %v after failed region writes, want the EIO", st.ColdWriteError)
	}
	// The cache keeps serving while the device fails: small values written
	// now fit the memory tiers and read back.
	for i := 0; i < 20; i++ {
		k := []byte(fmt.Sprintf("alive%02d", i))
		if _, err := c.Set(k, k, SetOptions{}); err != nil {
			t.Fatalf("Set %s while the device fails: %v", k, err)
		}
	}
	for i := 0; i < 20; i++ {
		k := []byte(fmt.Sprintf("alive%02d", i))
		if v, ok, _ := c.Get(nil, k); !ok || !bytes.Equal(v, k) {
			t.Fatalf("Get %s while the device fails = %q, %v", k, v, ok)
		}
	}
	// The device recovers: writes go through again.
	fail.Store(false)
	if _, err := c.Set([]byte("after"), []byte("ok"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if v, ok, _ := c.Get(nil, []byte("after")); !ok || string(v) != "ok" {
		t.Fatalf("Get after recovery = %q, %v", v, ok)
	}
}

// settle waits until no copy is moving between tiers (the LFU's victims,
// transit, the flusher) and the lost-copy checks ran. It polls because
// flushes complete on the flusher's goroutines; it gives up after a minute
// (a leaked transit entry would be a bug of its own).
func settle(t testing.TB, c *Cache) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		c.processVictims()
		if c.fl != nil {
			if err := c.fl.Drain(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		c.mem.mu.Lock()
		pending := len(c.mem.victims)
		c.mem.mu.Unlock()
		if pending == 0 && c.tr.len() == 0 && (c.fl == nil || c.fl.Held() == 0) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("copies still moving after a minute: victims %d, transit %d", pending, c.tr.len())
		}
		time.Sleep(time.Millisecond)
	}
	c.processLost()
}

func TestFullStrictStoreCountsCapacityErrors(t *testing.T) {
	c := openCold(t, func(o *Options) {
		o.Clock = nil
		emuCold(o, t.TempDir(), func(c *coldstore.Config) { c.Capacity, c.Strict = 1<<20, true }) // four 256 KiB regions
	})
	r := rand.New(rand.NewPCG(10, 10))
	for i := 0; i < 2000; i++ {
		k := fmt.Sprintf("s%04d", i)
		if _, err := c.Set([]byte(k), randValue(r, 32<<10), SetOptions{}); err != nil {
			t.Logf("Set: %v", err)
		}
	}
	if _, err := c.Set([]byte("still"), []byte("serving"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if v, ok, _ := c.Get(nil, []byte("still")); !ok || string(v) != "serving" {
		t.Fatalf("Get = %q, %v", v, ok)
	}
	c.fl.Drain(context.Background())
	st := c.Stats()
	t.Logf("flusher %+v, lost %d", st.Flusher, st.Lost)
	if st.Flusher.Errors == 0 {
		t.Errorf("a full strict store produced no counted errors")
	}
}

// touchSome reads n of model's live keys, which an earlier run left in
// cold: each is adopted into the directory.
func touchSome(t *testing.T, c *Cache, model map[string][]byte, n int) {
	t.Helper()
	for k, want := range model {
		if n == 0 {
			return
		}
		if want != nil {
			if _, ok, _ := c.Get(nil, []byte(k)); !ok {
				t.Fatalf("key %s missing after a restart", k)
			}
			n--
		}
	}
}

// TestFlushClearsAnEarlierRunsKeys (T14): after a drain restart, Flush with
// some keys touched and most not leaves none readable, in this run or after
// another restart; values above the store's record limit (chunks) included.
// The reads after Flush find the untouched keys' flushed copies and delete
// them, so the store keeps only the floor's record.
func TestFlushClearsAnEarlierRunsKeys(t *testing.T) {
	c, model, dir := drainRestart(t, 200, 7)
	touchSome(t, c, model, 20)
	if _, err := c.Set([]byte("after-restart"), []byte("v"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		for k := range model {
			if v, ok, err := c.Get(nil, []byte(k)); ok || err != nil {
				t.Fatalf("%s: key %s reads %d bytes (err %v)", when, k, len(v), err)
			}
		}
		if _, ok, _ := c.Get(nil, []byte("after-restart")); ok {
			t.Fatalf("%s: a key written after the restart survived Flush", when)
		}
	}
	check("after Flush")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := Open(restartOptions(dir, DurabilityDrain))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	check("after Flush and a restart")
	if n := c.cold.Stats().Items; n > 1 {
		t.Errorf("the cold store holds %d records after Flush and a read of every key, want the floor's alone", n)
	}
}

// TestFlushWritethroughHidesAnEarlierRunsKeys (T14): a writethrough Flush
// over a store an earlier run filled leaves none of its keys readable, in
// this run or after a restart, without walking the store (a floor
// recorded before Flush returns), and a key written after it survives.
func TestFlushWritethroughHidesAnEarlierRunsKeys(t *testing.T) {
	c, model, dir := drainRestart(t, 200, 11)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := Open(restartOptions(dir, DurabilityWriteThrough))
	if err != nil {
		t.Fatal(err)
	}
	touchSome(t, c, model, 10)
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Set([]byte("after-flush"), []byte("v"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		for k := range model {
			if v, ok, err := c.Get(nil, []byte(k)); ok || err != nil {
				t.Fatalf("%s: key %s reads %d bytes (err %v)", when, k, len(v), err)
			}
		}
		if v, ok, _ := c.Get(nil, []byte("after-flush")); !ok || string(v) != "v" {
			t.Fatalf("%s: the key written after Flush reads %q, %v", when, v, ok)
		}
	}
	check("after Flush")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if c, err = Open(restartOptions(dir, DurabilityWriteThrough)); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	check("after Flush and a restart")
}

// TestColdEvictionsCounted: an emulated store in cache mode that fills up
// reclaims its oldest region; the records it dropped show as the cold
// tier's evictions, and every key either reads back its own value or
// misses (and is then counted lost and leaves the directory, T7).
func TestColdEvictionsCounted(t *testing.T) {
	c := openCold(t, func(o *Options) {
		emuCold(o, t.TempDir(), func(c *coldstore.Config) { c.Capacity = 4 << 20 }) // 16 regions of 256 KiB
	})

	const n = 3000 // 12 MB of 4 KiB values through a 4 MiB store
	val := func(i int) []byte { return bytes.Repeat([]byte{byte(i), byte(i >> 8)}, 2048) }
	for i := 0; i < n; i++ {
		if _, err := c.Set([]byte(fmt.Sprint("ev", i)), val(i), SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	settle(t, c)
	readable := 0
	for i := 0; i < n; i++ {
		v, ok, err := c.Get(nil, []byte(fmt.Sprint("ev", i)))
		if err != nil || ok && !bytes.Equal(v, val(i)) {
			t.Fatalf("key %d: ok %v err %v, a wrong value", i, ok, err)
		}
		if ok {
			readable++
		}
	}
	st := c.Stats()
	cold := st.Tiers[len(st.Tiers)-1]
	t.Logf("%d of %d keys readable; cold evictions %d, lost %d", readable, n, cold.Evictions, st.Lost)
	if cold.Name != "cold" || cold.Evictions == 0 {
		t.Fatalf("cold tier %+v: no evictions counted though the store took 3x its capacity", cold)
	}
	if readable == n || st.Lost == 0 {
		t.Fatalf("%d of %d readable, %d lost: the store should have dropped keys", readable, n, st.Lost)
	}
	if got := c.Len(); got != readable {
		t.Errorf("Len = %d, but %d keys can be read", got, readable)
	}
}

// TestColdOverwritesDeleteInBatches: overwriting keys that cold holds
// queues a cold delete each (T3); the flusher sends a batch's deletes as
// one DeleteMany (flusher F9, nvmekv K6), and every delete succeeds, also
// for keys whose cold copy is gone already (not found is not an error).
func TestColdOverwritesDeleteInBatches(t *testing.T) {
	c := openCold(t, nil)
	idx := coldOnly(t, c, 400, 60, 0)
	before := c.Stats()
	// A cold copy already gone: its delete finds nothing.
	if err := c.cold.Delete(context.Background(), trimKey(idx[0])); err != nil {
		t.Fatal(err)
	}
	// From goroutines of their own: a writer that evicts to cold may wait
	// for the device (T25), and the deletes of writers waiting together
	// are what a batch gathers.
	var wg sync.WaitGroup
	errc := make(chan error, len(idx))
	for _, i := range idx {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if _, err := c.Set(trimKey(i), trimValue(i, 1), SetOptions{}); err != nil {
				errc <- err
			}
		}(i)
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	settle(t, c)
	st := c.Stats()
	dels := st.ColdDeletes - before.ColdDeletes
	calls := st.Flusher.DeleteCalls - before.Flusher.DeleteCalls
	t.Logf("%d overwrites of cold keys: %d cold deletes in %d store calls", len(idx), dels, calls)
	if dels < uint64(len(idx)) || calls == 0 || calls >= dels {
		t.Errorf("%d cold deletes in %d store calls: want at least %d deletes, batched", dels, calls, len(idx))
	}
	if st.Flusher.Errors != before.Flusher.Errors || st.ColdErrors != before.ColdErrors {
		t.Errorf("flusher errors %d, cold errors %d after the overwrites (before %d, %d)",
			st.Flusher.Errors, st.ColdErrors, before.Flusher.Errors, before.ColdErrors)
	}
	for _, i := range idx {
		if v, ok, err := c.Get(nil, trimKey(i)); err != nil || !ok || !bytes.Equal(v, trimValue(i, 1)) {
			t.Fatalf("%s after the overwrite: ok %v err %v %.20q", trimKey(i), ok, err, v)
		}
	}
}

// TestCloseDeletesForLostKeys: keys lost to a full flusher queue (Shed)
// under a burst of writes are purged at Close while the flusher still takes the
// cold deletes purging queues: no cold error, no "flusher: closed".
// (Writers wait for a slow device, T25; here they are told it stalls, as
// after a wait that timed out, so the 8-item queue overflows.)
func TestCloseDeletesForLostKeys(t *testing.T) {
	core, logs := observer.New(zapcore.WarnLevel)
	c := openCold(t, func(o *Options) {
		o.WarmConfig = WarmConfig{}
		o.Flusher.QueueItems, o.Flusher.InFlight, o.Flusher.Overload = 8, 1, flusher.Shed
		o.Logger = zap.New(core)
		wrapCold(o, func(in Cold) Cold { return slowCold{Cold: in, delay: 2 * time.Millisecond} }) // a device slower than the burst
	})
	c.throttleOff.Store(math.MaxInt64) // writers do not wait for the device
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ { // eight writers evict at once: the queue overflows
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for round := 0; round < 3; round++ {
				for i := g; i < 300; i += 8 {
					if _, err := c.Set(trimKey(i), trimValue(i, round), SetOptions{}); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}(g)
	}
	wg.Wait()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	st := c.Stats()
	t.Logf("lost %d, flusher drops %d, cold deletes %d, cold errors %d", st.Lost, st.Flusher.Drops, st.ColdDeletes, st.ColdErrors)
	if st.Flusher.Drops == 0 {
		t.Fatal("no flusher drops: the test does not lose keys")
	}
	if st.ColdErrors != 0 {
		for _, e := range logs.All() {
			t.Logf("%s %v", e.Message, e.ContextMap())
		}
		t.Errorf("%d cold errors at Close, want 0", st.ColdErrors)
	}
}

// TestPromotedReadsWriteNothing (T18): keys only cold holds are read (and
// promoted into hot), then pushed out of hot by new keys: every promoted
// copy that left hot was kept (Stats.ColdKept), not written again, and
// the cold writes are those of the new keys that left hot. (A new key
// pushed out while its first cold write is still in flight, read back and
// pushed out again, is written twice: the count of writes is a lower
// bound, not an equality.)
func TestPromotedReadsWriteNothing(t *testing.T) {
	c := openCold(t, func(o *Options) { o.WarmConfig = WarmConfig{} }) // hot evictions go straight to cold
	idx := coldOnly(t, c, 200, 30, 0)
	var wasHot []int // other keys of coldOnly's still hot: written to cold when they leave
	for i := 0; i < 200; i++ {
		if c.Where(trimKey(i)) == "hot" {
			wasHot = append(wasHot, i)
		}
	}
	puts0, kept0 := kvOf(c).Stats().Puts, c.Stats().ColdKept
	var promoted []int
	// Read until some are promoted (the promotion policy and the LFU's
	// admission decide).
	for round := 0; round < 40 && len(promoted) == 0; round++ {
		for _, i := range idx {
			if v, ok, err := c.Get(nil, trimKey(i)); !ok || err != nil || !bytes.Equal(v, trimValue(i, 0)) {
				t.Fatalf("%s: ok %v err %v", trimKey(i), ok, err)
			}
		}
		if round%4 < 3 {
			continue
		}
		settle(t, c)
		for _, i := range idx {
			if c.Where(trimKey(i)) == "hot" {
				promoted = append(promoted, i)
			}
		}
	}
	if len(promoted) == 0 {
		t.Fatal("no cold key was promoted into hot after 40 rounds of reads: the test needs some")
	}
	// New keys, read more often than the promoted ones were (TinyLFU keeps
	// the more frequent), until some promoted copy left hot.
	fillers := 0
	for batch := 0; batch < 10 && !promotedLeft(c, promoted); batch++ {
		for i := fillers; i < fillers+200; i++ {
			k := []byte(fmt.Sprint("filler-", i))
			if _, err := c.Set(k, trimValue(i, 9), SetOptions{}); err != nil {
				t.Fatal(err)
			}
			for r := 0; r < 8; r++ {
				c.Get(nil, k)
			}
		}
		fillers += 200
		settle(t, c)
	}
	left := 0 // keys hot pushed out that cold did not hold: each written to cold once
	for i := 0; i < fillers; i++ {
		if c.Where([]byte(fmt.Sprint("filler-", i))) != "hot" {
			left++
		}
	}
	for _, i := range wasHot {
		if c.Where(trimKey(i)) != "hot" {
			left++
		}
	}
	stillHot := 0
	for _, i := range promoted {
		if c.Where(trimKey(i)) == "hot" {
			stillHot++
		}
	}
	kept := c.Stats().ColdKept - kept0
	puts := kvOf(c).Stats().Puts - puts0
	t.Logf("%d cold keys promoted, %d still hot; %d other keys left hot; %d cold puts, %d kept", len(promoted), stillHot, left, puts, kept)
	if stillHot == len(promoted) {
		t.Fatal("no promoted key left hot: the test needs some evicted")
	}
	if kept < uint64(len(promoted)-stillHot) {
		t.Errorf("%d promoted copies left hot, %d kept: promoted copies were written to cold again (%d puts)", len(promoted)-stillHot, kept, puts)
	}
	if puts < uint64(left) {
		t.Errorf("%d cold puts for %d other keys that left hot", puts, left)
	}
	for _, i := range idx {
		if v, ok, err := c.Get(nil, trimKey(i)); !ok || err != nil || !bytes.Equal(v, trimValue(i, 0)) {
			t.Fatalf("%s after its hot copy left: ok %v err %v", trimKey(i), ok, err)
		}
	}
}

// promotedLeft reports whether some key of promoted is no longer in hot.
func promotedLeft(c *Cache, promoted []int) bool {
	for _, i := range promoted {
		if c.Where(trimKey(i)) != "hot" {
			return true
		}
	}
	return false
}

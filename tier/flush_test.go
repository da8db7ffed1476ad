package tier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/tiercache/tiercache/flusher"
)

// holdPurge makes every background purge of c wait, before it purges
// anything, until release is called; started receives once per purge that
// reached that point. Set before c's first Flush.
func holdPurge(c *Cache) (started <-chan struct{}, release func()) {
	st := make(chan struct{}, 16)
	gate := make(chan struct{})
	c.purgeHook = func() {
		st <- struct{}{}
		<-gate
	}
	var once sync.Once
	return st, func() { once.Do(func() { close(gate) }) }
}

// trimmed returns once the directory trim (T15) has nothing left to
// forget, so that the directory's key count stays as it is until the next
// write: the background trim would otherwise forget cold-only keys
// between a test's count and what it checks against it.
func trimmed(t *testing.T, c *Cache) {
	t.Helper()
	for c.dir.keyCount() > c.maxKeys() {
		if c.trim() {
			t.Fatalf("the directory trim is stuck at %d keys, bound %d", c.dir.keyCount(), c.maxKeys())
		}
	}
}

func flushValue(tag string, i, n int) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("%s-%d.", tag, i)), n)
}

// setKeys sets prefix0..prefix(n-1) to flushValue(tag, i, reps).
func setKeys(t *testing.T, c *Cache, prefix, tag string, n, reps int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if _, err := c.Set([]byte(fmt.Sprint(prefix, i)), flushValue(tag, i, reps), SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// checkKeys fails unless prefix0..prefix(n-1) read flushValue(tag, i, reps),
// or (tag "") miss, through Get and through MGet.
func checkKeys(t *testing.T, c *Cache, when, prefix, tag string, n, reps int) {
	t.Helper()
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = []byte(fmt.Sprint(prefix, i))
		v, ok, err := c.Get(nil, keys[i])
		switch {
		case err != nil:
			t.Fatalf("%s: Get(%s): %v", when, keys[i], err)
		case tag == "" && ok:
			t.Fatalf("%s: flushed key %s reads %q", when, keys[i], v[:min(len(v), 20)])
		case tag != "" && (!ok || !bytes.Equal(v, flushValue(tag, i, reps))):
			t.Fatalf("%s: Get(%s) = %v, %q, want %s's value", when, keys[i], ok, v[:min(len(v), 20)], tag)
		}
	}
	vs, err := c.MGet(keys)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		if (tag == "") != (v == nil) || (tag != "" && !bytes.Equal(v, flushValue(tag, i, reps))) {
			t.Fatalf("%s: MGet[%s] = %q, want tag %q", when, keys[i], v[:min(len(v), 20)], tag)
		}
	}
}

// TestFlushServesCallsWhilePurging (T36): Flush returns with the purge of
// its keys held back; meanwhile other goroutines' SETs, GETs and MGETs are
// served (a GET after a SET reads the new value, a flushed key misses),
// DBSIZE and Len count the new keys alone, and Stats and Memory show the
// flushed keys pending. Once released, the purge takes them all, and the
// new keys stay.
func TestFlushServesCallsWhilePurging(t *testing.T) {
	c := openCold(t, nil)
	const n = 5000 // of 600 B: most in cold, the rest in hot and warm
	setKeys(t, c, "old", "old", n, 100)
	settle(t, c)
	trimmed(t, c)
	started, release := holdPurge(c)
	defer release()
	dirKeys := c.Stats().DirectoryKeys // the rest only cold holds (T37)
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	<-started
	if s := c.Stats(); !s.Purging || s.PurgePending != dirKeys || s.Purged != 0 || s.Keys != 0 {
		t.Fatalf("after Flush, purge held: purging %v, pending %d of %d, purged %d, keys %d", s.Purging, s.PurgePending, dirKeys, s.Purged, s.Keys)
	}
	const writers, each = 4, 200
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				k := []byte(fmt.Sprintf("new%d-%d", g, i))
				want := flushValue("new", g*each+i, 10)
				if _, err := c.Set(k, want, SetOptions{}); err != nil {
					errs <- err
					return
				}
				if v, ok, err := c.Get(nil, k); err != nil || !ok || !bytes.Equal(v, want) {
					errs <- fmt.Errorf("Get(%s) after its Set = %v, %v (%d bytes)", k, ok, err, len(v))
					return
				}
				old := []byte(fmt.Sprint("old", (g*each+i)%n))
				if v, ok, _ := c.Get(nil, old); ok {
					errs <- fmt.Errorf("flushed key %s reads %d bytes", old, len(v))
					return
				}
				if vs, _ := c.MGet([][]byte{old, k}); vs[0] != nil || !bytes.Equal(vs[1], want) {
					errs <- fmt.Errorf("MGet(%s, %s) = %d, %d bytes", old, k, len(vs[0]), len(vs[1]))
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Every call above was served with the purge still held.
	s := c.Stats()
	if !s.Purging || s.PurgePending != dirKeys {
		t.Fatalf("the purge moved while held: purging %v, pending %d", s.Purging, s.PurgePending)
	}
	if s.Keys != writers*each || c.Len() != writers*each {
		t.Fatalf("Keys %d, Len %d while purging, want %d", s.Keys, c.Len(), writers*each)
	}
	if m := c.Memory(); m.DirectoryKeys != dirKeys+writers*each {
		t.Fatalf("Memory counts %d directory keys while purging, want %d flushed + %d new", m.DirectoryKeys, dirKeys, writers*each)
	}
	release()
	if err := c.WaitPurge(context.Background()); err != nil {
		t.Fatal(err)
	}
	s = c.Stats()
	if s.Purging || s.PurgePending != 0 || s.Purged != uint64(dirKeys) {
		t.Fatalf("after the purge: purging %v, pending %d, purged %d (want %d)", s.Purging, s.PurgePending, s.Purged, dirKeys)
	}
	if m := c.Memory(); m.DirectoryKeys != writers*each {
		t.Fatalf("Memory counts %d directory keys after the purge, want %d", m.DirectoryKeys, writers*each)
	}
	if s.DRAM.Items > writers*each {
		t.Fatalf("the LFU holds %d keys after the purge, only %d exist", s.DRAM.Items, writers*each)
	}
	checkKeys(t, c, "after the purge", "old", "", n, 0)
	for g := 0; g < writers; g++ {
		checkKeys(t, c, "after the purge", fmt.Sprintf("new%d-", g), "", 0, 0)
	}
	settle(t, c)
	checkEntries(t, c, 0)
}

// TestFlushKeepsLaterWrites (T14, T36): keys written after Flush, flushed
// keys with cold copies among them, keep their new values through the
// purge (which queues no cold delete for them) and a restart; the flushed
// keys written again neither.
func TestFlushKeepsLaterWrites(t *testing.T) {
	needURing(t)
	dir := t.TempDir()
	c, err := Open(restartOptions(dir, DurabilityDrain))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { c.Close() }()
	const n = 400
	setKeys(t, c, "k", "old", n, 1000) // 6-7 KB values: mostly in cold
	settle(t, c)
	inCold := 0
	for i := 0; i < n/2; i++ {
		if c.Where([]byte(fmt.Sprint("k", i))) == "cold" {
			inCold++
		}
	}
	if inCold < n/4 {
		t.Fatalf("only %d of the keys rewritten after Flush are in cold", inCold)
	}
	started, release := holdPurge(c)
	defer release()
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	<-started
	setKeys(t, c, "k", "new", n/2, 1000)
	release()
	if err := c.WaitPurge(context.Background()); err != nil {
		t.Fatal(err)
	}
	settle(t, c) // the purge's cold deletes ran
	check := func(when string) {
		t.Helper()
		for i := 0; i < n; i++ {
			k := []byte(fmt.Sprint("k", i))
			v, ok, err := c.Get(nil, k)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case i < n/2 && (!ok || !bytes.Equal(v, flushValue("new", i, 1000))):
				t.Fatalf("%s: key %s written after Flush reads %v, %q", when, k, ok, v[:min(len(v), 20)])
			case i >= n/2 && ok:
				t.Fatalf("%s: flushed key %s reads %q", when, k, v[:min(len(v), 20)])
			}
		}
	}
	check("after the purge")
	c = reopenDrain(t, c, dir)
	check("after a restart")
}

// TestFlushedKeysStayGoneAfterRestart (T14): an earlier run's keys that
// this run never touched are neither read, counted nor listed after Flush,
// nor after a restart, nor after a Flush whose purge a Close finished; the
// store keeps them (nothing was cleared inline), and the recorded floor
// hides them.
func TestFlushedKeysStayGoneAfterRestart(t *testing.T) {
	c, model, dir := drainRestart(t, 300, 9)
	live := 0
	for _, v := range model {
		if v != nil {
			live++
		}
	}
	started, release := holdPurge(c)
	defer release()
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	<-started
	setKeys(t, c, "after", "after", 10, 3)
	// Close while the purge is held: it waits for the purge to end.
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	release()
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	c, err := Open(restartOptions(dir, DurabilityDrain))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { c.Close() }()
	// The store was cleared (O(1), logstore E34) under the Flush: only
	// the keys written after it are there, and counted (T37).
	if got := coldUserKeys(c); got != 10 {
		t.Fatalf("the store holds %d user keys after the restart, want the 10 written after Flush (%d were flushed)", got, live)
	}
	if n := c.Keys(); n != 10 {
		t.Fatalf("Keys after the restart = %d, want 10 (nothing touched yet)", n)
	}
	checkKeys(t, c, "after Flush and a restart", "after", "after", 10, 3)
	keys := make([][]byte, 0, len(model))
	for k := range model {
		keys = append(keys, []byte(k))
		if v, ok, _ := c.Get(nil, []byte(k)); ok {
			t.Fatalf("flushed key %s of an earlier run reads %d bytes after a restart", k, len(v))
		}
	}
	vs, err := c.MGet(keys)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		if v != nil {
			t.Fatalf("flushed key %s of an earlier run: MGet reads %d bytes after a restart", keys[i], len(v))
		}
	}
	if n, l := c.Keys(), c.Len(); n != 10 || l != 10 {
		t.Fatalf("Keys %d, Len %d after reading every key, want the 10 written after Flush", n, l)
	}
	_, listed := c.Scan(0, 1000, nil)
	if len(listed) != 10 {
		t.Fatalf("Scan lists %d keys, want the 10 written after Flush", len(listed))
	}
}

// TestFlushTwiceWhilePurging (T36): a second Flush while the first one's
// purge is held flushes the keys written in between too; one purge takes
// both Flushes' keys, and the keys after the second stay.
func TestFlushTwiceWhilePurging(t *testing.T) {
	c := openCold(t, nil)
	setKeys(t, c, "a", "a", 300, 50)
	started, release := holdPurge(c)
	defer release()
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	<-started
	setKeys(t, c, "b", "b", 200, 50)
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	setKeys(t, c, "c", "c", 100, 50)
	if s := c.Stats(); s.PurgePending != 500 || s.Keys != 100 {
		t.Fatalf("after two Flushes: %d pending, %d keys; want 500 and 100", s.PurgePending, s.Keys)
	}
	checkKeys(t, c, "purge held", "b", "", 200, 0)
	release()
	if err := c.WaitPurge(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
		t.Fatal("the second Flush started a second purge beside the first")
	default:
	}
	if s := c.Stats(); s.Purged != 500 || s.PurgePending != 0 || s.Purging {
		t.Fatalf("after the purge: purged %d, pending %d, purging %v", s.Purged, s.PurgePending, s.Purging)
	}
	checkKeys(t, c, "after the purge", "a", "", 300, 0)
	checkKeys(t, c, "after the purge", "b", "", 200, 0)
	checkKeys(t, c, "after the purge", "c", "c", 100, 50)
}

// faultCold fails the floor's record (failFloor: a store that takes no
// writes) and every delete (failDeletes: EIO).
type faultCold struct {
	Cold
	failFloor, failDeletes bool
}

func (f *faultCold) SetFloor(ctx context.Context, floor uint64) error {
	if f.failFloor {
		return errInjected
	}
	return f.Cold.SetFloor(ctx, floor)
}

func (f *faultCold) Delete(ctx context.Context, key []byte) error {
	if f.failDeletes {
		return errInjected
	}
	return f.Cold.Delete(ctx, key)
}

// openWrapped opens a drain-mode cache on the store in dir with wrap
// around its cold tier.
func openWrapped(t *testing.T, dir string, wrap func(Cold) Cold) *Cache {
	t.Helper()
	o := restartOptions(dir, DurabilityDrain)
	wrapCold(&o, wrap)
	c, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestFlushFloorError (T14): when the floor cannot be recorded, Flush of a
// cache whose store holds an earlier run's keys answers the error and
// changes nothing; without such keys it flushes (every key's cold copy is
// deleted by the purge), and the error is counted.
func TestFlushFloorError(t *testing.T) {
	needURing(t)
	dir := t.TempDir()
	c, err := Open(restartOptions(dir, DurabilityDrain))
	if err != nil {
		t.Fatal(err)
	}
	setKeys(t, c, "e", "e", 50, 100)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c = openWrapped(t, dir, func(in Cold) Cold { return &faultCold{Cold: in, failFloor: true} })
	checkKeys(t, c, "after a restart", "e", "e", 25, 100) // half of them touched
	keys := c.Keys()
	if err := c.Flush(); !errors.Is(err, errInjected) {
		t.Fatalf("Flush with an earlier run's keys and no floor = %v, want the injected error", err)
	}
	if c.Keys() != keys || c.Stats().ColdErrors == 0 {
		t.Fatalf("a failed Flush changed Keys from %d to %d (cold errors %d)", keys, c.Keys(), c.Stats().ColdErrors)
	}
	checkKeys(t, c, "after a failed Flush", "e", "e", 50, 100)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	c = openCold(t, func(o *Options) {
		wrapCold(o, func(in Cold) Cold { return &faultCold{Cold: in, failFloor: true} })
	})
	setKeys(t, c, "f", "f", 50, 100)
	if err := c.Flush(); err != nil {
		t.Fatalf("Flush of this run's keys alone: %v", err)
	}
	if s := c.Stats(); s.ColdErrors == 0 || s.Keys != 0 {
		t.Fatalf("Flush without a floor: cold errors %d, keys %d", s.ColdErrors, s.Keys)
	}
	checkKeys(t, c, "after Flush", "f", "", 50, 0)
}

// TestFlushColdDeleteErrors (T14): when every cold delete of the purge
// fails (EIO), the flushed keys stay gone, in this run (the failed deletes
// stay pending, F8, and the floor hides the copies) and after a restart
// (the recorded floor); the failures are counted.
func TestFlushColdDeleteErrors(t *testing.T) {
	needURing(t)
	dir := t.TempDir()
	c := openWrapped(t, dir, func(in Cold) Cold { return &faultCold{Cold: in, failDeletes: true} })
	setKeys(t, c, "d", "d", 200, 1000)
	settle(t, c)
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitPurge(context.Background()); err != nil {
		t.Fatal(err)
	}
	settle(t, c)
	if c.Stats().ColdErrors == 0 {
		t.Fatal("no cold delete failed")
	}
	checkKeys(t, c, "after Flush with failed deletes", "d", "", 200, 0)
	if err := c.Close(); err != nil {
		t.Logf("Close: %v", err)
	}
	c, err := Open(restartOptions(dir, DurabilityDrain))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.cold.Stats().Items < 100 {
		t.Fatalf("the store holds %d records: the deletes were not failed", c.cold.Stats().Items)
	}
	checkKeys(t, c, "after a restart", "d", "", 200, 0)
}

// TestStaleEntriesLeaveDRAMQuietly (T36): while the purge is held, writes
// that need room evict flushed entries too; their records go, and they
// neither count as lost nor touch the new keys' entries or counts.
func TestStaleEntriesLeaveDRAMQuietly(t *testing.T) {
	c, err := Open(smallOptions(newFakeClock())) // no cold: an evicted key is lost
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	setKeys(t, c, "m", "m", 1000, 50) // 200-300 B each: DRAM is full
	lostBefore := c.Stats().Lost
	started, release := holdPurge(c)
	defer release()
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	<-started
	const n = 3000
	setKeys(t, c, "n", "n", n, 50)
	checkEntries(t, c, 0)
	missing := 0
	for i := 0; i < n; i++ {
		v, ok, _ := c.Get(nil, []byte(fmt.Sprint("n", i)))
		if !ok {
			missing++
		} else if !bytes.Equal(v, flushValue("n", i, 50)) {
			t.Fatalf("n%d reads another value", i)
		}
	}
	s := c.Stats()
	t.Logf("%d of %d new keys missing; DRAM holds %d keys, %d flushed pending", missing, n, s.DRAM.Items, s.PurgePending)
	if lost := s.Lost - lostBefore; lost != uint64(missing) {
		t.Fatalf("%d keys counted lost, %d new keys missing: flushed entries were counted", lost, missing)
	}
	if s.Keys != int64(n-missing) || c.Len() != n-missing {
		t.Fatalf("Keys %d, Len %d, want %d", s.Keys, c.Len(), n-missing)
	}
	release()
	if err := c.WaitPurge(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkEntries(t, c, 1)
	checkKeys(t, c, "after the purge", "m", "", 1000, 0)
}

// TestPurgePacedByFlusher (T36): the purge queues its cold deletes no
// faster than the flusher takes them: with thousands of flushed keys in
// cold, the queue never passes QueueItems (no delete overflows it), so
// evictions are never dropped for them.
func TestPurgePacedByFlusher(t *testing.T) {
	// MaxKeys keeps every key in the directory (no forgetting, T37), so
	// the purge has one cold delete per key to pace.
	c := openCold(t, func(o *Options) { o.Flusher.QueueItems, o.MaxKeys = 1024, 1<<30 })
	setKeys(t, c, "q", "q", 4000, 1000)
	settle(t, c)
	before := c.Stats().Flusher
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitPurge(context.Background()); err != nil {
		t.Fatal(err)
	}
	settle(t, c)
	s := c.Stats()
	if s.ColdDeletes < 3000 {
		t.Fatalf("%d cold deletes queued for 4000 flushed keys mostly in cold", s.ColdDeletes)
	}
	if o, d := s.Flusher.Overflow-before.Overflow, s.Flusher.Drops-before.Drops; o != 0 || d != 0 {
		t.Fatalf("the purge overflowed the flusher's queue %d times (%d drops)", o, d)
	}
}

// stalledCold holds every batch of puts back until gate is closed: a
// device that stalls.
type stalledCold struct {
	Cold
	gate chan struct{}
}

func (g *stalledCold) PutMany(ctx context.Context, items []*flusher.Item) error {
	<-g.gate
	return g.Cold.PutMany(ctx, items)
}

// stallCold wraps o's cold store in a stalledCold and returns what opens
// its gate (once; at the test's cleanup if the test did not).
func stallCold(t *testing.T, o *Options) (open func()) {
	gate := make(chan struct{})
	var once sync.Once
	open = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(open)
	wrapCold(o, func(in Cold) Cold { return &stalledCold{Cold: in, gate: gate} })
	return open
}

// TestFlushDoesNotWaitForThrottledWriters (T36): a writer waiting for a
// stalled device (throttle, T25, up to throttleWait) while it holds its
// call open does not hold Flush up: Flush ends the wait (holdOff), which
// then counts as no stall (throttleOff stays unset), and returns.
func TestFlushDoesNotWaitForThrottledWriters(t *testing.T) {
	g := &stalledCold{gate: make(chan struct{})}
	c := openCold(t, func(o *Options) {
		o.Flusher.QueueBytes = 64 << 10
		o.Flusher.InFlight = 1
		wrapCold(o, func(in Cold) Cold { g.Cold = in; return g })
	})
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			c.Set([]byte(fmt.Sprint("w", i)), flushValue("w", i, 100), SetOptions{})
		}
	}()
	defer func() { close(stop); <-done }()
	defer close(g.gate) // first: the writer's wait ends, and Close drains the flusher
	for c.Stats().Flusher.Throttled == 0 {
		runtime.Gosched() // until a writer waits for the stalled device
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if off := c.throttleOff.Load(); off != 0 {
		t.Fatalf("Flush returned only after a writer's wait for the device timed out (throttleOff %d)", off)
	}
}

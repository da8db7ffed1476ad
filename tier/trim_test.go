package tier

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

// trimValue is key i's 4 KiB value of generation gen: 4 KiB values keep
// the small hot and warm tiers to a few dozen keys, so most keys end up
// only in cold, where the directory may forget them.
func trimValue(i, gen int) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("%06d-%d|", i, gen)), 4096/10)
}

func trimKey(i int) []byte { return []byte(fmt.Sprintf("t%05d", i)) }

// waitTrimmed waits until the directory holds at most max keys.
func waitTrimmed(t *testing.T, c *Cache, max int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for c.dir.keyCount() > max {
		if time.Now().After(deadline) {
			t.Fatalf("directory still holds %d keys after 30 s, bound %d (stats %+v)", c.dir.keyCount(), max, c.Stats())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// inDirectory reports whether the directory has an entry for key.
func inDirectory(c *Cache, key []byte) bool {
	lo, _ := hashKey(key)
	sh := c.dir.shard(lo)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	return sh.m[viewString(key)] != nil
}

// TestDirectoryTrim (T15): with MaxKeys set, the directory forgets keys
// held only in cold until it is back under the bound, and a forgotten key
// still reads back, keeps its TTL, refuses SET NX, takes SET XX, overwrites
// and deletes exactly as if it had been remembered, also across a restart.
func TestDirectoryTrim(t *testing.T) {
	needURing(t)
	dir := t.TempDir()
	o := restartOptions(dir, DurabilityDrain) // Close writes hot and warm to cold: the restart is exact
	o.MaxKeys = 500
	c, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { c.Close() }()
	const n = 3000
	for i := 0; i < n; i++ {
		so := SetOptions{}
		if i%10 == 0 {
			so.TTL = time.Hour
		}
		if _, err := c.Set(trimKey(i), trimValue(i, 0), so); err != nil {
			t.Fatal(err)
		}
	}
	settle(t, c)
	waitTrimmed(t, c, o.MaxKeys)
	st := c.Stats()
	if st.Forgotten == 0 || st.Lost != 0 {
		t.Fatalf("forgotten %d (want > 0), lost %d (want 0)", st.Forgotten, st.Lost)
	}
	// Every key still reads back, the forgotten ones from cold.
	forgot := 0
	for i := 0; i < n; i++ {
		if !inDirectory(c, trimKey(i)) {
			forgot++
		}
		v, ok, err := c.Get(nil, trimKey(i))
		if err != nil || !ok || !bytes.Equal(v, trimValue(i, 0)) {
			t.Fatalf("key %d: ok %v err %v, value %.20q", i, ok, err, v)
		}
		if i%10 == 0 {
			if ttl, ok := c.TTL(trimKey(i)); !ok || ttl <= 0 || ttl > time.Hour {
				t.Fatalf("key %d: TTL %v, %v after the directory forgot it", i, ttl, ok)
			}
		}
	}
	t.Logf("read back all %d keys, %d of them forgotten by the directory; stats %+v", n, forgot, c.Stats())
	if forgot < n/2 {
		t.Fatalf("only %d of %d keys were forgotten", forgot, n)
	}

	// The reads adopted the keys again. A TTL changed by Expire or Persist
	// is not in the cold copy: those keys must not be forgotten, or they
	// would come back with the old expiry.
	const persisted, expired = 10, 11 // key 10 had a TTL of 1 h, key 11 none
	if !c.Persist(trimKey(persisted)) || !c.Expire(trimKey(expired), 2*time.Hour) {
		t.Fatal("Persist or Expire found no key")
	}
	settle(t, c)
	waitTrimmed(t, c, o.MaxKeys)
	time.Sleep(3 * trimEvery) // passes that could forget them have run
	if ttl, ok := c.TTL(trimKey(persisted)); !ok || ttl >= 0 {
		t.Fatalf("persisted key: TTL %v, %v; want none", ttl, ok)
	}
	if ttl, ok := c.TTL(trimKey(expired)); !ok || ttl <= time.Hour {
		t.Fatalf("key given a 2 h TTL: TTL %v, %v", ttl, ok)
	}
	if !inDirectory(c, trimKey(persisted)) || !inDirectory(c, trimKey(expired)) {
		t.Fatal("a key whose TTL changed was forgotten")
	}
	var f []int
	for i := 1; i < n && len(f) < 4; i++ {
		if i%10 != 0 && !inDirectory(c, trimKey(i)) {
			f = append(f, i)
		}
	}
	if len(f) < 4 {
		t.Fatalf("found %d forgotten keys, want 4", len(f))
	}
	if ok, err := c.Set(trimKey(f[0]), trimValue(f[0], 1), SetOptions{NX: true}); ok || err != nil {
		t.Fatalf("SET NX of a forgotten key: %v, %v; want refused (it exists)", ok, err)
	}
	if ok, err := c.Set(trimKey(f[1]), trimValue(f[1], 1), SetOptions{XX: true}); !ok || err != nil {
		t.Fatalf("SET XX of a forgotten key: %v, %v; want stored (it exists)", ok, err)
	}
	if got := c.Delete(trimKey(f[2])); got != 1 {
		t.Fatalf("DEL of a forgotten key returned %d, want 1", got)
	}
	if _, err := c.Set(trimKey(f[3]), trimValue(f[3], 1), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	want := map[int][]byte{f[0]: trimValue(f[0], 0), f[1]: trimValue(f[1], 1), f[2]: nil, f[3]: trimValue(f[3], 1)}
	check := func(when string) {
		t.Helper()
		for i, w := range want {
			v, ok, err := c.Get(nil, trimKey(i))
			if err != nil || ok != (w != nil) || !bytes.Equal(v, w) {
				t.Fatalf("%s: key %d: ok %v err %v value %.20q, want %.20q", when, i, ok, err, v, w)
			}
		}
	}
	check("after the writes")
	settle(t, c)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	o.MaxKeys = 0
	if c, err = Open(o); err != nil {
		t.Fatal(err)
	}
	check("after a restart")
}

// TestConcurrentDirectoryTrim: the concurrency test's checks (T1, T2, no
// miss of a live key while nothing is dropped) hold while the directory
// keeps forgetting keys and readers adopt them back.
func TestConcurrentDirectoryTrim(t *testing.T) {
	needURing(t)
	o := concOptions(nil)
	o.Flusher.QueueItems, o.Flusher.QueueBytes = 1<<20, 1<<40
	o.DemoteQueue = 1 << 16
	o.MaxKeys = 8
	o.WarmBytes = 0 // no warm tier: hot victims go to cold, where they may be forgotten
	emuCold(&o, t.TempDir())
	c, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	res := runConcurrent(t, c, 4, 64, 4, steps(t, 3000))
	st := c.Stats()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("reads %d hits %d missLive %d; forgotten %d adopted %d lost %d", res.reads.Load(), res.hits.Load(),
		res.missLive.Load(), st.Forgotten, st.Adopted, st.Lost)
	if st.Forgotten == 0 || st.Adopted == 0 {
		t.Errorf("forgotten %d, adopted %d: the directory never forgot a key that was read again", st.Forgotten, st.Adopted)
	}
	if st.Lost+st.DemoteDrops+st.Flusher.Drops == 0 && res.missLive.Load() > 0 {
		t.Errorf("%d misses of live keys although nothing was dropped or lost", res.missLive.Load())
	}
}

// TestConcurrentOnAnEarlierRunsStore: the concurrency test's checks hold on
// a cold store an earlier run filled, whose keys the directory learns only
// when they are read (the same lookups as for keys it forgot).
func TestConcurrentOnAnEarlierRunsStore(t *testing.T) {
	needURing(t)
	dir := t.TempDir()
	o := concOptions(nil)
	o.Flusher.QueueItems, o.Flusher.QueueBytes = 1<<20, 1<<40
	o.DemoteQueue = 1 << 16
	o.WarmBytes = 0
	o.Durability = DurabilityDrain
	emuCold(&o, dir)
	c, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	runConcurrent(t, c, 4, 64, 4, steps(t, 500))
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if c, err = Open(o); err != nil {
		t.Fatal(err)
	}
	res := runConcurrent(t, c, 4, 64, 4, steps(t, 2000))
	st := c.Stats()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("reads %d hits %d missLive %d; adopted %d lost %d", res.reads.Load(), res.hits.Load(), res.missLive.Load(), st.Adopted, st.Lost)
	if st.Adopted == 0 {
		t.Errorf("no key was adopted from the earlier run's store")
	}
}

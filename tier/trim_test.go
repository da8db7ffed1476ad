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

// openTrimming opens a cache in drain mode (Close writes hot and warm to
// cold, so a restart is exact) on an emulated cold store in a fresh
// directory, with MaxKeys set to maxKeys.
func openTrimming(t *testing.T, maxKeys int64) (*Cache, Options) {
	t.Helper()
	needURing(t)
	o := restartOptions(t.TempDir(), DurabilityDrain)
	o.MaxKeys = maxKeys
	c, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	return c, o
}

// fillTrimmed sets keys trimKey(0..n-1) to trimValue(i, 0), every
// ttlEvery-th one (i%ttlEvery == 0; 0: none) with a TTL of 1 h, and waits
// until they are durable in cold and the directory is back under maxKeys.
func fillTrimmed(t *testing.T, c *Cache, n, ttlEvery int, maxKeys int64) {
	t.Helper()
	for i := 0; i < n; i++ {
		so := SetOptions{}
		if ttlEvery > 0 && i%ttlEvery == 0 {
			so.TTL = time.Hour
		}
		if _, err := c.Set(trimKey(i), trimValue(i, 0), so); err != nil {
			t.Fatal(err)
		}
	}
	settle(t, c)
	waitTrimmed(t, c, maxKeys)
}

// coldOnly sets keys trimKey(0..n-1) to trimValue(i, 0) (with ttl, if
// not 0), waits until they settled, and returns the first want of them
// that only cold holds; it fails the test if fewer are.
func coldOnly(t *testing.T, c *Cache, n, want int, ttl time.Duration) []int {
	t.Helper()
	for i := 0; i < n; i++ {
		if _, err := c.Set(trimKey(i), trimValue(i, 0), SetOptions{TTL: ttl}); err != nil {
			t.Fatal(err)
		}
	}
	settle(t, c)
	var idx []int
	for i := 0; i < n && len(idx) < want; i++ {
		if c.Where(trimKey(i)) == "cold" {
			idx = append(idx, i)
		}
	}
	if len(idx) < want {
		t.Fatalf("%d keys are in cold alone, want %d", len(idx), want)
	}
	return idx
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
	c, o := openTrimming(t, 500)
	defer func() { c.Close() }()
	const n = 3000
	fillTrimmed(t, c, n, 10, o.MaxKeys)
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
	if !persist(c, trimKey(persisted)) || !c.Expire(trimKey(expired), 2*time.Hour) {
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
	if got, _ := c.Delete(trimKey(f[2])); got != 1 {
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
	var err error
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
	t.Logf("reads %d hits %d missLive %d; forgotten %d adopted %d lost %d phantoms %d cold evictions %d", res.reads.Load(), res.hits.Load(),
		res.missLive.Load(), st.Forgotten, st.Adopted, st.Lost, st.Phantoms, st.Tiers[len(st.Tiers)-1].Evictions)
	if st.Forgotten == 0 || st.Adopted == 0 {
		t.Errorf("forgotten %d, adopted %d: the directory never forgot a key that was read again", st.Forgotten, st.Adopted)
	}
	if dropped(st) == 0 && res.missLive.Load() > 0 {
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
	if dropped(st) == 0 && res.missLive.Load() > 0 {
		t.Errorf("%d misses of live keys although nothing was dropped or lost", res.missLive.Load())
	}
}

// forceForget drops key from the directory as a trim pass would, ignoring
// its second-chance mark; it reports whether it did (a key whose newest
// version is not durable in cold alone stays).
func forceForget(c *Cache, key []byte) bool {
	lo, _ := hashKey(key)
	sh := c.dir.shard(lo)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.m[viewString(key)]
	if e == nil {
		return false
	}
	ks, now := string(key), c.now()
	if !c.forgettable(ks, e, now) && !c.forgettable(ks, e, now) { // the first call may only clear recent
		return false
	}
	forgetLocked(sh, ks, e)
	return true
}

// TestTrimBetweenLookupAndLock (T15): a command that adopts a key from
// cold and then takes the shard lock finds the key again when a trim
// forgot it in between: the knownHook forgets it there, once per command.
// TTL, PTTL, EXPIRE, PERSIST, TIER, SET NX/XX and DEL all answer as for a
// key the directory never forgot.
func TestTrimBetweenLookupAndLock(t *testing.T) {
	c, o := openTrimming(t, 200)
	defer func() { c.Close() }()
	const n = 1000
	fillTrimmed(t, c, n, 2, o.MaxKeys)
	var armed bool
	forced := 0
	c.knownHook = func(key []byte) {
		if armed {
			armed = false
			if forceForget(c, key) {
				forced++
			}
		}
	}
	// next returns a forgotten key with a TTL (ttl) or without one, and arms
	// the hook for the command that follows.
	used := map[int]bool{}
	commands := 0
	next := func(ttl bool) (int, []byte) {
		t.Helper()
		for i := 0; i < n; i++ {
			if !used[i] && (i%2 == 0) == ttl && !inDirectory(c, trimKey(i)) {
				used[i] = true
				armed = true
				commands++
				return i, trimKey(i)
			}
		}
		t.Fatal("no forgotten key left")
		return 0, nil
	}
	if _, k := next(true); true {
		if ttl, ok := c.TTL(k); !ok || ttl <= 0 || ttl > time.Hour {
			t.Errorf("TTL of a key with a 1 h TTL: %v, %v", ttl, ok)
		}
	}
	if _, k := next(false); true {
		if ttl, ok := c.TTL(k); !ok || ttl >= 0 {
			t.Errorf("TTL of a key without one: %v, %v; want exists, none", ttl, ok)
		}
	}
	if _, k := next(false); true {
		if w := c.Where(k); w != "cold" {
			t.Errorf("TIER of a forgotten key: %q, want cold", w)
		}
	}
	if _, k := next(false); !c.Expire(k, 2*time.Hour) {
		t.Error("EXPIRE of a forgotten key found no key")
	} else if ttl, ok := c.TTL(k); !ok || ttl <= time.Hour {
		t.Errorf("after EXPIRE 2 h: TTL %v, %v", ttl, ok)
	}
	if _, k := next(true); !persist(c, k) {
		t.Error("PERSIST of a forgotten key with a TTL answered 0")
	} else if ttl, ok := c.TTL(k); !ok || ttl >= 0 {
		t.Errorf("after PERSIST: TTL %v, %v", ttl, ok)
	}
	if i, k := next(false); true {
		if ok, err := c.Set(k, trimValue(i, 1), SetOptions{NX: true}); ok || err != nil {
			t.Errorf("SET NX of a forgotten key: %v, %v; want refused", ok, err)
		}
	}
	if i, k := next(false); true {
		if ok, err := c.Set(k, trimValue(i, 1), SetOptions{XX: true}); !ok || err != nil {
			t.Errorf("SET XX of a forgotten key: %v, %v; want stored", ok, err)
		} else if v, ok, _ := c.Get(nil, k); !ok || !bytes.Equal(v, trimValue(i, 1)) {
			t.Errorf("after SET XX: %v %.20q", ok, v)
		}
	}
	if _, k := next(false); true {
		if got, _ := c.Delete(k); got != 1 {
			t.Errorf("DEL of a forgotten key: %d, want 1", got)
		}
		settle(t, c)
		if _, ok, err := c.Get(nil, k); ok || err != nil {
			t.Errorf("GET after DEL: %v, %v; want a miss", ok, err)
		}
	}
	// Each command above found the key in cold, lost it to the hook, and
	// must have looked again: the hook forgot it every time.
	if forced != commands {
		t.Errorf("the hook forgot %d keys between lookup and lock, want %d (one per command)", forced, commands)
	}
}

// TestDrainRewritesChangedExpiry (T17): in drain mode Close rewrites the
// cold copy of a key whose expiry Expire, Persist or GetEx changed while
// only cold held it, so the restart brings the new expiry back, not the
// one the copy was written with.
func TestDrainRewritesChangedExpiry(t *testing.T) {
	c, o := openTrimming(t, 200)
	defer func() { c.Close() }()
	const n = 1000
	fillTrimmed(t, c, n, 2, o.MaxKeys) // even keys: a TTL of 1 h
	var even, odd []int
	for i := 0; i < n; i++ {
		if inDirectory(c, trimKey(i)) {
			continue
		}
		if i%2 == 0 && len(even) < 2 {
			even = append(even, i)
		} else if i%2 == 1 && len(odd) < 2 {
			odd = append(odd, i)
		}
	}
	if len(even) < 2 || len(odd) < 2 {
		t.Fatalf("forgotten keys: %v even, %v odd", even, odd)
	}
	longer, persisted, given, givenEx := trimKey(even[0]), trimKey(even[1]), trimKey(odd[0]), trimKey(odd[1])
	if !c.Expire(longer, 3*time.Hour) || !persist(c, persisted) || !c.Expire(given, 2*time.Hour) {
		t.Fatal("Expire or Persist found no key")
	}
	if _, ok, err := c.GetEx(nil, givenEx, Expiry{TTL: 2 * time.Hour}); !ok || err != nil {
		t.Fatalf("GetEx: %v %v", ok, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	var err error
	if c, err = Open(o); err != nil {
		t.Fatal(err)
	}
	for _, k := range []struct {
		key      []byte
		min, max time.Duration // min < 0: no expiry
	}{
		{longer, 2 * time.Hour, 3 * time.Hour},
		{persisted, -1, -1},
		{given, time.Hour, 2 * time.Hour},
		{givenEx, time.Hour, 2 * time.Hour},
	} {
		ttl, ok := c.TTL(k.key)
		switch {
		case !ok:
			t.Errorf("%s: gone after the restart", k.key)
		case k.min < 0 && ttl >= 0:
			t.Errorf("%s: TTL %v after the restart, want none (PERSIST)", k.key, ttl)
		case k.min >= 0 && (ttl <= k.min || ttl > k.max):
			t.Errorf("%s: TTL %v after the restart, want in (%v, %v]", k.key, ttl, k.min, k.max)
		}
	}
}

// TestExpiryMovedOnColdCopy (T17): a key only cold holds keeps the expiry
// the directory has. Expire, Persist and GetEx do not rewrite the cold
// copy, so once the expiry it was written with has passed, the copy must
// still be served while the directory says the key lives.
func TestExpiryMovedOnColdCopy(t *testing.T) {
	clk := newFakeClock()
	c := openCold(t, func(o *Options) { o.Clock = clk.Now })
	idx := coldOnly(t, c, 400, 3, time.Hour)
	cold := [][]byte{trimKey(idx[0]), trimKey(idx[1]), trimKey(idx[2])}
	if !c.Expire(cold[0], 3*time.Hour) || !persist(c, cold[1]) {
		t.Fatal("Expire or Persist found no key")
	}
	if _, ok, err := c.GetEx(nil, cold[2], Expiry{TTL: 3 * time.Hour}); !ok || err != nil {
		t.Fatalf("GetEx: %v %v", ok, err)
	}
	clk.Advance(int64(2 * time.Hour)) // past the expiry the cold copies carry
	for j, k := range cold {
		v, ok, err := c.Get(nil, k)
		if err != nil || !ok || !bytes.Equal(v, trimValue(idx[j], 0)) {
			t.Errorf("%s, its expiry moved past the cold copy's: ok %v err %v %.20q", k, ok, err, v)
		}
	}
	if ttl, ok := c.TTL(cold[0]); !ok || ttl <= 0 || ttl > time.Hour {
		t.Errorf("TTL after 2 h of a key given 3 h: %v %v", ttl, ok)
	}
	if st := c.Stats(); st.Lost != 0 {
		t.Errorf("%d keys lost", st.Lost)
	}
	if _, ok, _ := c.Get(nil, trimKey(idx[2]+1)); ok {
		t.Errorf("%s, whose 1 h TTL passed, still reads", trimKey(idx[2]+1))
	}
}

// TestColdCopyCarriesTheExpiry (T17): a key that reaches cold through warm
// (whose copies carry no expiry) gets its entry's expiry in the cold
// record, so a forgotten key is adopted back with its TTL, and so is
// every key after a restart.
func TestColdCopyCarriesTheExpiry(t *testing.T) {
	needURing(t)
	o := restartOptions(t.TempDir(), DurabilityDrain)
	o.MaxKeys = 200
	c, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { c.Close() }()
	const n = 1000
	fillTrimmed(t, c, n, 1, o.MaxKeys) // every key: a TTL of 1 h
	check := func(when string) {
		t.Helper()
		bad := 0
		for i := 0; i < n; i++ {
			if ttl, ok := c.TTL(trimKey(i)); !ok || ttl <= 0 || ttl > time.Hour {
				if bad++; bad <= 5 {
					t.Errorf("%s: key %d: TTL %v, %v; want up to 1 h", when, i, ttl, ok)
				}
			}
		}
		if bad > 0 {
			t.Fatalf("%s: %d of %d keys without their TTL", when, bad, n)
		}
	}
	check("forgotten keys adopted back")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if c, err = Open(o); err != nil {
		t.Fatal(err)
	}
	check("after a restart")
}

// TestDrainDeletesExpiredColdCopies: in drain mode a key that expired
// after the last sweep, with only cold holding it, does not come back
// after a restart: Close sweeps before it drains.
func TestDrainDeletesExpiredColdCopies(t *testing.T) {
	needURing(t)
	clk := newFakeClock()
	o := smallOptions(clk) // sweeps once an hour: not during this test
	emuCold(&o, t.TempDir())
	o.Durability = DurabilityDrain
	c, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { c.Close() }()
	key := trimKey(coldOnly(t, c, 400, 1, 0)[0])
	if !c.Expire(key, time.Second) {
		t.Fatal("Expire found no key")
	}
	clk.Advance(int64(2 * time.Second))
	if _, ok, _ := c.Get(nil, key); ok {
		t.Fatal("the key reads after its TTL passed")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if c, err = Open(o); err != nil {
		t.Fatal(err)
	}
	if v, ok, _ := c.Get(nil, key); ok {
		t.Fatalf("an expired key came back after the restart: %.20q", v)
	}
}

// TestPastExpiryDeletesForgottenKey: SET with an expiry in the past
// deletes the key also when only cold holds it (forgotten, T15): it is
// adopted first, so its cold copy is deleted too, also across a restart.
func TestPastExpiryDeletesForgottenKey(t *testing.T) {
	c, o := openTrimming(t, 200)
	defer func() { c.Close() }()
	const n = 1000
	fillTrimmed(t, c, n, 0, o.MaxKeys)
	var keys [][]byte
	for i := 0; i < n && len(keys) < 2; i++ {
		if !inDirectory(c, trimKey(i)) {
			keys = append(keys, trimKey(i))
		}
	}
	if len(keys) < 2 {
		t.Fatalf("%d keys forgotten", len(keys))
	}
	for i, so := range []SetOptions{{ExpireAt: time.Unix(1, 0)}, {TTL: -1}} {
		if stored, err := c.Set(keys[i], []byte("x"), so); !stored || err != nil {
			t.Fatalf("Set %+v: %v %v", so, stored, err)
		}
	}
	check := func(when string) {
		t.Helper()
		for _, k := range keys {
			if v, ok, _ := c.Get(nil, k); ok {
				t.Fatalf("%s: %s, set with an expiry in the past, reads %.20q", when, k, v)
			}
		}
	}
	check("at once")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	var err error
	if c, err = Open(o); err != nil {
		t.Fatal(err)
	}
	check("after a restart")
}

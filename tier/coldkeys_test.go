package tier

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tiercache/tiercache/coldstore"
)

// coldKeysOptions is restartOptions (drain mode, the emulated store) with
// DRAM small enough that most of n keys of 200 bytes live in cold alone.
func coldKeysOptions(dir string) Options {
	o := restartOptions(dir, DurabilityDrain)
	o.HotBytes, o.WarmBytes = 64<<10, 256<<10
	return o
}

// checkColdKeys fails unless Keys (DBSIZE) and a whole Scan, with random
// COUNTs, give exactly the keys of model (T37), and the directory holds
// at most dirMax of them.
func checkColdKeys(t *testing.T, c *Cache, model map[string]bool, dirMax int64, r *rand.Rand) {
	t.Helper()
	settle(t, c)
	if got := c.Keys(); got != len(model) {
		t.Fatalf("T37: Keys = %d, want %d (directory %d, cold user keys %d, directory entries cold holds %d)",
			got, len(model), c.dir.keyCount(), coldUserKeys(c), c.dir.headerCount())
	}
	for _, count := range []int{1 + r.IntN(20), 1000} {
		seen := scanAll(t, c, count, nil)
		for k, n := range seen {
			if n != 1 || !model[k] {
				t.Fatalf("T37: Scan COUNT %d returned %q %d times; in the model: %v", count, k, n, model[k])
			}
		}
		if len(seen) != len(model) {
			t.Fatalf("T37: Scan COUNT %d returned %d keys, want %d", count, len(seen), len(model))
		}
	}
	if d := c.Stats().DirectoryKeys; d > dirMax {
		t.Fatalf("T37: the directory holds %d keys, want at most %d (keys only cold holds are forgotten)", d, dirMax)
	}
}

func coldUserKeys(c *Cache) int64 {
	if c.ks == nil {
		return -1
	}
	n, _ := c.ks.UserKeys()
	return n
}

// TestColdKeyspaceExact (T37): with the emulated store, the directory
// forgets keys only cold holds, and DBSIZE (Keys) and SCAN still give
// exactly the live keys: after writes, overwrites and deletes, after a
// restart (nothing touched yet: every key only in cold), and after
// overwrites, deletes and reads of those cold-only keys.
func TestColdKeyspaceExact(t *testing.T) {
	needURing(t)
	n := 20000
	if testing.Short() {
		n = 4000
	}
	dir := t.TempDir()
	c, err := Open(coldKeysOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if c.ks == nil || !c.forgetCold {
		t.Fatal("T37: the emulated cold store should count and walk its user keys, and the directory forget cold-only keys")
	}
	c.trimSlack = 0 // forget at this test's scale
	r := rand.New(rand.NewPCG(37, 1))
	model := map[string]bool{}
	val := make([]byte, 200)
	key := func(i int) []byte { return fmt.Appendf(nil, "key:%07d", i) }
	set := func(k []byte) {
		t.Helper()
		if _, err := c.Set(k, val, SetOptions{}); err != nil {
			t.Fatal(err)
		}
		model[string(k)] = true
	}
	del := func(k []byte) {
		t.Helper()
		if _, err := c.Delete(k); err != nil {
			t.Fatal(err)
		}
		delete(model, string(k))
	}
	for i := range n {
		set(key(i))
	}
	for range n / 10 {
		set(key(r.IntN(n)))
		del(key(r.IntN(n)))
	}
	dram := func() int64 { return 2*int64(c.Stats().DRAM.Items) + int64(n/100) }
	checkColdKeys(t, c, model, dram(), r)

	// A restart: every key is only in cold, the directory is empty.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if c, err = Open(coldKeysOptions(dir)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.trimSlack = 0
	if d := c.Stats().DirectoryKeys; d != 0 {
		t.Fatalf("the directory holds %d keys right after Open", d)
	}
	checkColdKeys(t, c, model, 0, r)

	// Touch the cold-only keys: overwrite, delete, read; add new ones.
	for range n / 10 {
		set(key(r.IntN(n)))
		del(key(r.IntN(n)))
		set(key(n + r.IntN(n)))
		if _, _, err := c.Get(nil, key(r.IntN(2*n))); err != nil {
			t.Fatal(err)
		}
	}
	checkColdKeys(t, c, model, dram(), r)
}

// TestColdKeyspaceScanWhileKeysMove (T37): while readers move keys
// between cold and DRAM (a read adopts a cold-only key and may promote
// it, which evicts others to cold, which forgets them), a whole scan
// returns every key exactly once.
func TestColdKeyspaceScanWhileKeysMove(t *testing.T) {
	needURing(t)
	n := 10000
	if testing.Short() {
		n = 3000
	}
	c, err := Open(coldKeysOptions(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.trimSlack = 0 // forget at this test's scale
	model := map[string]bool{}
	val := make([]byte, 200)
	for i := range n {
		k := fmt.Appendf(nil, "key:%07d", i)
		if _, err := c.Set(k, val, SetOptions{}); err != nil {
			t.Fatal(err)
		}
		model[string(k)] = true
	}
	settle(t, c)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 2))
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, _, err := c.Get(nil, fmt.Appendf(nil, "key:%07d", r.IntN(n))); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	r := rand.New(rand.NewPCG(3, 4))
	for round := range 3 {
		seen := scanAll(t, c, 1+r.IntN(50), nil)
		for k, m := range seen {
			if m != 1 || !model[k] {
				close(stop)
				wg.Wait()
				t.Fatalf("round %d: %q returned %d times, in the model %v", round, k, m, model[k])
			}
		}
		if len(seen) != n {
			missing := 0
			for k := range model {
				if seen[k] == 0 {
					missing++
				}
			}
			close(stop)
			wg.Wait()
			t.Fatalf("round %d: %d keys returned, %d missing", round, len(seen), missing)
		}
	}
	close(stop)
	wg.Wait()
	if got := c.Stats().Adopted; got == 0 {
		t.Fatalf("no key was adopted from cold while the scans ran: the test moved nothing")
	}
}

// TestColdKeyspaceMillionAfterRestart (T37, issue 21): a million keys only
// cold holds, after a restart with nothing touched: Keys (DBSIZE), a whole
// Scan (SCAN ... COUNT 1000) and one that takes everything in each call
// (KEYS *) give exactly the keys written, each once. -short: 50,000.
func TestColdKeyspaceMillionAfterRestart(t *testing.T) {
	needURing(t)
	n := 1_000_000
	if testing.Short() {
		n = 50_000
	}
	if s := os.Getenv("TIERCACHE_TEST_KEYS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	t0 := time.Now()
	dir := t.TempDir()
	o := coldKeysOptions(dir)
	emuCold(&o, dir, func(c *coldstore.Config) { c.Capacity, c.RegionBytes = 1<<30, 4<<20 })
	c, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	key := func(i int) []byte { return fmt.Appendf(nil, "k%07d", i) }
	val := []byte("v0123456789abcdef")
	kvs := make([][2][]byte, 0, 1000)
	for i := 0; i < n; i += 1000 {
		kvs = kvs[:0]
		for j := i; j < min(i+1000, n); j++ {
			kvs = append(kvs, [2][]byte{key(j), val})
		}
		if err := c.MSet(kvs); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d keys written and the cache closed in %v", n, time.Since(t0))
	if c, err = Open(o); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if d := c.Stats().DirectoryKeys; d != 0 {
		t.Fatalf("the directory holds %d keys right after Open", d)
	}
	if got := c.Keys(); got != n {
		t.Fatalf("Keys (DBSIZE) after the restart = %d, want %d", got, n)
	}
	for _, count := range []int{1000, math.MaxInt} {
		seen := make([]bool, n)
		total := 0
		for cur := uint64(0); ; {
			next, keys := c.Scan(cur, count, nil)
			for _, k := range keys {
				var i int
				if _, err := fmt.Sscanf(string(k), "k%07d", &i); err != nil || i < 0 || i >= n || string(key(i)) != string(k) {
					t.Fatalf("COUNT %d: a key that was never written: %q", count, k)
				}
				if seen[i] {
					t.Fatalf("COUNT %d: %q returned twice", count, k)
				}
				seen[i] = true
				total++
			}
			if next == 0 {
				break
			}
			cur = next
		}
		if total != n {
			t.Fatalf("COUNT %d: a whole scan returned %d keys, want %d", count, total, n)
		}
		t.Logf("COUNT %d: a whole scan in %v", count, time.Since(t0))
		t0 = time.Now()
	}
}

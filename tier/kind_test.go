package tier

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
)

// kindHash stands for an aggregate kind of the layer above.
const kindHash Kind = 3

// TestKindTravelsThroughTiersAndRestarts checks T23: a key's kind comes back
// with its value from every tier, and from cold after a restart (the cold
// record's flags), and the string reads refuse a key of another kind
// without changing it.
func TestKindTravelsThroughTiersAndRestarts(t *testing.T) {
	needURing(t)
	dir := t.TempDir()
	c, err := Open(restartOptions(dir, DurabilityDrain))
	if err != nil {
		t.Fatal(err)
	}
	const n = 1200 // more than hot and warm hold: some reach cold before Close
	val := func(i int) []byte { return []byte(fmt.Sprintf("value-%d-%0900d", i, i)) }
	kindOf := func(i int) Kind { return Kind(i % 2 * int(kindHash)) }
	for i := 0; i < n; i++ {
		if _, err := c.Set([]byte("k"+strconv.Itoa(i)), val(i), SetOptions{Kind: kindOf(i)}); err != nil {
			t.Fatal(err)
		}
	}
	check := func(c *Cache, when string) {
		t.Helper()
		keys := make([][]byte, n)
		for i := range keys {
			keys[i] = []byte("k" + strconv.Itoa(i))
		}
		mg, err := c.MGet(keys)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			key := keys[i]
			v, k, _, ok, _, err := c.ViewAny(nil, key)
			if err != nil || !ok || string(v) != string(val(i)) || k != kindOf(i) {
				t.Fatalf("%s: ViewAny(%s) = %.20q kind %d ok %v err %v, want kind %d", when, key, v, k, ok, err, kindOf(i))
			}
			if k, ok := c.KindOf(key); !ok || k != kindOf(i) {
				t.Fatalf("%s: KindOf(%s) = %d %v", when, key, k, ok)
			}
			_, _, err = c.Get(nil, key)
			_, _, gerr := c.GetDel(nil, key)
			if kindOf(i) == KindString {
				if err != nil || string(mg[i]) != string(val(i)) {
					t.Fatalf("%s: Get(%s) err %v, MGet %.20q", when, key, err, mg[i])
				}
				if gerr != nil {
					t.Fatal(gerr)
				}
				if _, err := c.Set(key, val(i), SetOptions{}); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if !errors.Is(err, ErrWrongKind) || !errors.Is(gerr, ErrWrongKind) || mg[i] != nil {
				t.Fatalf("%s: string reads of a key of kind %d: Get err %v, GetDel err %v, MGet %.20q", when, k, err, gerr, mg[i])
			}
			if _, _, _, err := c.SetGet(nil, key, []byte("x"), SetOptions{}); !errors.Is(err, ErrWrongKind) {
				t.Fatalf("%s: SetGet on kind %d: %v", when, k, err)
			}
		}
	}
	check(c, "before restart")
	if st := c.Stats(); st.Tiers[2].Items == 0 {
		t.Fatalf("no key reached cold: %+v", st.Tiers)
	}
	c = reopenDrain(t, c, dir)
	check(c, "after restart")
}

// TestUpdateIsAtomic checks T24: concurrent Updates of one key never lose
// one another's change, an Update racing plain Sets applies to the value
// it saw, and an Update whose function fails changes nothing.
func TestUpdateIsAtomic(t *testing.T) {
	c := openCold(t, nil)
	key := []byte("counter")
	const workers, each = 8, 300
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if err := c.Update(key, incrCounter); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	// Plain writes of other keys in the same stripes, and of the key's
	// neighbour, race the Updates.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 2000; i++ {
			c.Set([]byte("other"+strconv.Itoa(i%50)), []byte("v"), SetOptions{})
		}
	}()
	wg.Wait()
	v, ok, err := c.Get(nil, key)
	if err != nil || !ok || string(v) != strconv.Itoa(workers*each) {
		t.Fatalf("counter = %q %v %v, want %d", v, ok, err, workers*each)
	}

	// A failing function changes nothing, also for a key of another kind.
	boom := errors.New("boom")
	if err := c.Update(key, func(Current) (Change, error) { return Change{}, boom }); !errors.Is(err, boom) {
		t.Fatalf("Update error = %v", err)
	}
	if v, _, _ := c.Get(nil, key); string(v) != strconv.Itoa(workers*each) {
		t.Fatalf("after a failed Update: %q", v)
	}

	// Store keeps the expiry, sets the kind; Remove deletes.
	if _, err := c.Set([]byte("h"), []byte("a"), SetOptions{TTL: 1 << 40}); err != nil {
		t.Fatal(err)
	}
	if err := c.Update([]byte("h"), func(cur Current) (Change, error) {
		return Change{Op: Store, Value: append(append([]byte(nil), cur.Value...), 'b'), Kind: kindHash}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if v, k, _, ok, _, _ := c.ViewAny(nil, []byte("h")); !ok || string(v) != "ab" || k != kindHash {
		t.Fatalf("after Store: %q kind %d ok %v", v, k, ok)
	}
	if ttl, ok := c.TTL([]byte("h")); !ok || ttl <= 0 {
		t.Fatalf("Store lost the expiry: %v %v", ttl, ok)
	}
	if err := c.Update([]byte("h"), func(Current) (Change, error) { return Change{Op: Remove}, nil }); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.KindOf([]byte("h")); ok {
		t.Fatal("Remove left the key")
	}
	checkEntries(t, c, -1)
}

// TestUpdatesInPlaceAndGeneralAreAtomic is T24 with both of Update's
// paths at once: counters incremented from several goroutines while a
// writer of 8 KiB values to other keys pushes them out of DRAM (flushing,
// cold: the general path, under the stripe's lock) and Updates bring them
// back (in place, under the shard lock alone): no increment is lost. (Of
// eight runs, four read a counter from cold at least once.)
func TestUpdatesInPlaceAndGeneralAreAtomic(t *testing.T) {
	c := openCold(t, nil)
	const workers, each, counters = 4, 400, 4
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				if err := c.Update([]byte(fmt.Sprint("counter", (w+i)%counters)), incrCounter); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	big := bytes.Repeat([]byte("v"), 8<<10)
	wg.Go(func() {
		for i := range 1500 {
			if _, err := c.Set([]byte(fmt.Sprint("big", i)), big, SetOptions{}); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Wait()
	total := 0
	for i := range counters {
		v, ok, err := c.Get(nil, []byte(fmt.Sprint("counter", i)))
		n, _ := strconv.Atoi(string(v))
		if err != nil || !ok {
			t.Fatalf("counter%d: %v %v", i, ok, err)
		}
		total += n
	}
	if total != workers*each {
		t.Fatalf("the counters add up to %d, want %d", total, workers*each)
	}
}

// incrCounter is an Update function that adds 1 to a decimal counter.
func incrCounter(cur Current) (Change, error) {
	n := 0
	if cur.Exists {
		var err error
		if n, err = strconv.Atoi(string(cur.Value)); err != nil {
			return Change{}, err
		}
	}
	return Change{Op: Store, Value: []byte(strconv.Itoa(n + 1))}, nil
}

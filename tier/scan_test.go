package tier

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// scanAll runs a whole scan and counts how often each key came back.
func scanAll(t *testing.T, c *Cache, count int, match func(string, Kind) bool) map[string]int {
	t.Helper()
	seen := map[string]int{}
	cursor, calls := uint64(0), 0
	for {
		next, keys := c.Scan(cursor, count, match)
		for _, k := range keys {
			seen[string(k)]++
		}
		calls++
		if next == 0 {
			return seen
		}
		if next <= cursor || calls > 1<<22 {
			t.Fatalf("cursor went from %d to %d after %d calls", cursor, next, calls)
		}
		cursor = next
	}
}

// TestScan (T13): a whole scan returns each live key exactly once, never a
// deleted or expired one, filters with match, and stays exact while
// writers add and remove other keys.
func TestScan(t *testing.T) {
	clk := newFakeClock()
	o := smallOptions(clk)
	// No cold tier: a key the LFU evicts is dropped (and rightly no longer
	// listed); writers under CPU load must not drop keys DRAM has room for.
	c, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 0; i < 3000; i++ {
		c.Set([]byte(fmt.Sprint("k", i)), []byte("v"), SetOptions{})
	}
	for i := 0; i < 3000; i += 3 {
		c.Delete([]byte(fmt.Sprint("k", i)))
	}
	for i := 0; i < 200; i++ {
		c.Set([]byte(fmt.Sprint("e", i)), []byte("v"), SetOptions{TTL: time.Second})
	}
	clk.Advance(int64(2 * time.Second))
	want := func(i int) bool { return i%3 != 0 }
	for _, count := range []int{1, 10, 100000} {
		seen := scanAll(t, c, count, nil)
		for i := 0; i < 3000; i++ {
			k := fmt.Sprint("k", i)
			if n := seen[k]; (n == 1) != want(i) || n > 1 {
				t.Fatalf("count %d: %s returned %d times", count, k, n)
			}
		}
		if len(seen) != 2000 {
			t.Fatalf("count %d: %d keys, want 2000 (no deleted or expired ones)", count, len(seen))
		}
	}
	seen := scanAll(t, c, 10, func(k string, _ Kind) bool { return strings.HasSuffix(k, "7") })
	if len(seen) != 200 {
		t.Fatalf("match: %d keys ending in 7, want 200", len(seen))
	}
	// match is given each key's kind (SCAN ... TYPE).
	for i := 0; i < 50; i++ {
		if _, err := c.Set(fmt.Appendf(nil, "kind%d", i), []byte("x"), SetOptions{Kind: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if seen := scanAll(t, c, 10, func(_ string, k Kind) bool { return k == 1 }); len(seen) != 50 {
		t.Fatalf("match by kind: %d keys of kind 1, want 50", len(seen))
	}
	if next, keys := c.Scan(scanEnd+5, 10, nil); next != 0 || len(keys) != 0 {
		t.Fatalf("cursor past the end: %d, %d keys", next, len(keys))
	}

	// Writers churn other keys during a scan: the stable keys are still
	// returned exactly once. The churn is bounded: there is no cold tier
	// here, and warm is a FIFO log, so endless rewrites would in the end
	// push the stable keys out of the cache.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 3000; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := []byte(fmt.Sprint("churn", w, "-", i%500))
				if i%2 == 0 {
					c.Set(k, []byte("x"), SetOptions{})
				} else {
					c.Delete(k)
				}
			}
		}()
	}
	for r := 0; r < 5; r++ {
		seen := scanAll(t, c, 7, func(k string, _ Kind) bool { return strings.HasPrefix(k, "k") })
		for i := 0; i < 3000; i++ {
			if n := seen[fmt.Sprint("k", i)]; (n == 1) != want(i) || n > 1 {
				st := c.Stats()
				t.Fatalf("with writers: k%d returned %d times (lost %d, tiers %+v)", i, n, st.Lost, st.Tiers)
			}
		}
	}
	close(stop)
	wg.Wait()

	c.Close()
	if next, keys := c.Scan(0, 10, nil); next != 0 || keys != nil {
		t.Fatalf("closed cache: %d, %d keys", next, len(keys))
	}
}

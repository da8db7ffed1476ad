package tier

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/flusher"
)

// dramFit is how many values of size bytes the given share of the DRAM
// tiers' capacity holds.
func dramFit(c *Cache, size int, share float64) int {
	return int(float64(c.mem.capacity())*share) / size
}

// writeFresh sets keys fresh0..fresh<n-1> to freshValue once each.
func writeFresh(t *testing.T, c *Cache, n, size int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if _, err := c.Set([]byte(fmt.Sprint("fresh", i)), freshValue(i, size), SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	settle(t, c)
}

// freshValue is a distinct value of n bytes for key i.
func freshValue(i, n int) []byte {
	v := make([]byte, n)
	copy(v, fmt.Sprintf("fresh-%06d-", i))
	return v
}

// TestFreshWritesStayWhileDRAMHasRoom: with no cold tier, keys written once
// and never read fill hot, then warm; none is lost while warm has room
// (issue: hot victims the policy had seen fewer than DemoteHits times were
// dropped instead of taking warm's free space).
func TestFreshWritesStayWhileDRAMHasRoom(t *testing.T) {
	o := smallOptions(newFakeClock()) // hot 64 KiB, warm 512 KiB in 64 KiB segments, no cold
	c, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const size = 4 << 10
	n := dramFit(c, size, 0.5) // hot and half of warm
	writeFresh(t, c, n, size)
	missing := 0
	for i := 0; i < n; i++ {
		v, ok, err := c.Get(nil, []byte(fmt.Sprint("fresh", i)))
		if err != nil || !ok || string(v[:13]) != string(freshValue(i, size)[:13]) {
			missing++
		}
	}
	if st := c.Stats(); missing > 0 {
		t.Fatalf("%d of %d keys written once are gone while DRAM had room (lost %d, warm items %d)",
			missing, n, st.Lost, st.Tiers[1].Items)
	}
}

// brokenCold is a cold store whose writes all fail, as a store that turned
// read-only after ENOSPC: it reports the write error in its Stats.
type brokenCold struct{}

var errBrokenCold = errors.New("test: cold store is read-only")

func (brokenCold) PutMany(ctx context.Context, items []*flusher.Item) error { return errBrokenCold }
func (brokenCold) Delete(ctx context.Context, key []byte) error             { return errBrokenCold }
func (brokenCold) Get(ctx context.Context, dst, key []byte, size int) ([]byte, backend.Meta, bool, error) {
	return dst, backend.Meta{}, false, nil
}
func (brokenCold) GetMany(ctx context.Context, keys [][]byte, sizes []int, dsts [][]byte) []backend.Result {
	return make([]backend.Result, len(keys))
}
func (brokenCold) Floor(ctx context.Context) (uint64, error) { return 0, nil }
func (brokenCold) SetFloor(ctx context.Context, floor uint64) error {
	return errBrokenCold
}
func (brokenCold) Stats() backend.Stats {
	return backend.Stats{Backend: "broken", Items: -1, MaxValue: 8 << 20, WriteError: errBrokenCold}
}
func (brokenCold) Close() error { return nil }

// TestNewestWritesKeptWhenColdUnwritable: in cache mode on a cold store
// that takes no writes, DRAM keeps the newest keys (warm evicts the
// oldest), as it would with no cold tier (issue: fresh hot victims skipped
// warm for a cold tier that could not take them, and 7 of the newest 200
// survived).
func TestNewestWritesKeptWhenColdUnwritable(t *testing.T) {
	o := smallOptions(newFakeClock())
	o.OpenCold = func(backend.Params) (backend.Store, error) { return brokenCold{}, nil }
	c, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const size = 4 << 10
	fit := dramFit(c, size, 1)
	n := 3 * fit
	writeFresh(t, c, n, size)
	newest := fit / 3
	missing := 0
	for i := n - newest; i < n; i++ {
		if _, ok, _ := c.Get(nil, []byte(fmt.Sprint("fresh", i))); !ok {
			missing++
		}
	}
	if st := c.Stats(); missing > 0 {
		t.Fatalf("%d of the newest %d keys are gone (DRAM holds about %d; lost %d, warm items %d)",
			missing, newest, fit, st.Lost, st.Tiers[1].Items)
	}
}

// TestPromotionLeavesWarm (T22): a warm hit the promotion policy deems
// frequent moves to hot, so DRAM holds the key once, and it still reads;
// pushed out of hot again, it goes back to warm.
func TestPromotionLeavesWarm(t *testing.T) {
	c, key, idx := warmKey(t)
	const size = warmKeySize
	warmBefore := c.Stats().Tiers[1].Items
	for i := 0; i < 4 && c.Where(key) != "hot"; i++ {
		if _, ok, _ := c.Get(nil, key); !ok {
			t.Fatalf("%s does not read", key)
		}
	}
	if w := c.Where(key); w != "hot" {
		t.Fatalf("%s read 4 times is in %q, not promoted to hot", key, w)
	}
	if st := c.Stats(); st.Tiers[1].Items != warmBefore-1 {
		t.Fatalf("%s was promoted to hot, yet warm holds %d records, not %d", key, st.Tiers[1].Items, warmBefore-1)
	}
	if v, ok, _ := c.Get(nil, key); !ok || string(v) != string(freshValue(idx, size)) {
		t.Fatalf("%s after promotion: %v, %d bytes", key, ok, len(v))
	}
	// Push it out of hot with new keys: it goes back to warm, not away.
	n := int(c.o.HotBytes) / size
	for i := 0; i < 2*n; i++ {
		if _, err := c.Set([]byte(fmt.Sprint("push", i)), freshValue(i, size), SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	settle(t, c)
	if w := c.Where(key); w != "warm" && w != "hot" {
		t.Fatalf("%s is %q after hot was pushed out: %+v", key, w, c.Stats())
	}
}

// warmKey opens a cache without a cold tier, fills hot and half of warm
// with 1 KiB values and returns a key that hot pushed out to warm, with
// its index.
func warmKey(t *testing.T) (*Cache, []byte, int) {
	t.Helper()
	c, err := Open(smallOptions(newFakeClock()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	n := dramFit(c, warmKeySize, 0.5)
	writeFresh(t, c, n, warmKeySize)
	for i := 0; i < n; i++ {
		if k := []byte(fmt.Sprint("fresh", i)); c.Where(k) == "warm" {
			return c, k, i
		}
	}
	t.Fatalf("no key reached warm: %+v", c.Stats())
	return nil, nil, 0
}

// warmKeySize is the value size warmKey writes.
const warmKeySize = 1 << 10

// TestPromotionOutranksDemoted (T56): a warm hit moves to hot only while
// the LFU counts its key more often than the records hot's cleaning
// demoted lately; the cleaning keeps that average.
func TestPromotionOutranksDemoted(t *testing.T) {
	c, key, _ := warmKey(t)
	c.mem.mu.Lock()
	demoted := c.mem.demotedFreq
	c.mem.demotedFreq = 15 * demotedScale // no count passes it
	c.mem.mu.Unlock()
	if demoted <= 0 {
		t.Fatalf("hot demoted records to warm, yet their average count is %d", demoted)
	}
	for i := 0; i < 8; i++ {
		if _, ok, _ := c.Get(nil, key); !ok {
			t.Fatalf("%s does not read", key)
		}
	}
	if w := c.Where(key); w != "warm" {
		t.Fatalf("%s read 8 times with no count above the demoted ones' is in %q, not warm", key, w)
	}
	c.mem.mu.Lock()
	c.mem.demotedFreq = 0
	c.mem.mu.Unlock()
	if _, ok, _ := c.Get(nil, key); !ok {
		t.Fatalf("%s does not read", key)
	}
	if w := c.Where(key); w != "hot" {
		t.Fatalf("%s read again, counted above the demoted ones, is in %q, not hot", key, w)
	}
}

// TestPromotionWhileHotHasRoom (T56): the bar holds only while hot has no
// segment to spare: once its keys are deleted, hot demotes nothing, and a
// warm hit moves up however often the records it demoted earlier were
// read (the average of those is not renewed while hot has room).
func TestPromotionWhileHotHasRoom(t *testing.T) {
	c, key, _ := warmKey(t)
	c.mem.mu.Lock()
	c.mem.demotedFreq = 14 * demotedScale // the records demoted lately were read often
	c.mem.mu.Unlock()
	var hot [][]byte
	for i := 0; i < dramFit(c, warmKeySize, 0.5); i++ {
		if k := []byte(fmt.Sprint("fresh", i)); c.Where(k) == "hot" {
			hot = append(hot, k)
		}
	}
	if n, err := c.Delete(hot...); err != nil || n != len(hot) || n == 0 {
		t.Fatalf("deleted %d of the %d keys in hot: %v", n, len(hot), err)
	}
	c.mem.mu.Lock()
	free := c.mem.logs[memHot].FreeSegments()
	c.mem.mu.Unlock()
	if free <= writerKeep {
		t.Fatalf("hot holds %d free segments with its keys deleted", free)
	}
	for i := 0; i < 4 && c.Where(key) != "hot"; i++ {
		if _, ok, _ := c.Get(nil, key); !ok {
			t.Fatalf("%s does not read", key)
		}
	}
	if w := c.Where(key); w != "hot" {
		t.Fatalf("%s read 4 times while hot has %d free segments is in %q, not hot", key, free, w)
	}
}

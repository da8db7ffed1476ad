package tier

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// TestMemoryUsageIsMeasured is T51: MemoryUsage's figures, added up over
// many keys, are within a quarter (above) or a tenth (below) of the DRAM
// the keys were measured to take: the Go heap's growth and the bytes of
// hot's log, for keys whose values the hot log holds (with an expiry
// and without) and for keys whose values are live structures; a longer
// key costs more; an absent key does not exist.
func TestMemoryUsageIsMeasured(t *testing.T) {
	for _, tc := range []struct{ live, ttl bool }{{false, false}, {false, true}, {true, false}} {
		live := tc.live
		t.Run(fmt.Sprint("live=", live, "/ttl=", tc.ttl), func(t *testing.T) {
			n := 20_000
			if tc.ttl { // the expiry index's heads and first chunk, 6 KiB a shard, are no key's: make them a small share
				n = 200_000
			}
			o := smallOptions(newFakeClock())
			o.HotBytes, o.HotMaxValue, o.WarmBytes = 64<<20, 4<<10, 0
			before := heapInUse()
			c, err := Open(o)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			opened, logBefore := heapInUse(), c.Stats().Tiers[0].Bytes
			val := make([]byte, 100)
			key := func(i int) []byte { return fmt.Appendf(nil, "user:%011d", i) } // 16 bytes
			put := func(k []byte) {
				if !live {
					o := SetOptions{}
					if tc.ttl {
						o.TTL = time.Hour
					}
					if _, err := c.Set(k, val, o); err != nil {
						t.Fatal(err)
					}
					return
				}
				for j := range 8 {
					if err := editPush(c, k, val[:10+j]); err != nil {
						t.Fatal(err)
					}
				}
			}
			for i := range n {
				put(key(i))
			}
			settle(t, c)
			heap, logged := heapInUse()-opened, c.Stats().Tiers[0].Bytes-logBefore
			measured := heap + logged
			if live { // hot's figure counts the live structures' heap it is charged
				measured = heap
			}
			var sum int64
			for i := range n {
				u, ok := c.MemoryUsage(key(i))
				if !ok {
					t.Fatalf("%s does not exist", key(i))
				}
				sum += u
			}
			runtime.KeepAlive(c)
			t.Logf("%d keys: MemoryUsage adds up to %d, measured %d: heap %d, hot %d (ratio %.3f; the cache itself took %d)", n, sum, measured, heap, logged, float64(sum)/float64(measured), opened-before)
			if sum > measured*5/4 || sum < measured*9/10 {
				t.Fatalf("MemoryUsage adds up to %d for DRAM measured at %d", sum, measured)
			}
			short, _ := c.MemoryUsage(key(0))
			put([]byte("user:" + string(make([]byte, 40))))
			if long, ok := c.MemoryUsage([]byte("user:" + string(make([]byte, 40)))); !ok || long <= short {
				t.Fatalf("a 45-byte key: %d %v, a 16-byte one %d", long, ok, short)
			}
			if _, ok := c.MemoryUsage([]byte("absent")); ok {
				t.Fatal("an absent key exists")
			}
		})
	}
}

// TestMemoryUsageOfAColdKey (T51): a key whose value only the emulated
// cold store holds costs its directory entry and its index entry there,
// not its value.
func TestMemoryUsageOfAColdKey(t *testing.T) {
	needURing(t)
	o := smallOptions(newFakeClock())
	o.HotMaxValue, o.WarmBytes = 1<<10, 0 // the value goes straight to cold
	o.Promotion.Disabled = true
	emuCold(&o, t.TempDir())
	c := openWith(t, o)
	val := make([]byte, 2000)
	if _, err := c.Set([]byte("cold:1"), val, SetOptions{}); err != nil {
		t.Fatal(err)
	}
	settle(t, c)
	if w := c.Where([]byte("cold:1")); w != "cold" {
		t.Fatalf("the key is in %q, not cold alone", w)
	}
	if n, ok := c.MemoryUsage([]byte("cold:1")); !ok || n != DirEntryBytes+ColdIndexBytes {
		t.Fatalf("a key only cold holds: %d %v, want its entry and index, %d", n, ok, DirEntryBytes+ColdIndexBytes)
	}
}

package tier

import (
	"fmt"
	"runtime"
	"testing"
)

// heapInUse is the live Go heap after two collections.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestDirectoryCostCoversHeap: a directory entry of a key of up to 16
// bytes takes at most DirEntryBytes of Go heap, map slot included.
func TestDirectoryCostCoversHeap(t *testing.T) {
	const n = 200_000
	before := heapInUse()
	d := newDirectory()
	for i := 0; i < n; i++ {
		key := []byte(fmt.Sprintf("user:%011d", i)) // 16 bytes
		lo, _ := hashKey(key)
		e, ks := newEntry(key)
		e.ver = 1
		d.shard(lo).m[ks] = e
	}
	per := float64(heapInUse()-before) / n
	runtime.KeepAlive(d)
	t.Logf("directory: %.1f bytes of heap per key (DirEntryBytes %d)", per, DirEntryBytes)
	if per > DirEntryBytes {
		t.Fatalf("a directory entry takes %.1f bytes of heap, more than DirEntryBytes %d", per, DirEntryBytes)
	}
}

// TestHotCostCoversHeap: the heap the hot tier holds, measured, is at most
// what its items' costs charge to the hot budget, for small and large
// values: the budget the user sets is the heap hot takes.
func TestHotCostCoversHeap(t *testing.T) {
	for _, size := range []int{10, 100, 1000, 1536, 4096, 16 << 10} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			o := smallOptions(newFakeClock())
			o.HotBytes, o.HotMaxValue, o.HotCounters = 64<<20, 64<<10, 100_000
			o.WarmBytes = 0
			before := heapInUse()
			c, err := Open(o)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			n := int(o.HotBytes / 2 / int64(size+hotOverhead))
			val := make([]byte, size)
			for i := 0; i < n; i++ {
				if _, err := c.Set([]byte(fmt.Sprintf("k%07d", i)), val, SetOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			c.hot.rc.Wait()
			heap := heapInUse() - before
			st := c.Stats()
			charged := st.Tiers[0].Bytes + sketchBytes(o.HotCounters) + c.Memory().DirectoryBytes
			t.Logf("%d items of %d bytes: heap %d, charged %d (hot %d, sketch %d, directory %d): %.2f",
				st.Tiers[0].Items, size, heap, charged, st.Tiers[0].Bytes, sketchBytes(o.HotCounters),
				c.Memory().DirectoryBytes, float64(heap)/float64(charged))
			if st.Tiers[0].Items < int64(n)*9/10 {
				t.Fatalf("hot holds %d of %d items", st.Tiers[0].Items, n)
			}
			// The promotion sketch and the cache's fixed structures come
			// on top of the items; they are part of the heap slack.
			if heap > charged+heapSlack/2 {
				t.Fatalf("hot takes %d bytes of heap, %d more than its items, sketch and directory are charged",
					heap, heap-charged)
			}
		})
	}
}

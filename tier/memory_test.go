package tier

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// heapInUse is the live Go heap after two collections.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestDirectoryCostCoversHeap: a key of up to 16 bytes held in DRAM takes
// at most DirEntryBytes of Go heap in all: its entry, map slot, DRAM
// segment owner slot and share of the LFU's sketch; a key with an expiry
// adds its slot in the expiry index (16 bytes, and the chunks' and heads'
// share, Memory.ExpiryIndexBytes, T55).
func TestDirectoryCostCoversHeap(t *testing.T) {
	for _, ttl := range []time.Duration{0, time.Hour} {
		t.Run(fmt.Sprint("ttl=", ttl), func(t *testing.T) {
			const n = 200_000
			o := smallOptions(newFakeClock())
			o.HotBytes, o.HotMaxValue, o.WarmBytes = 16<<20, 4<<10, 0
			before := heapInUse()
			c, err := Open(o)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			val := make([]byte, 16)
			for i := 0; i < n; i++ {
				if _, err := c.Set([]byte(fmt.Sprintf("user:%011d", i)), val, SetOptions{TTL: ttl}); err != nil { // 16 bytes
					t.Fatal(err)
				}
			}
			settle(t, c)
			if st := c.Stats(); st.Tiers[0].Items != n {
				t.Fatalf("hot holds %d of %d keys", st.Tiers[0].Items, n)
			}
			per := float64(heapInUse()-before) / n
			idx := float64(c.Memory().ExpiryIndexBytes) / n
			runtime.KeepAlive(c)
			t.Logf("directory: %.1f bytes of heap per key (DirEntryBytes %d), %.1f of them the expiry index's", per, DirEntryBytes, idx)
			if per > DirEntryBytes+idx {
				t.Fatalf("a key takes %.1f bytes of heap, more than DirEntryBytes %d and the expiry index's %.1f", per, DirEntryBytes, idx)
			}
			// 16 bytes a key with an expiry, and at most a chunk's rounding
			// and the heads (with the index's header) a shard.
			if limit := float64(16*n+shardCount*(16*idxChunk+4<<10)) / n; ttl == 0 && idx != 0 || idx > limit {
				t.Fatalf("the expiry index takes %.1f bytes a key, more than %.1f", idx, limit)
			}
		})
	}
}

// TestValuesLiveOffHeap (T19): the values of the DRAM tiers are not on the
// Go heap: filling hot and warm with values from 10 bytes to 16 KiB grows
// the heap by no more than the directory's cost for the keys held.
func TestValuesLiveOffHeap(t *testing.T) {
	for _, size := range []int{10, 100, 1000, 1536, 4096, 16 << 10} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			o := smallOptions(newFakeClock())
			o.HotBytes, o.HotMaxValue, o.WarmBytes, o.WarmSegmentBytes = 32<<20, 64<<10, 32<<20, 512<<10
			o.WarmArena.NoPrefault = true
			before := heapInUse()
			c, err := Open(o)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			n := min(int(c.mem.capacity()/int64(8+size)), 300_000) // an item weighs its key and value
			val := make([]byte, size)
			for i := 0; i < n; i++ {
				if _, err := c.Set([]byte(fmt.Sprintf("k%07d", i)), val, SetOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			settle(t, c)
			heap := heapInUse() - before
			st := c.Stats()
			held := st.Tiers[0].Items + st.Tiers[1].Items
			charged := held * DirEntryBytes
			t.Logf("%d of %d values of %d bytes in DRAM (%d B): heap %d, directory charged %d",
				held, n, size, st.Tiers[0].Bytes+st.Tiers[1].Bytes, heap, charged)
			if held < int64(n)*9/10 {
				t.Fatalf("DRAM holds %d of %d values that fit its capacity", held, n)
			}
			if heap > charged+heapSlack {
				t.Fatalf("the heap grew by %d bytes for %d keys whose directory is charged %d: values on the heap?",
					heap, held, charged)
			}
		})
	}
}

// TestHeapBudgetLeavesSlack (T19): what an open cache holds on the heap
// before any key, its policies' sketches above all (32 MiB for 1 GiB of
// DRAM), is inside HeapBudget, so the collector keeps its slack to work
// in however large the DRAM budget: a sketch left out would eat half the
// room, and the collector would run twice as often under a memory limit
// set to the budget. The slack grows with what the heap holds
// (heapHeadroom), so the room does too.
func TestHeapBudgetLeavesSlack(t *testing.T) {
	for _, dram := range []int64{64 << 20, 1 << 30} {
		t.Run(fmt.Sprint(dram>>20, "MiB"), func(t *testing.T) {
			o := smallOptions(newFakeClock())
			o.HotBytes, o.WarmBytes = dram, 0
			before := heapInUse()
			c, err := Open(o)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			held := heapInUse() - before
			m := c.Memory()
			room, want := m.HeapBudget-held, slack(o.HotBytes, o.WarmBytes, m.DirectoryBytes+m.FlusherBytes+m.SketchBytes+m.RemoteBytes)*9/10
			t.Logf("DRAM %d MiB: heap held %d KiB (sketch %d KiB), budget %d KiB, room %d KiB", dram>>20, held>>10, m.SketchBytes>>10, m.HeapBudget>>10, room>>10)
			if room < want {
				t.Fatalf("the budget leaves %d KiB beyond the heap an empty cache holds, want at least %d (9/10 of the slack)", room>>10, want>>10)
			}
		})
	}
}

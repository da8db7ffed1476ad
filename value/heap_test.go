package value

import (
	"runtime"
	"testing"
)

// TestAllocSizeIsWhatTheHeapTakes: AllocSize agrees with growslice's
// rounding at every size up to a few pages, and with the heap's growth
// for many allocations of one size.
func TestAllocSizeIsWhatTheHeapTakes(t *testing.T) {
	for n := 1; n <= 3*smallMax; n += 7 {
		if got, want := AllocSize(n), cap(append([]byte(nil), make([]byte, n)...)); got != want {
			t.Fatalf("AllocSize(%d) = %d, growslice gives %d", n, got, want)
		}
	}
	for _, n := range []int{24, 100, 4097, 40000} {
		const count = 2000
		keep := make([][]byte, count)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := range keep {
			keep[i] = make([]byte, n)
		}
		runtime.ReadMemStats(&after)
		got := float64(after.TotalAlloc-before.TotalAlloc) / count
		if want := float64(AllocSize(n)); got < want || got > want*1.02+8 {
			t.Fatalf("%d allocations of %d bytes took %.0f bytes each, AllocSize says %.0f", count, n, got, want)
		}
		runtime.KeepAlive(keep)
	}
}

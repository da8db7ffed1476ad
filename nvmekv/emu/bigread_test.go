package emu

import (
	"runtime"
	"testing"

	"github.com/tiercache/tiercache/nvmekv"
)

// TestBigValueReadAheadOneP (nvmekv K14): with one P (GOMAXPROCS=1, a
// sidecar pinned to one core), each window of a big value's chunk reads
// is submitted before the window ahead of it is checked and copied (at
// most its first chunk), so the device reads while the CPU copies. The
// Get reads into a buffer of the value's capacity, which the namespace
// watches as each window is submitted (without synchronization, so
// under the race detector only the value and the windows are checked).
func TestBigValueReadAheadOneP(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	w, kv := openWatched(t)
	key, val := []byte("big"), bigValue(3, bigSize)
	if err := kv.Put(ctx, key, val, nvmekv.Meta{Version: 1}); err != nil {
		t.Fatal(err)
	}
	const payload = 64<<10 - nvmekv.ChunkHdrBytes // bigOptions' chunk
	dst := make([]byte, len(val))
	for round := range 3 {
		for i := range dst {
			dst[i] = ^val[i] // no byte is the value's until copied
		}
		copied := make(map[int]int) // window index -> chunks copied when it was submitted
		w.reset(0)
		w.onWindow = func(i int) {
			if raceEnabled {
				copied[i] = 8 * max(i-1, 0)
				return
			}
			n := 0
			for n < len(val) && dst[n] == val[n] {
				n++
			}
			copied[i] = n / payload
		}
		got, _, err := kv.Get(ctx, dst[:0], key)
		w.mu.Lock()
		w.onWindow = nil
		w.mu.Unlock()
		if err != nil || len(got) != len(val) || &got[0] != &dst[0] || string(got) != string(val) {
			t.Fatalf("round %d: Get %d bytes in place %v, %v", round, len(got), len(got) > 0 && &got[0] == &dst[0], err)
		}
		if len(copied) != 5 { // 40 chunks, 8 a window
			t.Fatalf("round %d: %d windows submitted, want 5", round, len(copied))
		}
		for i := 1; i < len(copied); i++ {
			if done := copied[i] - 8*(i-1); done > 1 {
				t.Errorf("round %d: window %d submitted after %d chunks of window %d were copied; want at most 1",
					round, i, done, i-1)
			}
		}
	}
}

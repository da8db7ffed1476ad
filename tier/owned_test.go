package tier

import (
	"bytes"
	"runtime"
	"testing"
)

// TestOwnedBigValueIsNotCopied: a value no DRAM log takes goes to cold as
// the caller's own slice when Set is given it (SetOptions.Owned), so the
// cache allocates a small part of its size instead of a second copy; the
// value reads back either way.
func TestOwnedBigValueIsNotCopied(t *testing.T) {
	const size = 16 << 20
	c := openCold(t, func(o *Options) { o.MaxValue = 2 * size })
	for _, owned := range []bool{false, true} { // the first also warms the cold store's chunk buffers
		val := bytes.Repeat([]byte("owned!"), size/6+1)[:size]
		want := bytes.Clone(val)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := c.Set([]byte("big"), val, SetOptions{Owned: owned}); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("owned %v: a Set of %d MiB to cold allocated %.1f MiB", owned, size>>20, float64(alloc)/(1<<20))
		if owned && alloc > size/4 {
			t.Errorf("an owned value of %d bytes: Set allocated %d bytes, want at most a quarter of it", size, alloc)
		}
		if !owned && alloc < size {
			t.Errorf("a value not given away: Set allocated %d bytes, less than its copy", alloc)
		}
		got, ok, err := c.Get(nil, []byte("big"))
		if err != nil || !ok || !bytes.Equal(got, want) {
			t.Fatalf("owned %v: Get: %d bytes, %v, %v", owned, len(got), ok, err)
		}
	}
}

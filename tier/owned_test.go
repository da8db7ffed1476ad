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

// TestViewBigReadsColdIntoLentBuffer: a big value read from cold goes into
// the buffer ViewBig's big lends (no slice of its size is allocated), and
// reads back byte for byte; declined (nil), it is read as View reads it.
func TestViewBigReadsColdIntoLentBuffer(t *testing.T) {
	const size = 16 << 20
	c := openCold(t, func(o *Options) { o.MaxValue = 2 * size })
	val := bytes.Repeat([]byte("lent!"), size/5+1)[:size]
	if _, err := c.Set([]byte("big"), val, SetOptions{}); err != nil {
		t.Fatal(err)
	}
	lent := make([]byte, size+100)
	for _, lend := range []bool{false, true, true} { // the first warms the cold store's chunk buffers
		var asked int
		big := func(n int) []byte {
			asked = n
			if !lend {
				return nil
			}
			return lent[:n]
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got, _, ok, cold, err := c.ViewBig(nil, []byte("big"), nil, big)
		runtime.ReadMemStats(&after)
		if err != nil || !ok || !cold || !bytes.Equal(got, val) {
			t.Fatalf("lend %v: ViewBig: %d bytes, ok %v, cold %v, %v", lend, len(got), ok, cold, err)
		}
		if asked != size {
			t.Fatalf("lend %v: big asked for %d bytes, want %d", lend, asked, size)
		}
		alloc := after.TotalAlloc - before.TotalAlloc
		if lend && (&got[0] != &lent[0] || alloc > size/4) {
			t.Fatalf("a lent buffer: the value is in it %v, %d bytes allocated", &got[0] == &lent[0], alloc)
		}
	}
}

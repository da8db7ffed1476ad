package nvmekv

import "testing"

// TestRecBufClasses (K15): a buffer has the length asked for and the
// capacity of the smallest class that holds it; one above the largest
// class is fresh and never pooled; only a buffer of a class's exact
// capacity goes back, and comes out again at the length asked.
func TestRecBufClasses(t *testing.T) {
	var p recBufs
	for _, c := range []struct{ n, cap int }{
		{0, 512}, {1, 512}, {512, 512}, {513, 1024}, {1600, 2048}, {4096, 4096}, {4097, 8192},
		{64 << 10, 64 << 10}, {64<<10 + 1, 64<<10 + 1},
	} {
		b := p.get(c.n)
		if len(b) != c.n || cap(b) != c.cap {
			t.Errorf("get(%d): len %d cap %d, want len %d cap %d", c.n, len(b), cap(b), c.n, c.cap)
		}
		p.put(b)
	}
	p.put(make([]byte, 100, 700)) // not a class: left to the collector
	for range 100 {
		if b := p.get(600); cap(b) != 1024 || len(b) != 600 {
			t.Fatalf("get(600) after puts: len %d cap %d", len(b), cap(b))
		}
	}
}

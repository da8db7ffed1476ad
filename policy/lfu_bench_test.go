package policy

import "testing"

// BenchmarkSketchIncrement: one increment of a key among 10,000, the
// table sized as the LFU sizes it for them.
func BenchmarkSketchIncrement(b *testing.B) {
	var s freqSketch
	s.ensure(20000, 10)
	hs := make([]uint64, 10000)
	for i := range hs {
		hs[i] = uint64(i) * 0x9e3779b97f4a7c15
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.increment(hs[i%len(hs)])
	}
}

// BenchmarkLFUAccess: a hit of a resident item, sketch and queue.
func BenchmarkLFUAccess(b *testing.B) {
	p, _ := NewLFU(LFUOptions{Capacity: 10000 * 1600})
	items := make([]lfuItem, 10000)
	for i := range items {
		p.Add(&items[i].Node, uint64(i)*0x9e3779b97f4a7c15, 1600, func(*Node) {})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.Access(&items[(i*7919)%len(items)].Node)
	}
}

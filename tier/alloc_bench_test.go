package tier

import (
	"fmt"
	"runtime/metrics"
	"testing"
)

// The allocations of SET and GET in steady state (issue 31 item 2), with
// -benchmem (B/op, allocs/op: the whole process's, so the flusher's and
// the cold store's goroutines count too), and the collector's share of
// the CPU during the run (gc-cpu-share: runtime/metrics' estimate,
// /cpu/classes/gc/total over gc + user + scavenge).

// BenchmarkSetHot overwrites keys that stay in DRAM: 1024 keys of 512 B.
func BenchmarkSetHot(b *testing.B) {
	c := openBench(b, false)
	keys, val := benchKeys(1024), make([]byte, 512)
	for _, k := range keys {
		mustSet(b, c, k, val)
	}
	gc := startGCShare()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		mustSet(b, c, keys[i%len(keys)], val)
		i++
	}
	gc.report(b)
}

// BenchmarkGetHot reads keys DRAM holds into a reused buffer (View).
func BenchmarkGetHot(b *testing.B) {
	c := openBench(b, false)
	keys, val := benchKeys(1024), make([]byte, 512)
	for _, k := range keys {
		mustSet(b, c, k, val)
	}
	benchView(b, c, keys)
}

// BenchmarkSetBeyondDRAM is the bulk load's path: every SET a new key of
// 512 B into 1 MiB of DRAM over the emulated cold store, so that each SET
// evicts about one record to cold through the flusher, and the directory
// forgets keys only cold holds (T37).
func BenchmarkSetBeyondDRAM(b *testing.B) {
	c := openBench(b, true)
	val := make([]byte, 512)
	for i := range 20000 { // DRAM full and the flusher busy: steady state
		mustSet(b, c, fmt.Appendf(nil, "warm:%012d", i), val)
	}
	key := make([]byte, 0, 32)
	gc := startGCShare()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		key = fmt.Appendf(key[:0], "bulk:%012d", i)
		mustSet(b, c, key, val)
		i++
	}
	gc.report(b)
}

// BenchmarkGetCold reads keys only cold holds (the directory forgot them:
// each GET adopts its key), into a reused buffer.
func BenchmarkGetCold(b *testing.B) {
	c := openBench(b, true)
	val := make([]byte, 512)
	keys := benchKeys(20000)
	for _, k := range keys {
		mustSet(b, c, k, val)
	}
	settle(b, c)
	benchView(b, c, keys)
}

// benchView reads keys in turn into a reused buffer (View).
func benchView(b *testing.B, c *Cache, keys [][]byte) {
	buf := make([]byte, 0, 1024)
	gc := startGCShare()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, _, ok, _, err := c.View(buf[:0], keys[i%len(keys)], nil); !ok || err != nil {
			b.Fatalf("View: %v %v", ok, err)
		}
		i++
	}
	gc.report(b)
}

// openBench opens 1 MiB of DRAM (hot 256 KiB, warm 768 KiB), over the
// emulated cold store if cold.
func openBench(b *testing.B, cold bool) *Cache {
	o := smallOptions(newFakeClock())
	o.HotBytes, o.HotMaxValue = 256<<10, 16<<10
	o.WarmBytes, o.WarmSegmentBytes = 768<<10, 32<<10
	o.Flusher = Options{}.Flusher // the defaults: a bounded queue, backpressure
	if cold {
		needURing(b)
		emuCold(&o, b.TempDir())
	}
	c, err := Open(o)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

func benchKeys(n int) [][]byte {
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "key:%012d", i)
	}
	return keys
}

func mustSet(b *testing.B, c *Cache, key, val []byte) {
	if _, err := c.Set(key, val, SetOptions{}); err != nil {
		b.Fatal(err)
	}
}

// gcShare reads the collector's CPU against all of Go's work from
// runtime/metrics, from startGCShare to report.
type gcShare struct{ s []metrics.Sample }

var gcShareMetrics = []string{"/cpu/classes/gc/total:cpu-seconds", "/cpu/classes/user:cpu-seconds", "/cpu/classes/scavenge/total:cpu-seconds"}

func startGCShare() *gcShare {
	g := &gcShare{s: make([]metrics.Sample, len(gcShareMetrics))}
	for i, n := range gcShareMetrics {
		g.s[i].Name = n
	}
	metrics.Read(g.s)
	return g
}

func (g *gcShare) report(b *testing.B) {
	now := make([]metrics.Sample, len(g.s))
	copy(now, g.s)
	metrics.Read(now)
	var d [3]float64
	for i := range now {
		d[i] = now[i].Value.Float64() - g.s[i].Value.Float64()
	}
	if all := d[0] + d[1] + d[2]; all > 0 {
		b.ReportMetric(d[0]/all, "gc-cpu-share")
	}
}

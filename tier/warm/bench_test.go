package warm

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"syscall"
	"testing"

	"github.com/dgraph-io/ristretto/v2"
	"github.com/tiercache/tiercache/numa"
)

// Benchmarks of the warm tier next to ristretto v2 (the hot tier's engine)
// on the same keys and values: Get and Set ns/op and allocs at 1 and 2
// goroutines, and index DRAM bytes per item. WARM_BENCH_HUGE=1 gives the
// warm arena MADV_HUGEPAGE.

const (
	benchKeys   = 100_000
	benchValLen = 128
)

func benchKeySet() [][]byte {
	keys := make([][]byte, benchKeys)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("key-%08d", i))
	}
	return keys
}

type benchCache interface {
	get(dst, key []byte) ([]byte, bool)
	set(key, value []byte)
}

type warmBench struct{ c *Cache }

func (w warmBench) get(dst, key []byte) ([]byte, bool) {
	v, _, ok := w.c.Get(dst, key)
	return v, ok
}
func (w warmBench) set(key, value []byte) { _ = w.c.Set(key, value, Meta{}) }

type ristrettoBench struct {
	c *ristretto.Cache[[]byte, []byte]
}

// get copies the value into dst, as the warm tier does, for equal work.
func (r ristrettoBench) get(dst, key []byte) ([]byte, bool) {
	v, ok := r.c.Get(key)
	return append(dst, v...), ok
}
func (r ristrettoBench) set(key, value []byte) { r.c.Set(key, value, int64(len(value))) }

func newBenchCaches(b *testing.B) map[string]benchCache {
	w, err := New(Options{Bytes: 64 << 20, SegmentBytes: 1 << 20, Arena: numa.ArenaOptions{Node: testNode(b), HugePages: os.Getenv("WARM_BENCH_HUGE") == "1"}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { w.Close() })
	r, err := ristretto.NewCache(&ristretto.Config[[]byte, []byte]{
		NumCounters: 10 * benchKeys, MaxCost: 64 << 20, BufferItems: 64,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(r.Close)
	return map[string]benchCache{"warm": warmBench{w}, "ristretto": ristrettoBench{r}}
}

// fill stores every key; ristretto drops Sets when its buffers are busy,
// so it retries (with Wait) until every key reads back, up to 10 rounds.
func fill(c benchCache, keys [][]byte, val []byte) {
	dst := make([]byte, 0, len(val))
	for round := 0; round < 10; round++ {
		missing := 0
		for i, k := range keys {
			if _, ok := c.get(dst[:0], k); !ok {
				c.set(k, val)
				missing++
			}
			if r, ok := c.(ristrettoBench); ok && i%1000 == 999 {
				r.c.Wait()
			}
		}
		if r, ok := c.(ristrettoBench); ok {
			r.c.Wait()
		}
		if missing == 0 {
			return
		}
	}
}

// runG splits b.N operations over g goroutines; op gets a goroutine-local dst.
func runG(b *testing.B, g int, op func(i int, dst []byte) []byte) {
	b.ReportAllocs()
	b.SetBytes(benchValLen)
	var wg sync.WaitGroup
	per := b.N / g
	b.ResetTimer()
	cpu0 := cpuTime()
	defer func() { b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op") }()
	for w := 0; w < g; w++ {
		n := per
		if w == 0 {
			n += b.N % g
		}
		wg.Add(1)
		go func(w, n int) {
			defer wg.Done()
			dst := make([]byte, 0, benchValLen)
			for i := 0; i < n; i++ {
				dst = op(w*7919+i*31, dst[:0])
			}
		}(w, n)
	}
	wg.Wait()
}

func BenchmarkGet(b *testing.B) {
	keys := benchKeySet()
	val := make([]byte, benchValLen)
	for _, name := range []string{"warm", "ristretto"} {
		for _, g := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/goroutines=%d", name, g), func(b *testing.B) {
				c := newBenchCaches(b)[name]
				fill(c, keys, val)
				runG(b, g, func(i int, dst []byte) []byte {
					dst, ok := c.get(dst, keys[i%benchKeys])
					_ = ok
					return dst
				})
				b.StopTimer()
				h := 0
				dst := make([]byte, 0, benchValLen)
				for _, k := range keys {
					if _, ok := c.get(dst[:0], k); ok {
						h++
					}
				}
				b.ReportMetric(float64(h)/benchKeys, "hit-ratio")
			})
		}
	}
}

func BenchmarkSet(b *testing.B) {
	keys := benchKeySet()
	val := make([]byte, benchValLen)
	for _, name := range []string{"warm", "ristretto"} {
		for _, g := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/goroutines=%d", name, g), func(b *testing.B) {
				c := newBenchCaches(b)[name]
				runG(b, g, func(i int, dst []byte) []byte {
					c.set(keys[i%benchKeys], val)
					return dst
				})
			})
		}
	}
}

// BenchmarkIndexBytesPerItem fills 1M items once per call (whatever b.N)
// and reports the warm index's DRAM bytes per item, and the Go heap growth
// per item of both caches. Run it with -benchtime 1x.
func BenchmarkIndexBytesPerItem(b *testing.B) {
	const n = 1_000_000
	val := make([]byte, benchValLen)
	key := func(i int) []byte { return []byte(fmt.Sprintf("key-%08d", i)) }
	b.Run("warm", func(b *testing.B) {
		{
			h0 := heapAlloc()
			w, err := New(Options{Bytes: int64(n) * 192, SegmentBytes: 4 << 20, Arena: numa.ArenaOptions{Node: testNode(b)}})
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < n; i++ {
				_ = w.Set(key(i), val, Meta{})
			}
			st := w.Stats()
			b.ReportMetric(float64(st.IndexBytes)/float64(st.Items), "index-B/item")
			b.ReportMetric(float64(heapAlloc()-h0)/float64(st.Items), "heap-B/item")
			w.Close()
		}
	})
	b.Run("ristretto", func(b *testing.B) {
		{
			h0 := heapAlloc()
			r, _ := ristretto.NewCache(&ristretto.Config[[]byte, []byte]{NumCounters: 10 * n, MaxCost: 1 << 40, BufferItems: 64})
			for i := 0; i < n; i++ {
				r.Set(key(i), append([]byte(nil), val...), benchValLen)
			}
			r.Wait()
			b.ReportMetric(float64(heapAlloc()-h0)/n, "heap-B/item")
			r.Close()
		}
	})
}

func heapAlloc() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// cpuTime is the process's user+system CPU time in ns: on a shared, loaded
// machine cpu-ns/op is steadier than wall ns/op.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

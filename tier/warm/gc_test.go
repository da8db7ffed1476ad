package warm

import (
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"testing"

	"github.com/tiercache/tiercache/numa"
)

// TestGCManyItems fills the cache with 10M items (1M with -short) and
// reports the GC pause p99 and heap size while the program keeps
// allocating. It asserts only structure: the Go heap holds the index, not
// the values.
func TestGCManyItems(t *testing.T) {
	n := 10_000_000
	if testing.Short() {
		n = 1_000_000
	}
	const valLen = 100
	keyLen := len("k") + 10 // "k" + 10 digits
	rec := recSize(keyLen, valLen)
	seg := 4 << 20
	const shards = 16
	bytes := int64(float64(n*rec)*1.15) + int64(2*shards*seg)
	c := newTestCache(t, Options{Bytes: bytes, SegmentBytes: seg, Shards: shards, PlacementSamples: 256,
		// Unbound: the QEMU guest's CPU-less node may be smaller than this arena.
		Arena: numa.ArenaOptions{Node: numa.Unbound, HugePages: true}})

	key := make([]byte, 0, keyLen)
	val := make([]byte, valLen)
	for i := 0; i < n; i++ {
		key = strconv.AppendInt(append(key[:0], 'k'), int64(1_000_000_000+i), 10)[:keyLen]
		val[0] = byte(i)
		if err := c.Set(key, val, Meta{Version: uint64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	st := c.Stats()
	valueBytes := int64(n) * valLen

	// Keep allocating garbage and reading while collecting pause samples.
	samples := []metrics.Sample{{Name: "/sched/pauses/total/gc:seconds"}}
	metrics.Read(samples)
	before := samples[0].Value.Float64Histogram()
	before = &metrics.Float64Histogram{Counts: append([]uint64(nil), before.Counts...), Buckets: before.Buckets}
	var gcs debug.GCStats
	debug.ReadGCStats(&gcs)
	gc0 := gcs.NumGC
	var sink [][]byte
	dst := make([]byte, 0, valLen)
	for round := 0; round < 30; round++ {
		for j := 0; j < 2000; j++ {
			sink = append(sink, make([]byte, 4096))
			i := (round*2000 + j) * 7919 % n
			key = strconv.AppendInt(append(key[:0], 'k'), int64(1_000_000_000+i), 10)[:keyLen]
			dst, _, _ = c.Get(dst[:0], key)
		}
		sink = sink[:0]
		runtime.GC()
	}
	metrics.Read(samples)
	after := samples[0].Value.Float64Histogram()
	debug.ReadGCStats(&gcs)
	p50, p99 := histQuantile(before, after, 0.5), histQuantile(before, after, 0.99)
	t.Logf("%d items (%d value bytes, arena %d MiB): heap in use %d MiB (HeapAlloc %d MiB), index %d MiB = %.1f B/item, %d GCs, GC pause p50 %s p99 %s (goal < 1ms; 2 shared cores)",
		st.Items, valueBytes, st.ArenaBytes>>20, ms.HeapInuse>>20, ms.HeapAlloc>>20, st.IndexBytes>>20,
		float64(st.IndexBytes)/float64(st.Items), gcs.NumGC-gc0, fmtSeconds(p50), fmtSeconds(p99))

	if st.Items < int64(n)*9/10 {
		t.Fatalf("only %d of %d items held: arena sized too small", st.Items, n)
	}
	if int64(ms.HeapAlloc) >= valueBytes {
		t.Fatalf("heap %d bytes is not smaller than the %d value bytes: values are on the heap", ms.HeapAlloc, valueBytes)
	}
	if int64(ms.HeapAlloc) > st.IndexBytes+64<<20 {
		t.Fatalf("heap %d bytes is more than the index (%d) plus 64 MiB", ms.HeapAlloc, st.IndexBytes)
	}
	runtime.KeepAlive(sink)
}

// histQuantile returns the q-quantile (upper bucket bound) of after-before.
func histQuantile(before, after *metrics.Float64Histogram, q float64) float64 {
	var total uint64
	d := make([]uint64, len(after.Counts))
	for i := range after.Counts {
		d[i] = after.Counts[i] - before.Counts[i]
		total += d[i]
	}
	if total == 0 {
		return math.NaN()
	}
	want := uint64(math.Ceil(q * float64(total)))
	var acc uint64
	for i, c := range d {
		acc += c
		if acc >= want {
			return after.Buckets[i+1]
		}
	}
	return after.Buckets[len(after.Buckets)-1]
}

func fmtSeconds(s float64) string {
	if math.IsNaN(s) || math.IsInf(s, 0) {
		return fmt.Sprint(s)
	}
	return fmt.Sprintf("%.3fms", s*1e3)
}

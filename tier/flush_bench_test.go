package tier

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkFlushGetWait: the longest a Get on another goroutine waits
// (and the 99.9th percentile) while Flush of 63,000 and of 1,000,000 keys
// runs (issue 21), measured from Flush's call until what it removed is
// freed (WaitPurge where the cache has it; before T36 Flush returned only
// then), beside those of a quiet window just before (the machine's
// noise); each the median of b.N flushes. NOCOLD=1 runs it without the
// cold tier. Two goroutines
// Get one hot key in a loop, pausing 20 µs between Gets (as clients
// between requests: spinning goroutines would hold both Ps of a 2-core
// machine and measure the scheduler). A cache of 1 GiB of hot DRAM and an emulated
// cold tier holds every key in hot. It uses only calls main had, so the
// same file measures main: copy it there.
func BenchmarkFlushGetWait(b *testing.B) {
	for _, n := range []int{63000, 1000000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var fs []flushStats
			for range b.N {
				fs = append(fs, flushGetWait(b, n))
			}
			// The median of b.N flushes of each figure: the machine's
			// noise (other processes) shows in the quiet window's.
			med := func(f func(flushStats) float64) float64 {
				v := make([]float64, len(fs))
				for i := range fs {
					v[i] = f(fs[i])
				}
				slices.Sort(v)
				return v[len(v)/2]
			}
			b.ReportMetric(med(func(f flushStats) float64 { return f.flush }), "flush-ms")
			b.ReportMetric(med(func(f flushStats) float64 { return f.freed }), "freed-ms")
			b.ReportMetric(med(func(f flushStats) float64 { return f.getMax }), "get-max-ms")
			b.ReportMetric(med(func(f flushStats) float64 { return f.getP999 }), "get-p999-ms")
			b.ReportMetric(med(func(f flushStats) float64 { return f.quietMax }), "quiet-max-ms")
			b.ReportMetric(med(func(f flushStats) float64 { return f.quietP999 }), "quiet-p999-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}

func flushGetWait(b *testing.B, n int) flushStats {
	b.StopTimer()
	o := Options{HotBytes: 1 << 30, HotMaxValue: 1 << 20}
	if os.Getenv("NOCOLD") == "" {
		emuCold(&o, b.TempDir())
	}
	c, err := Open(o)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	val := make([]byte, 64)
	for i := 0; i < n; i++ {
		if _, err := c.Set(fmt.Appendf(nil, "key:%d", i), val, SetOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	// waits[g][0] are goroutine g's Get waits in the quiet window, [1]
	// in the flush's.
	var window atomic.Int32
	var waits [2][2][]time.Duration
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range waits {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var dst []byte
			key := []byte("key:1")
			for {
				select {
				case <-stop:
					return
				default:
				}
				w0 := window.Load()
				t0 := time.Now()
				dst, _, _ = c.Get(dst[:0], key)
				d := time.Since(t0)
				// A Get that began before the flush and ended in it, or
				// began in it, counts for it (window 1).
				w := w0
				if w == 0 && window.Load() > 0 {
					w = 1
				}
				if w < 2 {
					waits[g][w] = append(waits[g][w], d)
				}
				time.Sleep(20 * time.Microsecond) // a client between requests: not a goroutine that holds a P
			}
		}()
	}
	time.Sleep(max(200*time.Millisecond, time.Duration(n)*time.Microsecond/2))
	b.StartTimer()
	window.Store(1)
	t0 := time.Now()
	if err := c.Flush(); err != nil {
		b.Fatal(err)
	}
	flushed := time.Since(t0)
	if w, ok := any(c).(interface{ WaitPurge(context.Context) error }); ok {
		if err := w.WaitPurge(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	freed := time.Since(t0)
	window.Store(2)
	b.StopTimer()
	close(stop)
	wg.Wait()
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	var all [2][]time.Duration
	for g := range waits {
		for w := range all {
			all[w] = append(all[w], waits[g][w]...)
		}
	}
	for w := range all {
		slices.Sort(all[w])
		if len(all[w]) == 0 {
			all[w] = []time.Duration{0}
		}
	}
	p999 := func(ws []time.Duration) float64 { return ms(ws[len(ws)*999/1000]) }
	return flushStats{ms(flushed), ms(freed), ms(all[1][len(all[1])-1]), p999(all[1]), ms(all[0][len(all[0])-1]), p999(all[0])}
}

// flushStats are one flush's figures, in ms.
type flushStats struct{ flush, freed, getMax, getP999, quietMax, quietP999 float64 }

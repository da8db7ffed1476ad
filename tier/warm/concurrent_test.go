package warm

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
)

// value for key k, writer w, sequence n: k | w | n | filler derived from (w, n).
func concValue(dst, k []byte, w, n uint64, fill int) []byte {
	dst = append(dst[:0], k...)
	dst = binary.LittleEndian.AppendUint64(dst, w)
	dst = binary.LittleEndian.AppendUint64(dst, n)
	for i := 0; i < fill; i++ {
		dst = append(dst, byte(w*31+n+uint64(i)))
	}
	return dst
}

func checkConcValue(k, v []byte) error {
	if len(v) < len(k)+16 || !bytes.Equal(v[:len(k)], k) {
		return fmt.Errorf("value of %q does not start with its key", k)
	}
	w := binary.LittleEndian.Uint64(v[len(k):])
	n := binary.LittleEndian.Uint64(v[len(k)+8:])
	for i, b := range v[len(k)+16:] {
		if b != byte(w*31+n+uint64(i)) {
			return fmt.Errorf("value of %q torn at byte %d", k, i)
		}
	}
	return nil
}

// TestConcurrent: many goroutines Set/Get/Delete the same keys while
// evictions run; every value read is exactly one that was written, and
// every evicted value too. Meant for -race (scaled down by -short).
func TestConcurrent(t *testing.T) {
	var evicted atomic.Uint64
	var evictErr atomic.Value
	c := newTestCache(t, Options{Bytes: 16 * 8192, SegmentBytes: 8192, Shards: 4,
		OnEvict: func(k, v []byte, m Meta) {
			if err := checkConcValue(k, v); err != nil {
				evictErr.Store(err)
			}
			evicted.Add(1)
		}})
	workers, ops := 8, 100_000
	if testing.Short() {
		workers, ops = 4, 10_000
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(w, 1))
			var val, dst []byte
			for n := uint64(0); n < uint64(ops); n++ {
				k := []byte(fmt.Sprint("k", rng.IntN(500)))
				switch op := rng.IntN(10); {
				case op < 4:
					val = concValue(val, k, w, n, rng.IntN(300))
					if err := c.Set(k, val, Meta{Version: n}); err != nil {
						errs <- err
						return
					}
				case op < 9:
					var ok bool
					if dst, _, ok = c.Get(dst[:0], k); ok {
						if err := checkConcValue(k, dst); err != nil {
							errs <- err
							return
						}
					}
				default:
					c.Delete(k)
				}
				if n%1000 == 0 {
					c.Stats()
				}
			}
		}(uint64(w))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err, _ := evictErr.Load().(error); err != nil {
		t.Fatal(err)
	}
	st := c.Stats()
	if st.Evictions == 0 || evicted.Load() != st.Evictions || st.Hits == 0 {
		t.Fatalf("stats %+v, callbacks %d", st, evicted.Load())
	}
	t.Logf("stats: %+v", st)
}

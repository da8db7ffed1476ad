package tier

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tiercache/tiercache/flusher"
)

// slowCold is a real cold store whose writes take at least delay: a device
// slower than the writers.
type slowCold struct {
	Cold
	delay time.Duration
}

func (s slowCold) PutMany(ctx context.Context, items []*flusher.Item) error {
	time.Sleep(s.delay)
	return s.Cold.PutMany(ctx, items)
}

// TestWritersWaitForTheFlusher checks T25: a burst of writes far larger
// than DRAM, faster than the cold device takes them and through a flusher
// queue of a few warm segments, loses nothing: writers wait while the
// flusher holds more than half its bound, so no copy on its way to cold is
// dropped, and every key reads back.
func TestWritersWaitForTheFlusher(t *testing.T) {
	c := openCold(t, func(o *Options) {
		o.Flusher.QueueBytes = 4 * int64(o.WarmSegmentBytes)
		o.Flusher.BatchBytes = int64(o.WarmSegmentBytes)
		o.Flusher.InFlight = 1
		wrapCold(o, func(in Cold) Cold { return slowCold{Cold: in, delay: 2 * time.Millisecond} })
	})
	const n, size = 3000, 1000 // 3 MB through 576 KiB of DRAM
	val := func(i int) []byte { return []byte(fmt.Sprintf("%-*d", size, i)) }
	for i := 0; i < n; i++ {
		if _, err := c.Set([]byte(fmt.Sprint("k", i)), val(i), SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	settle(t, c)
	st := c.Stats()
	if st.Flusher.Drops != 0 || st.Lost != 0 {
		t.Fatalf("flusher drops %d, lost %d: want none (throttled %d)", st.Flusher.Drops, st.Lost, st.Flusher.Throttled)
	}
	if st.Flusher.Throttled == 0 {
		t.Fatal("no write waited: the burst did not outrun the device, so the test shows nothing")
	}
	for i := 0; i < n; i++ {
		v, ok, err := c.Get(nil, []byte(fmt.Sprint("k", i)))
		if err != nil || !ok || string(v) != string(val(i)) {
			t.Fatalf("k%d: %.20q %v %v", i, v, ok, err)
		}
	}
}

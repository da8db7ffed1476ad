package tier

import (
	"context"
	"errors"
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
// flusher holds more than its high mark (before their write with
// backpressure, after it when shedding), so no copy on its way to cold is
// dropped, and every key reads back.
func TestWritersWaitForTheFlusher(t *testing.T) {
	for _, mode := range []flusher.Overload{flusher.Backpressure, flusher.Shed} {
		t.Run(mode.String(), func(t *testing.T) {
			c := openCold(t, func(o *Options) {
				o.Flusher.QueueBytes = 4 * int64(o.WarmSegmentBytes)
				o.Flusher.BatchBytes = int64(o.WarmSegmentBytes)
				o.Flusher.InFlight = 1
				o.Flusher.Overload = mode
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
		})
	}
}

// TestBackpressureRefusesAfterWait checks T25's bound: while the device
// takes nothing, writers wait for the flusher at most Flusher.Wait, then
// get ErrColdBehind and change nothing (SET, MSET, an overwrite, a
// read-modify-write); once the device takes writes again every
// acknowledged key reads back and nothing was dropped.
func TestBackpressureRefusesAfterWait(t *testing.T) {
	var open func()
	c := openCold(t, func(o *Options) {
		o.Flusher.QueueBytes = 4 * int64(o.WarmSegmentBytes)
		o.Flusher.Wait = 100 * time.Millisecond
		open = stallCold(t, o) // flush_test.go
	})
	const size = 1000
	val := func(i, round int) []byte { return []byte(fmt.Sprintf("%-*d", size, i*10+round)) }
	key := func(i int) []byte { return []byte(fmt.Sprint("k", i)) }
	acked := 0
	var refused error
	for i := 0; i < 100000 && refused == nil; i++ {
		start := time.Now()
		_, err := c.Set(key(i), val(i, 0), SetOptions{})
		switch {
		case err == nil:
			acked++
		case errors.Is(err, ErrColdBehind):
			refused = err
			if d := time.Since(start); d < 100*time.Millisecond {
				t.Errorf("refused after %v, before Flusher.Wait", d)
			}
			if _, ok, _ := c.Get(nil, key(i)); ok {
				t.Errorf("the refused SET of k%d stored it", i)
			}
		default:
			t.Fatal(err)
		}
	}
	if refused == nil {
		t.Fatal("no write was refused although the device took nothing")
	}
	t.Logf("%d writes acknowledged, then: %v", acked, refused)
	if err := c.MSet([][2][]byte{{key(0), val(0, 1)}, {[]byte("new"), val(0, 1)}}); !errors.Is(err, ErrColdBehind) {
		t.Errorf("MSET while the flusher is behind: %v, want ErrColdBehind", err)
	}
	if _, err := c.Set(key(0), val(0, 2), SetOptions{}); !errors.Is(err, ErrColdBehind) {
		t.Errorf("an overwrite while the flusher is behind: %v, want ErrColdBehind", err)
	}
	err := c.Update(key(1), func(cur Current) (Change, error) { return Change{Op: Store, Value: val(1, 3)}, nil })
	if !errors.Is(err, ErrColdBehind) {
		t.Errorf("Update while the flusher is behind: %v, want ErrColdBehind", err)
	}
	if st := c.Stats(); st.ColdBehind < 4 {
		t.Errorf("ColdBehind %d, want at least the 4 refusals", st.ColdBehind)
	}
	open()
	settle(t, c)
	if _, ok, _ := c.Get(nil, []byte("new")); ok {
		t.Error("the refused MSET stored a pair")
	}
	for i := 0; i < acked; i++ {
		v, ok, err := c.Get(nil, key(i))
		if err != nil || !ok || string(v) != string(val(i, 0)) {
			t.Fatalf("k%d after the device came back: %.20q %v %v", i, v, ok, err)
		}
	}
	if st := c.Stats(); st.Flusher.Drops != 0 || st.Lost != 0 {
		t.Fatalf("flusher drops %d, lost %d: want none", st.Flusher.Drops, st.Lost)
	}
	if _, err := c.Set(key(0), val(0, 4), SetOptions{}); err != nil {
		t.Fatalf("a write once the device took writes again: %v", err)
	}
}

package tier

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestBackpressureWaitBoundsEachWrite checks T25's bound on a device that
// is slow, not stalled: a write whose DRAM room records on their way to
// cold hold waits for them at most Flusher.Wait in all its tries, not
// Flusher.Wait per try (each try's wait ended by one completed write,
// then the room taken again, up to noRoomTries times). The bound allowed
// is generous (six times Wait, which also covers the wait before the
// write, admitWrite): before the fix single SETs took 2 s with a Wait of
// 100 ms.
func TestBackpressureWaitBoundsEachWrite(t *testing.T) {
	const wait = 100 * time.Millisecond
	c := openCold(t, func(o *Options) {
		o.Flusher.QueueBytes = 4 * int64(o.WarmSegmentBytes)
		o.Flusher.Wait = wait
		o.Flusher.BatchItems = 4
		o.Flusher.InFlight = 1
		wrapCold(o, func(in Cold) Cold { return slowCold{Cold: in, delay: 60 * time.Millisecond} })
	})
	var worst time.Duration
	acked := 0
	for i := 0; i < 600; i++ {
		start := time.Now()
		_, err := c.Set([]byte(fmt.Sprint("k", i)), make([]byte, 1000), SetOptions{})
		worst = max(worst, time.Since(start))
		switch {
		case err == nil:
			acked++
		case !errors.Is(err, ErrColdBehind):
			t.Fatal(err)
		}
	}
	if worst > 6*wait {
		t.Fatalf("a SET waited %v with Flusher.Wait %v (%d of 600 acknowledged)", worst, wait, acked)
	}
	if acked == 0 {
		t.Fatal("no SET acknowledged: the device was too slow for the test to show anything")
	}
}

package tier

import (
	"testing"
	"time"
)

// TestFlushDoesNotWaitForStraightWrites (T36): a writer waiting for the
// cold write of a value no DRAM log takes (awaitStraight, up to
// Flusher.Wait) on a stalled device does not hold Flush up, nor every
// call behind it: Flush ends the wait (holdOff) as it ends a throttled
// writer's, the write stays queued and readable in transit (T5) and is
// acknowledged, as past Flusher.Wait. Before, Flush waited out the
// writer's Flusher.Wait.
func TestFlushDoesNotWaitForStraightWrites(t *testing.T) {
	const wait = 20 * time.Second
	g := &stalledCold{gate: make(chan struct{})}
	c := openCold(t, func(o *Options) {
		o.Flusher.Wait = wait
		wrapCold(o, func(in Cold) Cold { g.Cold = in; return g })
	})
	defer close(g.gate) // first: Close drains the flusher

	big := make([]byte, 100<<10) // larger than a warm segment: straight to cold
	done := make(chan error, 1)
	go func() {
		_, err := c.Set([]byte("big"), big, SetOptions{})
		done <- err
	}()
	for c.st.coldWrites.Load() == 0 {
		time.Sleep(time.Millisecond) // until the writer waits for its cold write
	}
	start := time.Now()
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > wait/2 {
		t.Fatalf("Flush took %v: it waited for the writer's cold write (Flusher.Wait %v)", took, wait)
	}
	if err := <-done; err != nil {
		t.Fatalf("the SET whose wait Flush ended: %v", err)
	}
	if _, ok, _ := c.Get(nil, []byte("big")); ok {
		t.Fatal("the key SET before FLUSHALL answered still reads")
	}
}

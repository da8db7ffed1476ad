package tier

import (
	"fmt"
	"testing"
	"time"

	"github.com/tiercache/tiercache/backend"
)

// sweepByWalk is the sweep before T55, the peer of BenchmarkSweep: it
// walks every entry of every shard holding one with an expiry.
func (c *Cache) sweepByWalk(now int64) {
	for i := range c.dir.shards {
		sh := &c.dir.shards[i]
		sh.mu.Lock()
		if sh.exps == nil {
			sh.mu.Unlock()
			continue
		}
		for k, e := range sh.m {
			if e.state == stateLive && backend.Expired(e.exp, now) && !sh.pendingLocked([]byte(k)) {
				c.purgeLocked(sh, []byte(k), e)
				c.st.expired.Add(1)
				c.removed([]byte(k), Expired)
			}
		}
		sh.mu.Unlock()
	}
}

// BenchmarkSweep: one sweep a second of the cache's clock over 1M keys:
// none with an expiry ("none"), then every one with an expiry spread over
// a day (about 12 expire a second), swept through the expiry index
// ("all-ttl/index", T55) and by walking every entry as before T55
// ("all-ttl/walk").
func BenchmarkSweep(b *testing.B) {
	clk := newFakeClock()
	c := openSwept(b, clk, 256<<20)
	const n = 1_000_000
	for i := range n {
		if _, err := c.Set([]byte(fmt.Sprintf("k:%d", i)), []byte("v"), SetOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	run := func(name string, sweep func(int64)) {
		b.Run(name, func(b *testing.B) {
			before := c.st.expired.Load()
			for range b.N {
				clk.Advance(int64(time.Second))
				sweep(clk.Now())
			}
			b.ReportMetric(float64(c.st.expired.Load()-before)/float64(b.N), "expired/op")
		})
	}
	run("none", c.sweep)
	day := int64(24 * time.Hour)
	for i := range n {
		// A multiplicative hash spreads the keys' expiries over the day.
		ttl := time.Duration(int64(time.Second) + int64(uint64(i)*0x9e3779b97f4a7c15%uint64(day)))
		if !c.Expire([]byte(fmt.Sprintf("k:%d", i)), ttl) {
			b.Fatal("Expire of a key that exists answered false")
		}
	}
	run("all-ttl/index", c.sweep)
	run("all-ttl/walk", c.sweepByWalk)
}

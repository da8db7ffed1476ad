package tier

import (
	"fmt"
	"testing"
	"time"

	"github.com/tiercache/tiercache/flusher"
)

// TestTenantFlushShareKeepsOthersWrites (T50): tenants share the
// write-behind flusher by FlushWeight (flusher F14), here in shed mode
// (flusher.Shed: the default, backpressure, drops nothing). a writes twice its
// DRAM quota, so its evictions queue for a device slower than the
// writers; b then writes 20 times as many keys, and its evictions
// overflow the flusher's queue. The drops that makes are b's own: every
// one of a's keys is still found after the flood. (One FIFO, the same
// run drops a's queued evictions first, the oldest: 147-163 of a's 300
// keys lost in 3 runs with the weights left out.)
func TestTenantFlushShareKeepsOthersWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("-short (the race run): the flood must outrun a device of 1 ms a batch, which writers slowed by the race detector do not")
	}
	const aKeys, bPerA = 300, 20
	c := openCold(t, func(o *Options) {
		o.HotBytes, o.WarmBytes = 256<<10, 2<<20
		o.Tenants = []Tenant{{Name: "a", Prefix: "a:", Quota: 256 << 10, FlushWeight: 1}, {Name: "b", Prefix: "b:", Quota: 256 << 10, FlushWeight: 1}}
		o.Flusher.QueueItems, o.Flusher.BatchItems, o.Flusher.InFlight = 512, 16, 1
		o.Flusher.Overload = flusher.Shed
		wrapCold(o, func(in Cold) Cold { return slowCold{Cold: in, delay: time.Millisecond} })
	})
	val := make([]byte, 2<<10)
	for i := range aKeys {
		set(t, c, fmt.Appendf(nil, "a:%05d", i), val)
	}
	for i := range aKeys * bPerA { // while a's evictions are still queued
		set(t, c, fmt.Appendf(nil, "b:%07d", i), val)
	}
	settle(t, c)
	st := c.Stats()
	var aFound, bFound int
	for i := range aKeys {
		if _, ok, err := c.Get(nil, fmt.Appendf(nil, "a:%05d", i)); err != nil {
			t.Fatal(err)
		} else if ok {
			aFound++
		}
	}
	for i := range aKeys * bPerA {
		if _, ok, _ := c.Get(nil, fmt.Appendf(nil, "b:%07d", i)); ok {
			bFound++
		}
	}
	a := tenantRow(t, st, "a")
	t.Logf("flusher drops %d; a: %d of %d keys found, %d evicted from DRAM; b: %d of %d found",
		st.Flusher.Drops, aFound, aKeys, a.Evictions, bFound, aKeys*bPerA)
	if st.Flusher.Drops == 0 {
		t.Fatalf("the flood never overflowed the flusher's queue (%+v): the test shows nothing", st.Flusher)
	}
	if aFound != aKeys || a.Evictions < aKeys/2 {
		t.Errorf("a: %d of %d keys found after b's flood, %d of them evicted through the flusher", aFound, aKeys, a.Evictions)
	}
	if bFound == aKeys*bPerA {
		t.Errorf("every one of b's keys was found though the queue dropped %d", st.Flusher.Drops)
	}
}

package tier

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestTenantKeepsDRAMWhileOthersFlushLag checks T61: while DRAM records
// are on their way to a slow or stalled cold device, the last resorts of
// a writer that finds no room (makeRoom's evictSegment, a cleaning's
// record with no room in either log) evict no key of another tenant: a's
// keys, within its quota, all stay in DRAM while b writes far past its
// quota into a stalled device, and a counts no eviction. b's writers
// wait for the device instead (ErrColdBehind past Flusher.Wait, T25).
func TestTenantKeepsDRAMWhileOthersFlushLag(t *testing.T) {
	var open func()
	c := openCold(t, func(o *Options) {
		o.Flusher.Wait = 50 * time.Millisecond
		o.Tenants = []Tenant{{Name: "a", Prefix: "a:", Quota: 192 << 10}, {Name: "b", Prefix: "b:", Quota: 192 << 10}}
		open = stallCold(t, o) // flush_test.go
	})
	const aKeys, size = 60, 1000
	val := make([]byte, size)
	aKey := func(i int) []byte { return fmt.Appendf(nil, "a:%03d", i) }
	for i := range aKeys {
		set(t, c, aKey(i), val)
	}
	before := tenantRow(t, c.Stats(), "a")
	written, refused := 0, 0
	for i := 0; i < 3000 && refused < 20; i++ {
		_, err := c.Set(fmt.Appendf(nil, "b:%05d", i), val, SetOptions{})
		switch {
		case err == nil:
			written++
		case errors.Is(err, ErrColdBehind):
			refused++
		default:
			t.Fatal(err)
		}
		if i%10 == 0 { // a keeps reading its keys
			if _, ok, err := c.Get(nil, aKey(i%aKeys)); err != nil || !ok {
				t.Fatalf("a's key %d: %v %v", i%aKeys, ok, err)
			}
		}
	}
	st := c.Stats()
	after := tenantRow(t, st, "a")
	t.Logf("b: %d written, %d refused; DRAM dropped %d; a: %+v", written, refused, st.DRAM.Dropped, after)
	out := 0
	for i := range aKeys {
		if w := c.Where(aKey(i)); w != "hot" && w != "warm" {
			out++
			t.Logf("a's key %s is in %q", aKey(i), w)
		}
	}
	if out > 0 || after.Evictions != before.Evictions || after.DRAMItems != aKeys {
		t.Errorf("%d of a's %d keys left DRAM (%d in a's LFU), %d evictions counted to a, while b wrote into a stalled device", out, aKeys, after.DRAMItems, after.Evictions-before.Evictions)
	}
	open()
	settle(t, c)
	if st := c.Stats(); st.Flusher.Drops != 0 || st.Lost != 0 {
		t.Fatalf("flusher drops %d, lost %d: want none", st.Flusher.Drops, st.Lost)
	}
}

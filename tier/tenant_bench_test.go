package tier

import (
	"fmt"
	"strings"
	"testing"
)

// benchTenants is n tenants of prefixes "t<i>:" (i in 0..n-1).
func benchTenants(n int) []Tenant {
	ts := make([]Tenant, n)
	for i := range ts {
		ts[i] = Tenant{Name: fmt.Sprintf("t%d", i), Prefix: fmt.Sprintf("t%d:", i), Quota: 1}
	}
	return ts
}

// BenchmarkTenantOf: the selector (a binary search over the sorted
// prefixes) beside its peer, a scan of every prefix with HasPrefix, for
// a key of the last tenant and for a key of none.
func BenchmarkTenantOf(b *testing.B) {
	for _, n := range []int{1, 8, 64, 255} {
		ts := benchTenants(n)
		tt := newTenants(ts, 1<<30)
		for _, key := range [][]byte{fmt.Appendf(nil, "t%d:doc:12345678", n-1), []byte("other:doc:12345678")} {
			b.Run(fmt.Sprintf("tenants=%d/key=%.5s/search", n, key), func(b *testing.B) {
				for b.Loop() {
					tt.of(key)
				}
			})
			b.Run(fmt.Sprintf("tenants=%d/key=%.5s/scan", n, key), func(b *testing.B) {
				for b.Loop() {
					scanTenant(ts, key)
				}
			})
		}
	}
}

// scanTenant is the peer of tenants.of: every prefix in turn.
func scanTenant(ts []Tenant, key []byte) uint8 {
	k := viewString(key)
	for i := range ts {
		if strings.HasPrefix(k, ts[i].Prefix) {
			return uint8(i + 1)
		}
	}
	return 0
}

// BenchmarkViewTenants: a GET served from hot (View into a reused
// buffer) without tenants and with 8, the key a tenant's: what the
// selector and the per-tenant counter add to the hot path.
func BenchmarkViewTenants(b *testing.B) {
	for _, n := range []int{0, 8} {
		b.Run(fmt.Sprintf("tenants=%d", n), func(b *testing.B) {
			o := smallOptions(newFakeClock())
			o.HotBytes, o.HotMaxValue = 8<<20, 64<<10
			if n > 0 {
				o.Tenants = benchTenants(n)
				for i := range o.Tenants {
					o.Tenants[i].Quota = 256 << 10
				}
			}
			c, err := Open(o)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			keys := make([][]byte, 1024)
			for i := range keys {
				keys[i] = fmt.Appendf(nil, "t3:doc:%d", i)
				if _, err := c.Set(keys[i], make([]byte, 100), SetOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			buf := make([]byte, 0, 256)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, _, ok, _, _ := c.View(buf, keys[i&1023], nil); !ok {
					b.Fatal("miss")
				}
				i++
			}
		})
	}
}

package tier

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/coldstore"
)

// coldFlood is TestTenantColdFloodKeepsOthersKeys's workload on a cache
// whose tenants a and b have cold namespaces of their own (isolated) or
// share one cold store of the same total size: a reads a working set
// twice its DRAM quota, so that part of it lives in cold, a quiet phase
// then a phase in which b writes 20 times its cold quota of new keys,
// one between two of a's reads. It returns a's hit ratio counting cold
// hits and its DRAM hit ratio in each phase, and how many of a's keys
// are still found afterwards.
type coldFloodResult struct {
	quiet, flooded         float64 // hits from any tier / reads
	dramQuiet, dramFlooded float64
	kept                   int // of a's keys, found after the flood
	before, after          Stats
}

const (
	coldFloodBQuota = 1 << 20 // b's cold namespace
	coldFloodAQuota = 4 << 20 // a's: its whole working set
)

func coldFlood(t *testing.T, isolated bool) coldFloodResult {
	needURing(t)
	o := smallOptions(newFakeClock())
	o.HotBytes, o.HotMaxValue, o.WarmBytes = 1<<20, 16<<10, 3<<20
	o.Tenants = []Tenant{{Name: "a", Prefix: "a:", Quota: 1 << 20}, {Name: "b", Prefix: "b:", Quota: 1 << 20}}
	// 64 KiB regions: namespaces of 1 MiB; the shared store is the three
	// namespaces' bytes in one.
	cc := coldstore.Config{DataDir: t.TempDir(), RegionBytes: 64 << 10, Capacity: 7 << 20}
	if isolated {
		cc.Capacity, cc.DefaultBytes = 8<<20, 2<<20 // 1 MiB of it the volume's table
		cc.Tenants = []coldstore.TenantSpace{{Name: "a", Bytes: coldFloodAQuota}, {Name: "b", Bytes: coldFloodBQuota}}
	}
	o.OpenCold = func(p backend.Params) (backend.Store, error) { return coldstore.Open(cc, p) }
	c := openWith(t, o)
	val := make([]byte, floodValue)
	r := rand.New(rand.NewPCG(1, 2))
	aKey := func(i int) []byte { return fmt.Appendf(nil, "a:%05d", i) }
	for i := range floodHot + floodCold {
		set(t, c, aKey(i), val)
	}
	bKeys := 0
	phase := func(flood bool) (hit, dram float64) {
		hits, dramHits := 0, 0
		for range floodReads {
			i := r.IntN(floodHot)
			if r.IntN(5) == 0 {
				i = floodHot + r.IntN(floodCold)
			}
			_, _, ok, cold, err := c.View(nil, aKey(i), nil)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				hits++
				if !cold {
					dramHits++
				}
			}
			if flood {
				set(t, c, fmt.Appendf(nil, "b:%07d", bKeys), val)
				bKeys++
			}
		}
		c.processVictims()
		return float64(hits) / floodReads, float64(dramHits) / floodReads
	}
	phase(false) // warm-up: a's keys settle in its LFU
	var res coldFloodResult
	res.quiet, res.dramQuiet = phase(false)
	res.before = c.Stats()
	res.flooded, res.dramFlooded = phase(true)
	settle(t, c)
	res.after = c.Stats()
	for i := range floodHot + floodCold {
		if _, ok, err := c.Get(nil, aKey(i)); err == nil && ok {
			res.kept++
		}
	}
	return res
}

func tenantRow(t *testing.T, s Stats, name string) TenantStats {
	t.Helper()
	for _, ts := range s.Tenants {
		if ts.Name == name {
			return ts
		}
	}
	t.Fatalf("no tenant %q in %+v", name, s.Tenants)
	return TenantStats{}
}

// TestTenantColdFloodKeepsOthersKeys (T49): tenants a and b with cold
// namespaces of their own; a's working set is twice its DRAM quota, so
// part of it is only in cold; b writes 20 times its cold quota. a's hit
// ratio counting cold hits stays within 0.01 of its quiet figure, its DRAM
// hit ratio within the bound of TestTenantFloodKeepsOthersHitRatio, every
// one of a's keys is still found after the flood, and the reclaims the
// flood caused are b's namespace's alone, counted to b. The control: the
// same flood on one cold store of the same size that a and b share takes
// a's cold keys, and a's hit ratio falls by more than the bound.
func TestTenantColdFloodKeepsOthersKeys(t *testing.T) {
	iso := coldFlood(t, true)
	p := iso.dramQuiet
	bound := 4 * math.Sqrt(2*p*(1-p)/floodReads)
	a0, a1 := tenantRow(t, iso.before, "a"), tenantRow(t, iso.after, "a")
	b0, b1 := tenantRow(t, iso.before, "b"), tenantRow(t, iso.after, "b")
	d1 := tenantRow(t, iso.after, DefaultTenant)
	t.Logf("namespaces: a's hit ratio quiet %.4f, flooded %.4f; DRAM %.4f -> %.4f (bound ±%.4f); %d of a's %d keys found after",
		iso.quiet, iso.flooded, iso.dramQuiet, iso.dramFlooded, bound, iso.kept, floodHot+floodCold)
	t.Logf("a cold %+v\nb cold %+v", a1.Cold, b1.Cold)
	if iso.quiet-iso.flooded > 0.01 {
		t.Errorf("a's hit ratio fell from %.4f to %.4f under b's flood, more than 0.01", iso.quiet, iso.flooded)
	}
	if math.Abs(iso.dramFlooded-iso.dramQuiet) > bound {
		t.Errorf("a's DRAM hit ratio moved from %.4f to %.4f, more than %.4f", iso.dramQuiet, iso.dramFlooded, bound)
	}
	if iso.kept != floodHot+floodCold {
		t.Errorf("%d of a's %d keys found after b's flood", iso.kept, floodHot+floodCold)
	}
	if b1.Cold.Evictions == b0.Cold.Evictions || b1.Cold.Writes-b0.Cold.Writes < floodReads*9/10 {
		t.Errorf("b wrote %d keys to cold and its namespace reclaimed %d records in the flood", b1.Cold.Writes-b0.Cold.Writes, b1.Cold.Evictions-b0.Cold.Evictions)
	}
	if a1.Cold.Evictions != 0 || d1.Cold.Evictions != 0 || a1.Cold.Namespace[:4] != "own:" || b1.Cold.Capacity > coldFloodBQuota {
		t.Errorf("reclaims counted to a %d and to the default namespace %d; a's namespace %q, b's capacity %d",
			a1.Cold.Evictions, d1.Cold.Evictions, a1.Cold.Namespace, b1.Cold.Capacity)
	}
	if a1.Cold.Keys+int64(a1.DRAMItems) < floodHot+floodCold || a1.Cold.Reads == a0.Cold.Reads {
		t.Errorf("a's namespace holds %d keys, read %d times in the flood", a1.Cold.Keys, a1.Cold.Reads-a0.Cold.Reads)
	}
	if testing.Short() {
		return
	}
	shared := coldFlood(t, false)
	d0s, d1s := tenantRow(t, shared.before, DefaultTenant), tenantRow(t, shared.after, DefaultTenant)
	t.Logf("one shared cold store: a's hit ratio quiet %.4f, flooded %.4f; %d of a's keys found after; the shared namespace reclaimed %d records",
		shared.quiet, shared.flooded, shared.kept, d1s.Cold.Evictions-d0s.Cold.Evictions)
	if shared.quiet-shared.flooded <= 0.01 || shared.kept > (floodHot+floodCold)*3/4 {
		t.Errorf("on one shared cold store b's flood took a from %.4f to %.4f and left %d of its keys: the test cannot tell isolation from none",
			shared.quiet, shared.flooded, shared.kept)
	}
}

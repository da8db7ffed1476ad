package tier

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestTenantOf: a key belongs to the tenant whose prefix it starts with,
// else to the default tenant (id 0), whatever the order the tenants were
// given in; the match allocates nothing (T35).
func TestTenantOf(t *testing.T) {
	ts := []Tenant{
		{Name: "rag", Prefix: "rag:", Quota: 1},
		{Name: "emb", Prefix: "emb:", Quota: 1},
		{Name: "b", Prefix: "b", Quota: 1},
		{Name: "ab", Prefix: "ab:", Quota: 1},
		{Name: "llm", Prefix: "llm:cache:", Quota: 1},
	}
	tt := newTenants(ts, 100)
	for _, c := range []struct {
		key  string
		want uint8
	}{
		{"rag:doc:1", 1}, {"rag:", 1}, {"rag", 0}, {"ra", 0}, {"rag;x", 0},
		{"emb:7", 2}, {"emb", 0},
		{"b", 3}, {"bz", 3}, {"b:1", 3}, {"a", 0}, {"ab", 0}, {"ab:", 4}, {"ab:x", 4}, {"abc", 0},
		{"llm:cache:k", 5}, {"llm:cach", 0}, {"llm:", 0},
		{"", 0}, {"zzz", 0}, {"\x00", 0}, {"\xff", 0},
	} {
		if got := tt.of([]byte(c.key)); got != c.want {
			t.Errorf("of(%q) = %d (%s), want %d (%s)", c.key, got, tt.names[got], c.want, tt.names[c.want])
		}
	}
	if tt.names[0] != DefaultTenant || tt.names[4] != "ab" {
		t.Fatalf("names %v", tt.names)
	}
	key := []byte("llm:cache:some-key")
	if n := testing.AllocsPerRun(100, func() { tt.of(key) }); n != 0 {
		t.Fatalf("of allocates %v times a call", n)
	}
	if none := newTenants(nil, 100); none.enabled() || none.of(key) != 0 {
		t.Fatal("without tenants every key is the default tenant's")
	}
}

// TestTenantsValidate: every bad tenant is refused at once, each error
// naming the field (T35).
func TestTenantsValidate(t *testing.T) {
	o := smallOptions(newFakeClock())
	dram := o.HotBytes + o.WarmBytes
	o.Tenants = []Tenant{
		{Name: "", Prefix: "x:", Quota: 1},
		{Name: "default", Prefix: "y:", Quota: 1},
		{Name: "a b", Prefix: "z:", Quota: 1},
		{Name: "ok", Prefix: "", Quota: 1},
		{Name: "ok", Prefix: "p:", Quota: 0},
		{Name: "p2", Prefix: "p:q", Quota: dram},
	}
	o.EnsureDefaults()
	err := o.Validate()
	if !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("Validate = %v", err)
	}
	for _, want := range []string{
		"Tenants[0].Name is empty",
		`Tenants[1].Name "default" is reserved`,
		`Tenants[2].Name "a b": only letters`,
		"Tenants[3].Prefix is empty",
		`Tenants[4].Name "ok" is Tenants[3]'s too`,
		"Tenants[4].Quota 0 must be positive",
		`Tenants[5].Prefix "p:q" overlaps Tenants[4].Prefix "p:"`,
		"oversubscription is refused",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate's error lacks %q:\n%v", want, err)
		}
	}
	o.Tenants = []Tenant{{Name: "a", Prefix: "a:", Quota: dram / 2}, {Name: "b", Prefix: "b:", Quota: dram / 2}}
	if err := o.Validate(); err != nil {
		t.Fatalf("quotas summing to the DRAM budget: %v", err)
	}
	o.Tenants = []Tenant{{Name: "a", Prefix: "same", Quota: 1}, {Name: "b", Prefix: "same", Quota: 1}}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "overlaps") {
		t.Fatalf("two tenants of one prefix: %v", err)
	}
	// Quotas whose sum is past int64 are oversubscription too (the sum
	// wrapped below the budget, and was accepted).
	o.Tenants = []Tenant{{Name: "a", Prefix: "a:", Quota: math.MaxInt64}, {Name: "b", Prefix: "b:", Quota: math.MaxInt64}, {Name: "c", Prefix: "c:", Quota: 2}}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "oversubscription is refused") {
		t.Fatalf("quotas summing past int64: %v", err)
	}
}

// TestTenantQuotaEvictsItsOwn: a tenant written past its quota keeps at
// most its capacity (its quota's share of what the LFU may keep) in DRAM
// and evicts its own keys, every eviction counted to it; the other
// tenants' keys all stay in DRAM, and the per-tenant key counts add up to
// the cache's (T35).
func TestTenantQuotaEvictsItsOwn(t *testing.T) {
	var dram int64
	c := openCold(t, func(o *Options) {
		dram = o.HotBytes + o.WarmBytes
		o.Tenants = []Tenant{{Name: "small", Prefix: "s:", Quota: dram / 8}, {Name: "other", Prefix: "o:", Quota: dram / 4}}
	})
	val := make([]byte, 1000)
	var others [][]byte
	for i := range 100 { // 100 KB: within other's quota (144 KiB)
		k := fmt.Appendf(nil, "o:%d", i)
		others = append(others, k)
		set(t, c, k, val)
	}
	for i := range 100 { // 100 KB of default keys: within what the quotas leave
		set(t, c, fmt.Appendf(nil, "d:%d", i), val)
	}
	for i := range 2000 { // 2 MB, 28 times small's quota
		set(t, c, fmt.Appendf(nil, "s:%d", i), val)
	}
	settle(t, c) // Keys is exact once no cold write is in flight (T37)
	st := c.Stats()
	if len(st.Tenants) != 3 {
		t.Fatalf("tenants %+v", st.Tenants)
	}
	def, small, other := st.Tenants[0], st.Tenants[1], st.Tenants[2]
	t.Logf("default %+v\nsmall %+v\nother %+v", def, small, other)
	if small.Name != "small" || other.Name != "other" || def.Name != DefaultTenant {
		t.Fatalf("names %q %q %q", def.Name, small.Name, other.Name)
	}
	if want := int64(float64(small.Quota) * float64(st.DRAM.Capacity) / float64(dram)); small.Capacity < want-1 || small.Capacity > want+1 {
		t.Fatalf("small's capacity %d, want its quota's share of %d: %d", small.Capacity, st.DRAM.Capacity, want)
	}
	if def.Capacity+small.Capacity+other.Capacity != st.DRAM.Capacity || def.Quota != dram-small.Quota-other.Quota {
		t.Fatalf("capacities %d+%d+%d of %d, default quota %d", def.Capacity, small.Capacity, other.Capacity, st.DRAM.Capacity, def.Quota)
	}
	if small.DRAMBytes > small.Capacity || small.DRAMBytes < small.Capacity/2 {
		t.Fatalf("small keeps %d bytes in DRAM, its capacity is %d", small.DRAMBytes, small.Capacity)
	}
	// Each of small's keys is in DRAM, evicted from it, or was written
	// straight to cold (no room in DRAM at the time of its write).
	if direct := c.st.coldWrites.Load(); small.Evictions+uint64(small.DRAMItems)+direct != 2000 || direct > 20 {
		t.Fatalf("small: %d evicted + %d in DRAM + %d written straight to cold, of 2000", small.Evictions, small.DRAMItems, direct)
	}
	if def.Evictions != 0 || other.Evictions != 0 {
		t.Fatalf("evictions counted to default %d and other %d: small's writes evict its own keys only", def.Evictions, other.Evictions)
	}
	var tierEvictions uint64
	for _, l := range st.Tiers[:2] {
		tierEvictions += l.Evictions
	}
	if tierEvictions != small.Evictions {
		t.Fatalf("the DRAM tiers evicted %d, small %d", tierEvictions, small.Evictions)
	}
	for _, k := range others {
		if w := c.Where(k); w != "hot" && w != "warm" {
			t.Fatalf("other's key %s is in %q after small's flood", k, w)
		}
	}
	// A tenant's Keys counts its keys in the directory: small's that only
	// cold holds are forgotten (T37), the cache's Keys counts them.
	if def.Keys != 100 || small.Keys < int64(small.DRAMItems) || small.Keys > 2000 || other.Keys != 100 || st.Keys != 2200 {
		t.Fatalf("keys: default %d small %d (%d in DRAM) other %d, cache %d", def.Keys, small.Keys, small.DRAMItems, other.Keys, st.Keys)
	}
	for i := range 10 {
		c.Get(nil, fmt.Appendf(nil, "o:%d", i))
		c.Get(nil, fmt.Appendf(nil, "o:missing:%d", i))
	}
	if st = c.Stats(); st.Tenants[2].DRAMHits != 10 || st.Tenants[2].Hits != 10 || st.Tenants[2].Misses != 10 || st.Tenants[0].Misses != 0 {
		t.Fatalf("other's reads: %+v; default's %+v", st.Tenants[2], st.Tenants[0])
	}
}

func set(t *testing.T, c *Cache, k, v []byte) {
	t.Helper()
	if _, err := c.Set(k, v, SetOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestModelTenants: the model test with three tenants sharing the cache
// (and cold): checkEntries also checks every entry's tenant and each
// tenant's live count after every step; at the end no tenant's LFU is
// over its capacity (T35).
func TestModelTenants(t *testing.T) {
	clk := newFakeClock()
	c := openCold(t, func(o *Options) {
		o.Clock, o.WarmBytes = clk.Now, 256<<10
		o.Tenants = []Tenant{{Name: "zero", Prefix: "k0", Quota: 64 << 10}, {Name: "one", Prefix: "k1", Quota: 32 << 10}}
	})
	runModel(t, c, clk, steps(t, 5000), 300, 256<<10, 5)
	c.processVictims()
	st := c.Stats()
	var keys int64
	for _, ts := range st.Tenants {
		keys += ts.Keys
		if ts.DRAMBytes > ts.Capacity {
			t.Errorf("tenant %s keeps %d bytes in DRAM, capacity %d", ts.Name, ts.DRAMBytes, ts.Capacity)
		}
	}
	if keys != st.DirectoryKeys {
		t.Fatalf("tenants' keys add up to %d, the cache's directory has %d", keys, st.DirectoryKeys)
	}
	t.Logf("tenants: %+v", st.Tenants)
}

// floodRun is TestTenantFloodKeepsOthersHitRatio's workload on a cache
// with (or without) tenants: tenant a reads a hot/cold mix, a quiet phase
// then a phase in which tenant b writes 20 times its quota of new keys,
// one between two of a's reads. It returns a's DRAM hit ratio in each
// phase, measured by the test itself (View's cold flag).
type floodResult struct {
	quiet, flooded float64
	c              *Cache
	before, after  Stats // around the flood
	hotSet         [][]byte
	direct         uint64 // keys written straight to cold during the flood (no room in DRAM then)
}

const (
	floodReads = 20000 // a's reads per phase
	floodHot   = 200   // a's hot keys (80% of its reads)
	floodCold  = 2000  // a's other keys (20%), twice its quota
	floodValue = 1000
)

func floodRun(t *testing.T, tenants bool) floodResult {
	c := openCold(t, func(o *Options) {
		o.HotBytes, o.HotMaxValue, o.WarmBytes = 1<<20, 16<<10, 3<<20
		if tenants {
			o.Tenants = []Tenant{{Name: "a", Prefix: "a:", Quota: 1 << 20}, {Name: "b", Prefix: "b:", Quota: 1 << 20}}
		} else {
			o.HotBytes, o.WarmBytes = 512<<10, 1536<<10 // a's and b's quotas, shared
		}
	})
	val := make([]byte, floodValue)
	r := rand.New(rand.NewPCG(1, 2))
	var res floodResult
	res.c = c
	aKey := func(i int) []byte { return fmt.Appendf(nil, "a:%05d", i) }
	for i := range floodHot + floodCold {
		set(t, c, aKey(i), val)
	}
	for i := range floodHot {
		res.hotSet = append(res.hotSet, aKey(i))
	}
	bKeys := 0
	phase := func(flood bool) float64 {
		dramHits := 0
		for range floodReads {
			i := r.IntN(floodHot)
			if r.IntN(5) == 0 {
				i = floodHot + r.IntN(floodCold)
			}
			_, _, ok, cold, err := c.View(nil, aKey(i), nil)
			if err != nil || !ok {
				t.Fatalf("a's key %d: ok %v, err %v; stats %+v", i, ok, err, c.Stats())
			}
			if !cold {
				dramHits++
			}
			if flood {
				set(t, c, fmt.Appendf(nil, "b:%07d", bKeys), val)
				bKeys++
			}
		}
		c.processVictims()
		return float64(dramHits) / floodReads
	}
	phase(false) // warm-up: a's keys settle in its LFU
	res.quiet = phase(false)
	res.before, res.direct = c.Stats(), c.st.coldWrites.Load()
	res.flooded = phase(true)
	res.after, res.direct = c.Stats(), c.st.coldWrites.Load()-res.direct
	return res
}

// TestTenantFloodKeepsOthersHitRatio: tenant a reads a hot/cold mix (80%
// of its reads on 200 keys, 20% on 2000 more, twice its quota); tenant b
// then floods, writing 20 MB, 20 times its quota, interleaved with a's
// reads. a's DRAM hit ratio stays within four standard deviations of the
// difference of two phases' sampled ratios (sqrt(2p(1-p)/n), n reads a
// phase); every eviction in the flood is counted to b alone, all but 2%
// of a's hot keys stay in DRAM, and the tenants' counters agree with what a's reads
// saw (T35). Without tenants, a and b sharing one LFU of their two
// quotas' DRAM, the same flood moves a's ratio by more than the bound:
// the test can see a flood.
func TestTenantFloodKeepsOthersHitRatio(t *testing.T) {
	res := floodRun(t, true)
	p := res.quiet
	bound := 4 * math.Sqrt(2*p*(1-p)/floodReads)
	t.Logf("tenants: a's DRAM hit ratio quiet %.4f, flooded %.4f (bound ±%.4f)", res.quiet, res.flooded, bound)
	if math.Abs(res.flooded-res.quiet) > bound {
		t.Errorf("a's DRAM hit ratio moved from %.4f to %.4f under b's flood, more than %.4f", res.quiet, res.flooded, bound)
	}
	a0, b0, d0 := res.before.Tenants[1], res.before.Tenants[2], res.before.Tenants[0]
	a1, b1, d1 := res.after.Tenants[1], res.after.Tenants[2], res.after.Tenants[0]
	t.Logf("a: %+v -> %+v\nb: %+v -> %+v", a0, a1, b0, b1)
	direct := res.direct
	t.Logf("b: %d keys written straight to cold", direct)
	if got := b1.Evictions - b0.Evictions + uint64(b1.DRAMItems) + direct; got != floodReads || direct > floodReads/20 {
		t.Errorf("b: %d evicted + %d in DRAM + %d written straight to cold, of %d written", b1.Evictions-b0.Evictions, b1.DRAMItems, direct, floodReads)
	}
	if d1.Evictions != d0.Evictions || d1.Keys != 0 {
		t.Errorf("the default tenant, which has no keys, counts %d evictions in the flood", d1.Evictions-d0.Evictions)
	}
	var tiers0, tiers1 uint64
	for i := range 2 {
		tiers0 += res.before.Tiers[i].Evictions
		tiers1 += res.after.Tiers[i].Evictions
	}
	if got := (b1.Evictions - b0.Evictions) + (a1.Evictions - a0.Evictions); got != tiers1-tiers0 {
		t.Errorf("the tenants' evictions in the flood add up to %d, the DRAM tiers' to %d", got, tiers1-tiers0)
	}
	if a1.DRAMBytes > a1.Capacity || b1.DRAMBytes > b1.Capacity {
		t.Errorf("over capacity: a %d of %d, b %d of %d", a1.DRAMBytes, a1.Capacity, b1.DRAMBytes, b1.Capacity)
	}
	if got := float64(a1.DRAMHits-a0.DRAMHits) / float64(a1.Hits+a1.Misses-a0.Hits-a0.Misses); math.Abs(got-res.flooded) > 0.001 {
		t.Errorf("a's counters give a DRAM hit ratio of %.4f in the flood, its reads saw %.4f", got, res.flooded)
	}
	// a's own LFU may still let a hot key go now and then (its sketch is
	// approximate, and a's 20% of cold reads churn its DRAM all along):
	// once under -race in CI; b's flood must not take a's hot set.
	out := 0
	for _, k := range res.hotSet {
		if w := res.c.Where(k); w != "hot" && w != "warm" {
			out++
			t.Logf("a's hot key %s is in %q after b's flood", k, w)
		}
	}
	if out > len(res.hotSet)/50 {
		t.Errorf("%d of a's %d hot keys left DRAM during b's flood, more than 2%%", out, len(res.hotSet))
	}
	if testing.Short() {
		return
	}
	shared := floodRun(t, false)
	t.Logf("one LFU, no tenants: a's DRAM hit ratio quiet %.4f, flooded %.4f; %d keys written straight to cold", shared.quiet, shared.flooded, shared.direct)
	if shared.quiet-shared.flooded <= bound {
		t.Errorf("on one shared LFU b's flood moved a's DRAM hit ratio by %.4f only: the test cannot tell isolation from none", shared.quiet-shared.flooded)
	}
}

// TestTenantSurvivesRestart: a key only cold holds after a restart is
// adopted into the tenant its prefix names: its key alone decides (T35).
func TestTenantSurvivesRestart(t *testing.T) {
	needURing(t)
	o := smallOptions(newFakeClock())
	emuCold(&o, t.TempDir())
	o.Durability = DurabilityDrain
	o.Tenants = []Tenant{{Name: "a", Prefix: "a:", Quota: 64 << 10}}
	c, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	set(t, c, []byte("a:1"), []byte("v1"))
	set(t, c, []byte("b:1"), []byte("v2"))
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if c, err = Open(o); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, k := range []string{"a:1", "b:1"} {
		if v, ok, err := c.Get(nil, []byte(k)); err != nil || !ok {
			t.Fatalf("%s after the restart: %q %v %v", k, v, ok, err)
		}
	}
	st := c.Stats()
	if a, d := st.Tenants[1], st.Tenants[0]; a.Keys != 1 || a.Hits != 1 || d.Keys != 1 || d.Hits != 1 {
		t.Fatalf("after the restart: a %+v, default %+v", a, d)
	}
	checkEntries(t, c, -1)
}

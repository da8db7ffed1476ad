package tier

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/policy"
)

// Tenant is a named namespace of the cache (docs/DESIGN.md §3.5): the keys
// that start with Prefix, which keep at most their Quota of DRAM. Keys
// that match no tenant's prefix belong to the default tenant, which has
// the DRAM the quotas leave.
type Tenant struct {
	// Name names the tenant in INFO (tenant_<Name>) and /metrics
	// (tenant="<Name>"): letters, digits, '_', '-' and '.'; not "default".
	Name string
	// Prefix selects the tenant's keys. No prefix may start with another
	// (a key would belong to both).
	Prefix string
	// Quota is the tenant's share of the DRAM budget (HotBytes +
	// WarmBytes), in bytes. Its keys may keep key and value bytes in hot
	// and warm up to the same share of what the DRAM tiers' eviction
	// policy may keep (DRAMStats.Capacity × Quota / (HotBytes +
	// WarmBytes)); past it the tenant's own least valued keys leave DRAM
	// (T35). Quotas summing above HotBytes + WarmBytes are refused.
	Quota int64
	// FlushWeight is the tenant's weighted share of the write-behind
	// flusher (T50, flusher F14): of each batch to cold while other
	// tenants have writes queued, and of the queue when it is full (a
	// tenant past its share loses its own oldest queued evictions). 0
	// weighs 1, as does the default tenant.
	FlushWeight int
}

// maxFlushWeight bounds a tenant's FlushWeight (flusher's weights).
const maxFlushWeight = 1 << 20

// DefaultTenant names the tenant of the keys no Tenant's prefix matches.
const DefaultTenant = "default"

// maxTenants is how many Tenants an entry's one-byte tenant id can name
// besides the default tenant (id 0).
const maxTenants = 255

// validName reports whether s is a tenant name: it is printed in an INFO
// field name and a label value, so no ':', ',', '=' or white space.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// validateTenants reports every problem of ts at once; dram is HotBytes +
// WarmBytes.
func validateTenants(ts []Tenant, dram int64) []error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidOptions}, a...)...))
	}
	if len(ts) > maxTenants {
		bad("Tenants: %d tenants, at most %d", len(ts), maxTenants)
	}
	names := map[string]int{}
	var sum int64
	for i, t := range ts {
		switch {
		case t.Name == "":
			bad("Tenants[%d].Name is empty", i)
		case t.Name == DefaultTenant:
			bad("Tenants[%d].Name %q is reserved for the keys no prefix matches", i, t.Name)
		case !validName(t.Name):
			bad("Tenants[%d].Name %q: only letters, digits, '_', '-' and '.'", i, t.Name)
		default:
			if j, dup := names[t.Name]; dup {
				bad("Tenants[%d].Name %q is Tenants[%d]'s too", i, t.Name, j)
			}
			names[t.Name] = i
		}
		if t.FlushWeight < 0 || t.FlushWeight > maxFlushWeight {
			bad("Tenants[%d].FlushWeight %d is outside [0, %d]", i, t.FlushWeight, maxFlushWeight)
		}
		if t.Prefix == "" {
			bad("Tenants[%d].Prefix is empty: it would match every key", i)
		}
		if t.Quota < 1 {
			bad("Tenants[%d].Quota %d must be positive", i, t.Quota)
		} else {
			sum += min(t.Quota, math.MaxInt64-sum) // saturated: never wraps below dram
		}
	}
	// Sorted, a prefix that starts another is followed by one that starts
	// with it (every string between p and p+x starts with p).
	order := sortedTenants(ts)
	for k := 1; k < len(order); k++ {
		i, j := order[k-1], order[k]
		if ts[i].Prefix != "" && strings.HasPrefix(ts[j].Prefix, ts[i].Prefix) {
			bad("Tenants[%d].Prefix %q overlaps Tenants[%d].Prefix %q: a key may belong to one tenant only", j, ts[j].Prefix, i, ts[i].Prefix)
		}
	}
	if sum > dram {
		total := fmt.Sprintf("%d bytes", sum)
		if sum == math.MaxInt64 {
			total = "more than int64 holds"
		}
		bad("Tenants: the quotas sum to %s, above HotBytes + WarmBytes %d: oversubscription is refused (a quota is DRAM its tenant can count on)", total, dram)
	}
	return errs
}

// flushWeights are the flusher's class weights, by tenant id (nil
// without tenants: one FIFO).
func (o *Options) flushWeights() []int {
	if len(o.Tenants) == 0 {
		return nil
	}
	w := []int{1}
	for _, t := range o.Tenants {
		w = append(w, t.FlushWeight)
	}
	return w
}

// backendTenants are the tenants as the cold store routes them.
func (o *Options) backendTenants() []backend.Tenant {
	var ts []backend.Tenant
	for _, t := range o.Tenants {
		ts = append(ts, backend.Tenant{Name: t.Name, Prefix: t.Prefix})
	}
	return ts
}

// sortedTenants is the indexes of ts in the order of their prefixes.
func sortedTenants(ts []Tenant) []int {
	order := make([]int, len(ts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(ts[a].Prefix, ts[b].Prefix) })
	return order
}

// tenants selects a key's tenant and holds each tenant's counters. The id
// of a tenant is 0 for the default tenant, i+1 for Options.Tenants[i].
type tenants struct {
	prefixes []string // the tenants' prefixes, sorted
	ids      []uint8  // ids[i] is the tenant whose prefix is prefixes[i]
	names    []string // by id
	quotas   []int64  // by id; the default tenant's is what the others leave
	counts   []tenantCounts
}

// tenantCounts are one tenant's read counters, on their own cache lines.
type tenantCounts struct {
	hits   [5]atomic.Uint64 // by policy.Tier (None unused)
	misses atomic.Uint64
	_      [24]byte
}

func newTenants(ts []Tenant, dram int64) *tenants {
	t := &tenants{names: []string{DefaultTenant}, quotas: []int64{dram}, counts: make([]tenantCounts, len(ts)+1)}
	for _, i := range sortedTenants(ts) {
		t.prefixes = append(t.prefixes, ts[i].Prefix)
		t.ids = append(t.ids, uint8(i+1))
	}
	for _, x := range ts {
		t.names = append(t.names, x.Name)
		t.quotas = append(t.quotas, x.Quota)
		t.quotas[0] -= x.Quota
	}
	return t
}

// of is key's tenant: the one whose prefix key starts with, else the
// default tenant. No prefix starts another, so the only candidate is the
// greatest prefix not above key: a binary search over the prefixes, no
// map lookup and no allocation (T35).
func (t *tenants) of(key []byte) uint8 {
	p := t.prefixes
	if len(p) == 0 {
		return 0
	}
	k := viewString(key)
	lo, hi := 0, len(p)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if p[mid] <= k {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo > 0 && strings.HasPrefix(k, p[lo-1]) {
		return t.ids[lo-1]
	}
	return 0
}

// enabled reports whether any tenant is configured (the default tenant
// alone keeps no counters of its own: the cache's are its).
func (t *tenants) enabled() bool { return len(t.prefixes) > 0 }

// count counts a read of a key of tenant id: served by tier tr, or a miss.
func (t *tenants) count(id uint8, tr policy.Tier, hit bool) {
	if hit {
		t.counts[id].hits[tr].Add(1)
	} else {
		t.counts[id].misses.Add(1)
	}
}

// capacities is each tenant's LFU capacity, by id: a tenant's quota's
// share of capacity (what the DRAM tiers' eviction policy may keep of
// dram, the DRAM budget), and what the others leave to the default tenant
// (at least 1: an LFU needs a capacity).
func (t *tenants) capacities(capacity, dram int64) []int64 {
	cs := make([]int64, len(t.quotas))
	rest := capacity
	for id := 1; id < len(cs); id++ {
		cs[id] = max(int64(float64(t.quotas[id])*float64(capacity)/float64(dram)), 1)
		rest -= cs[id]
	}
	cs[0] = max(rest, 1)
	return cs
}

package bench

import (
	"sync/atomic"
	"unsafe"

	"github.com/zeebo/xxh3"
	"testing"

	"github.com/dgraph-io/ristretto/v2"
	"github.com/maypok86/otter/v2"

	"github.com/tiercache/tiercache/numa"
	"github.com/tiercache/tiercache/policy"
	"github.com/tiercache/tiercache/tier"
)

// The caches a hit-ratio run compares, and what each is charged. Every
// cache gets the same DRAM budget in bytes and is charged the same for an
// item: len(key) + len(value) (itemCost), nothing else (B1).
//
//   - ristretto: MaxCost = budget, cost = itemCost, IgnoreInternalCost (its
//     own ~ per-item bookkeeping is not charged), NumCounters = 10 per
//     value that fits in the budget.
//   - otter: MaximumWeight = budget, Weigher = itemCost.
//   - tiercache-dram: hot + warm = budget (HotBytes = hotFrac × budget,
//     WarmBytes = the rest), no cold tier, every other option at tier's
//     defaults (tierOptions). The two logs hold the values alone (the keys
//     are in the directory); each keeps two segments free for its cleaning,
//     and the LFU leaves 3% of the rest unused. Not charged to anyone, as
//     no peer's bookkeeping is: the key directory on the Go heap
//     (tier.DirEntryBytes a key).
//   - tiercache+cold: tiercache-dram plus an emulated cold tier of 2 GiB.
//     NOT at equal bytes: cold holds every key written; it is reported on
//     its own line, for reference, with TIERCACHE_BENCH_COLD=1.
const (
	cacheRistretto = "ristretto"
	cacheOtter     = "otter"
	cacheTierDRAM  = "tiercache-dram"
	cacheTierCold  = "tiercache+cold"
	// cachePolicy is tiercache's eviction policy alone (policy.LFU over a
	// map), charged itemCost as the peers are: the policy's quality apart
	// from how tiercache stores values.
	cachePolicy = "tiercache-policy"
)

func itemCost(k, v []byte) int64 { return int64(len(k) + len(v)) }

// cacheUnderTest is one cache behind the read-through loop.
type cacheUnderTest struct {
	get   func(k []byte) bool
	set   func(k, v []byte)
	held  func() int64 // items held now (tiercache: hot + warm copies)
	close func()
	tc    *tier.Cache // nil for the peers
}

// tierOptions is tiercache with hot + warm = dram bytes, hotFrac of it hot,
// and no cold tier, every other option at tier's defaults (segments of a
// 64th of each log, at least 4 KiB).
func tierOptions(dram int64, hotFrac float64) tier.Options {
	hot := int64(float64(dram) * hotFrac)
	return tier.Options{
		HotBytes:    hot,
		HotMaxValue: int(min(hot/64, 64<<10)),
		WarmConfig:  tier.WarmConfig{WarmBytes: dram - hot, WarmArena: numa.ArenaOptions{Node: numa.Unbound}},
		Logger:      benchLogger(),
	}
}

func openCache(tb testing.TB, name string, budget int64, hotFrac float64) cacheUnderTest {
	switch name {
	case cacheRistretto:
		rc, err := ristretto.NewCache(&ristretto.Config[string, []byte]{
			NumCounters: budget / valueBytes * 10, MaxCost: budget, BufferItems: 64, IgnoreInternalCost: true})
		if err != nil {
			tb.Fatal(err)
		}
		return cacheUnderTest{
			get:   func(k []byte) bool { _, ok := rc.Get(string(k)); return ok },
			set:   func(k, v []byte) { rc.Set(string(k), v, itemCost(k, v)) },
			held:  func() int64 { return (rc.MaxCost() - rc.RemainingCost()) / (keyBytes + valueBytes) },
			close: rc.Close,
		}
	case cacheOtter:
		oc := otter.Must(&otter.Options[string, []byte]{MaximumWeight: uint64(budget),
			Weigher: func(k string, v []byte) uint32 { return uint32(len(k) + len(v)) }})
		return cacheUnderTest{
			get:   func(k []byte) bool { _, ok := oc.GetIfPresent(string(k)); return ok },
			set:   func(k, v []byte) { oc.Set(string(k), v) },
			held:  func() int64 { return int64(oc.EstimatedSize()) },
			close: func() { oc.StopAllGoroutines() },
		}
	}
	if name == cachePolicy {
		return openPolicyCache(tb, budget)
	}
	o := tierOptions(budget, hotFrac)
	if name == cacheTierCold {
		withEmulatedCold(tb, &o)
	}
	tc, err := tier.Open(o)
	if err != nil {
		tb.Fatal(err)
	}
	var dst []byte
	return cacheUnderTest{
		get: func(k []byte) bool {
			v, ok, _ := tc.Get(dst[:0], k)
			dst = v
			return ok
		},
		set: func(k, v []byte) {
			if _, err := tc.Set(k, v, tier.SetOptions{}); err != nil {
				setErrors.Add(1)
			}
		},
		held: func() int64 {
			var n int64
			for _, t := range tc.Stats().Tiers[:2] {
				n += t.Items
			}
			return n
		},
		close: func() { _ = tc.Close() },
		tc:    tc,
	}
}

// setErrors counts the Sets tiercache refused in a run (the read-through
// loop has nowhere to report them; the run's counters print it).
var setErrors atomic.Int64

type policyItem struct {
	policy.Node
	key string
	val []byte
}

func openPolicyCache(tb testing.TB, budget int64) cacheUnderTest {
	p, err := policy.NewLFU(policy.LFUOptions{Capacity: budget, Items: int(budget / (keyBytes + valueBytes))})
	if err != nil {
		tb.Fatal(err)
	}
	m := map[string]*policyItem{}
	evict := func(n *policy.Node) { delete(m, (*policyItem)(unsafe.Pointer(n)).key) }
	return cacheUnderTest{
		get: func(k []byte) bool {
			it, ok := m[string(k)]
			if ok {
				p.Access(&it.Node)
			}
			return ok
		},
		set: func(k, v []byte) {
			if it, ok := m[string(k)]; ok {
				it.val = v
				p.Update(&it.Node, uint32(itemCost(k, v)), evict)
				return
			}
			it := &policyItem{key: string(k), val: v}
			m[it.key] = it
			p.Add(&it.Node, xxh3.Hash(k), uint32(itemCost(k, v)), evict)
		},
		held:  func() int64 { return int64(p.Len()) },
		close: func() {},
	}
}

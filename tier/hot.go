package tier

import (
	"math/rand/v2"

	"github.com/dgraph-io/ristretto/v2"
	"github.com/zeebo/xxh3"

	"github.com/tiercache/tiercache/policy"
)

// hotOverhead is the Go heap a hot item takes beside its key and value
// allocation, charged to the hot budget with it: the hotEntry (a 96-byte
// size class), ristretto's store slot (key hash, conflict hash, value
// pointer and expiration: 48 bytes in a Swiss table between 7/16 and 7/8
// full) and its policy's cost-map slot, with the maps' spare capacity.
// Measured by
// TestHotCostCoversHeap, which fails if the heap a hot item takes
// exceeds what cost charges.
const hotOverhead = 320

// hotEntry is what the hot tier stores: the value with its own key, version
// and expiry, because ristretto's callbacks only know the key hash. It is
// immutable once stored. Version 0 marks a tombstone (see del).
type hotEntry struct {
	key   []byte
	val   []byte
	ver   uint64
	exp   int64
	fresh bool // set by Set with a transit copy that hotApplied removes
	// alloc is the heap bytes key and val take together (joinKV), which
	// cost charges rather than their lengths.
	alloc int32
	// ent is the directory entry the copy was made for (nil for a
	// tombstone); read its fields only under the key's shard lock.
	ent *entry
	sh  *shard // ent's shard
}

func (e *hotEntry) cost() int64 {
	return int64(max(int(e.alloc), len(e.key)+len(e.val))) + hotOverhead
}

// hot wraps ristretto v2. Keys are passed as string views of the caller's
// bytes (ristretto hashes them and never keeps them).
type hot struct {
	rc *ristretto.Cache[string, *hotEntry]
}

// newHot builds the hot tier. onApplied runs on ristretto's goroutine when
// it takes up a fresh item (set with cost 0), just before admitting it.
func newHot(o *Options, onEvict, onApplied func(*hotEntry)) (*hot, error) {
	h := &hot{}
	rc, err := ristretto.NewCache(&ristretto.Config[string, *hotEntry]{
		NumCounters:        o.HotCounters,
		MaxCost:            hotMaxCost(o),
		BufferItems:        64,
		IgnoreInternalCost: true,
		Metrics:            true,
		KeyToHash: func(k string) (uint64, uint64) {
			h := xxh3.HashString128(k)
			return h.Lo, h.Hi
		},
		Cost: func(e *hotEntry) int64 {
			onApplied(e)
			return e.cost()
		},
		OnEvict: func(it *ristretto.Item[*hotEntry]) { onEvict(it.Value) },
		// Called only for a Set, so after h.rc is set below.
		OnReject: func(it *ristretto.Item[*hotEntry]) {
			if !h.replaceRejected(it.Value) {
				onEvict(it.Value)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	h.rc = rc
	return h, nil
}

// replaceRejected handles, on ristretto's goroutine, a copy its policy
// refused: a Set of a key whose previous Set ristretto had not applied
// yet reaches it as a second new item, and its policy refuses a new item
// for a key it holds — while its store keeps the older copy. If ristretto
// stores a copy of e's key and e is still the key's current copy (its
// entry names it), e takes that copy's place, as an update (T27); else
// the refusal stands.
func (h *hot) replaceRejected(e *hotEntry) bool {
	if e.ent == nil || e.ent.hot.Load() != e || e.cost() > h.rc.MaxCost() {
		return false // stale, or refused for its size: the refusal stands
	}
	cur, ok := h.rc.Get(viewString(e.key))
	if !ok || cur == nil || cur == e || string(cur.key) != viewString(e.key) {
		return false
	}
	return h.rc.Set(viewString(e.key), e, e.cost())
}

// get returns the hot copy of key if it has version ver.
func (h *hot) get(key []byte, ver uint64) (*hotEntry, bool) {
	e, ok := h.rc.Get(viewString(key))
	if !ok || e == nil || e.ver != ver || string(e.key) != viewString(key) {
		return nil, false
	}
	return e, true
}

// touch records an access of key in ristretto's frequency sketch (hot hits
// are served from the directory and sampled into it).
func (h *hot) touch(key []byte) { h.rc.Get(viewString(key)) }

// touchEvery: a hot hit is passed on to ristretto's sketch once in this
// many, at random. A ristretto Get is a second map lookup plus its policy
// goroutine's sketch and doorkeeper updates (cache misses all), about 2 µs
// of CPU on the sidecar's GET path; TinyLFU only compares frequencies, so
// a uniform sample keeps its decisions (bench/ BenchmarkHitRatio).
const touchEvery = 32

// touchSampled is called for the hot hits policy.Sample chose (one in
// policy.SampleEvery) and touches one in touchEvery hits overall.
func (h *hot) touchSampled(key []byte) {
	if rand.Uint32()%(touchEvery/policy.SampleEvery) == 0 {
		h.touch(key)
	}
}

// set offers e to ristretto and reports false when ristretto dropped it
// outright. A fresh set (the key is not in hot) is applied asynchronously:
// the caller keeps e in transit until onApplied runs. An update replaces the
// stored value at once.
func (h *hot) set(e *hotEntry, fresh bool) bool {
	cost := e.cost()
	if fresh {
		cost = 0 // ristretto calls Cost, hence onApplied, when it applies it
	}
	return h.rc.Set(viewString(e.key), e, cost)
}

// has reports whether hot stores any copy of key (a tombstone counts).
func (h *hot) has(key []byte) bool {
	e, ok := h.rc.Get(viewString(key))
	return ok && e != nil && string(e.key) == viewString(key)
}

// del drops hot's copy of key. ristretto's Del is not used: it removes the
// key from the store at once but queues a second removal by hash, which
// ristretto's goroutine applies later to whatever the store then holds —
// possibly a newer value that a Set put in place meanwhile (a fresh Set
// applied between the two, then updated), which would vanish without an
// eviction callback. Instead a present copy is replaced in place by a
// tombstone (version 0, no value, charged for its key), which no read
// serves, hotEvicted ignores and the next Set of the key overwrites in place.
func (h *hot) del(key []byte) {
	if !h.has(key) {
		return // not in ristretto's store; a copy it applies later is stale
	}
	k := append([]byte(nil), key...)
	t := &hotEntry{key: k, alloc: int32(cap(k))}
	h.rc.Set(viewString(t.key), t, t.cost())
}

package tier

import (
	"sync"
	"sync/atomic"

	"github.com/zeebo/xxh3"
)

const shardCount = 256

// entry is the directory's record of one key: the authority on whether the
// key exists, its newest version and its expiry. A copy in any tier is served
// only if it carries exactly ver (T2). Its state and what cold holds of it
// change only through the methods in entry.go (L1-L6).
type entry struct {
	ver  uint64 // version of the newest write (or of the delete, for a tombstone)
	exp  int64  // unix ns, 0 = none
	size int64  // value bytes
	// state: live, a tombstone awaiting its cold delete, or gone from the
	// map (entry.go).
	state entryState
	// cold: what cold may hold of the key (entry.go).
	cold coldState
	// expMoved: Expire or Persist changed exp after the version was
	// written, so a cold copy of it may carry another expiry; such an
	// entry is not forgotten (T15) until a new version replaces it.
	expMoved bool
	// kind: what the value of version ver is to the layer above (T23).
	kind Kind
	// recent: looked up by a caller that decides from a cold lookup before
	// taking the shard lock (known), or adopted from cold; a trim pass
	// clears it instead of forgetting the entry (second chance, T15).
	// Placed here it fills the padding before hot: the entry stays 48 bytes.
	recent atomic.Bool
	// hot is the key's hot copy, or nil: set just before a copy is offered
	// to hot (so that a rejection or eviction callback, which may run at
	// once on ristretto's goroutine, always finds it), cleared when hot
	// drops it or refuses it. It may briefly name a copy hot no longer
	// holds (or an older version); a read serves it only if its version is
	// ver, and copies are immutable, so that is always the right value.
	// Atomic because promotions store it under the shard's read lock.
	hot atomic.Pointer[hotEntry]
}

// adoptLocked records key, found in a cold store of an earlier run with
// meta m and a size-byte value, as a live entry (sh.mu held).
func (sh *shard) adoptLocked(key []byte, m Meta, size int) {
	e, ks := newEntry(key)
	e.write(m.Version, m.Expiry, int64(size), m.Kind)
	e.coldWritten(m.Version, m.Expiry)
	e.recent.Store(true)
	sh.m[ks] = e
	sh.live.Add(1)
}

type shard struct {
	mu sync.RWMutex
	m  map[string]*entry
	// epoch counts removals from m; a reader that looked a key up in cold
	// adopts it only if no removal happened meanwhile (T4).
	epoch uint64
	// pend: the newest pending version of each key with a writethrough
	// change in flight (writethrough.go, T28); nil until the first.
	pend map[string]uint64
	// live counts the entries of m that are not tombstones (expired ones
	// included until the sweep removes them); changed under mu, read
	// without it by keyCount.
	live atomic.Int64
	_    [24]byte // keep shards on separate cache lines
}

type directory struct {
	shards [shardCount]shard
}

func newDirectory() *directory {
	d := &directory{}
	for i := range d.shards {
		d.shards[i].m = make(map[string]*entry)
	}
	return d
}

// hashKey is the 128-bit key hash: lo picks the shard and feeds ristretto and
// the policy, hi is ristretto's conflict check.
func hashKey(key []byte) (lo, hi uint64) {
	h := xxh3.Hash128(key)
	return h.Lo, h.Hi
}

func (d *directory) shard(lo uint64) *shard { return &d.shards[lo>>56] }

// keyCount is the number of keys without walking the map: expired keys the
// sweep has not removed yet are counted (as Redis's DBSIZE counts them).
func (d *directory) keyCount() int64 {
	var n int64
	for i := range d.shards {
		n += d.shards[i].live.Load()
	}
	return n
}

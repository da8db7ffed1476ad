package tier

import (
	"sync"
	"sync/atomic"

	"github.com/zeebo/xxh3"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/policy"
	"github.com/tiercache/tiercache/tier/dram"
)

const shardCount = 256

// entry is the directory's record of one key: the authority on whether the
// key exists, its newest version and its expiry. A copy in any tier is served
// only if it carries exactly ver (T2). Its state and what cold holds of it
// change only through the methods in entry.go (L1-L6).
type entry struct {
	// node is the key's place in the DRAM tiers' eviction policy and the
	// key's hash (mem.go); changed only under mem.mu.
	node policy.Node
	ver  uint64 // version of the newest write (or of the delete, for a tombstone)
	exp  int64  // unix ns, 0 = none
	// sizeSlot: the value's bytes in its low sizeBits (valueSize), and
	// the entry's slot in its shard's expiry index in the rest (expSlot,
	// expindex.go, T55; 0: none). Changed under the shard's write lock.
	sizeSlot uint64
	// key is the entry's key; the map's key shares its bytes.
	key string
	// loc is where the DRAM record of version ver is (in the log where
	// names), 0 for none (mem.go). Changed under the shard's write lock
	// (and mem.mu for the log); readers copy the record under the read
	// lock.
	loc     dram.Loc
	recSize uint32 // the record's bytes (size may already be the next version's)
	where   memTier
	// flushing: loc's record is being written to cold where it is (the
	// LFU evicted it); it is neither moved nor freed until the write
	// completes (flushDone), and served meanwhile.
	flushing bool
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
	// tenant: the id of the key's tenant (tenant.go), set before anyone
	// sees the entry and never changed: the key decides it.
	tenant uint8
	// hdr: cold holds a record header of the key, of some version (a put
	// of it completed, or it was adopted from cold, and no cold delete
	// completed since). Changed only with the shard's write lock held, by
	// shard.setHeader, which keeps the shard's hdrs count (T37).
	hdr bool
	// marks are set by readers holding the shard's read lock:
	//   - markRecent: looked up by a caller that decides from a cold
	//     lookup before taking the shard lock (known), or adopted from
	//     cold; a trim pass clears it instead of forgetting the entry
	//     (second chance, T15);
	//   - markTouched: the DRAM record was read since it was placed:
	//     cleaning the hot log keeps it in hot once (second chance)
	//     instead of demoting it.
	marks atomic.Uint32
}

const (
	markRecent uint32 = 1 << iota
	markTouched
)

// mark sets bit m (any lock).
func (e *entry) mark(m uint32) {
	if e.marks.Load()&m == 0 {
		e.marks.Or(m)
	}
}

// marked reports bit m.
func (e *entry) marked(m uint32) bool { return e.marks.Load()&m != 0 }

// unmark clears bit m and reports whether it was set.
func (e *entry) unmark(m uint32) bool { return e.marks.And(^m)&m != 0 }

// adoptLocked records key, found in a cold store of an earlier run with
// meta m and a size-byte value, as a live entry (sh.mu held).
// tenant is the key's tenant id.
func (sh *shard) adoptLocked(key []byte, m backend.Meta, size int, tenant uint8) {
	lo, _ := hashKey(key)
	e, ks := newEntry(key, lo, tenant)
	e.write(m.Version, m.Expiry, int64(size), kindOfFlags(m.Flags))
	e.coldWritten(m.Version, m.Expiry)
	e.mark(markRecent)
	sh.m[ks] = e
	sh.fileExpiry(e, 0)
	sh.addLive(e, 1)
	sh.setHeader(e, true)
}

// setHeader records whether cold holds a record header of e's key, e an
// entry of sh's map (sh.mu held for writing): the cold store counts every
// header (Cold.UserKeys), so Keys counts a key of the directory once
// whether or not cold holds it (T37).
func (sh *shard) setHeader(e *entry, has bool) {
	if e.hdr == has {
		return
	}
	e.hdr = has
	if has {
		sh.hdrs.Add(1)
	} else {
		sh.hdrs.Add(-1)
	}
}

// removeLocked takes e, key ks's entry, out of sh's map for good (sh.mu
// held for writing): gone, its live and header counts with it.
func (sh *shard) removeLocked(ks string, e *entry) {
	if e.state == stateLive {
		sh.addLive(e, -1)
	}
	sh.setHeader(e, false)
	e.leave()
	sh.unfileExpiry(e)
	delete(sh.m, ks)
	sh.epoch++
	sh.slotRemovals[e.node.Hash()%removalSlots]++
}

// removalSlots is how many classes of keys a shard counts its removals
// in (adoptEpoch).
const removalSlots = 64

// adoptEpoch is what a reader that looks key (hash lo) up in cold to adopt
// it checks before adopting (sh.mu held): the removals from the map of
// keys of its class and the Flushes that swapped the map. A removal of
// the key itself changes it, so a copy deleted meanwhile is never
// adopted (T4); a removal of another key changes it only once in
// removalSlots, so adoptions do not keep retrying while keys of the
// shard are forgotten (T37).
func (sh *shard) adoptEpoch(lo uint64) uint64 {
	return sh.swaps<<32 | uint64(sh.slotRemovals[lo%removalSlots])
}

// addLive adds d to the live count of sh and of e's tenant (sh.mu held
// for writing).
func (sh *shard) addLive(e *entry, d int64) {
	sh.live.Add(d)
	if sh.tenantLive != nil {
		sh.tenantLive[e.tenant].Add(d)
	}
}

// resetLive zeroes sh's live counts, its own and its tenants' (Flush gave
// it an empty map; sh.mu held for writing).
func (sh *shard) resetLive() {
	sh.live.Store(0)
	sh.hdrs.Store(0)
	for i := range sh.tenantLive {
		sh.tenantLive[i].Store(0)
	}
}

type shard struct {
	mu sync.RWMutex
	m  map[string]*entry
	// epoch counts removals from m; a reader that looked a key up in cold
	// adopts it only if no removal happened meanwhile (T4).
	epoch uint64
	// slotRemovals counts the removals from m by key class, swaps the
	// Flushes that replaced m (adoptEpoch).
	slotRemovals [removalSlots]uint32
	swaps        uint64
	// pend: the newest pending version of each key with a writethrough
	// change in flight (writethrough.go, T28); nil until the first.
	pend map[string]uint64
	// live counts the entries of m that are not tombstones (expired ones
	// included until the sweep removes them); changed under mu, read
	// without it by keyCount.
	live atomic.Int64
	// hdrs counts the entries of m whose key cold holds a header of (hdr:
	// tombstones too), read without mu by keyCount.
	hdrs atomic.Int64
	// tenantLive is live by tenant id; nil without Options.Tenants (the
	// slice header takes the padding that kept shards on separate cache
	// lines).
	tenantLive []atomic.Int64
	// exps is the expiry index of m's live entries with an expiry
	// (expindex.go, T55), nil until the first; Flush drops it with m.
	// Changed under mu.
	exps *expIndex
	// clock is the cache's clock (Cache.now): a new wheel starts at it.
	clock func() int64
}

type directory struct {
	shards [shardCount]shard
}

// setClock gives every shard the cache's clock.
func (d *directory) setClock(now func() int64) {
	for i := range d.shards {
		d.shards[i].clock = now
	}
}

// newDirectory makes an empty directory counting the live keys of
// tenants tenants apart when there are more than the default tenant.
func newDirectory(tenants int) *directory {
	d := &directory{}
	for i := range d.shards {
		d.shards[i].m = make(map[string]*entry)
		if tenants > 1 {
			d.shards[i].tenantLive = make([]atomic.Int64, tenants)
		}
	}
	return d
}

// tenantKeys is the live keys of tenant id, counted as keyCount counts.
func (d *directory) tenantKeys(id uint8) int64 {
	var n int64
	for i := range d.shards {
		if tl := d.shards[i].tenantLive; tl != nil {
			n += tl[id].Load()
		}
	}
	return n
}

// hashKey is the key's hash: XXH3-128, whose bytes are the cold store's
// device key of the key's record header (nvmekv.DefaultHasher). lo's high
// 32 bits are the cold index's tag of that device key (nvmekv.TagOf),
// its low 32 bits the hash's own: the tag's top byte picks the shard, so
// a shard holds the keys of one range of tags, the order a cold scan
// walks (scan.go, T37); lo feeds the policies (the LFU's sketch, the
// promotion sketch). hi is the hash's high half, unused here.
func hashKey(key []byte) (lo, hi uint64) {
	h := xxh3.Hash128(key)
	dk := h.Bytes()
	return uint64(nvmekv.TagOf(&dk))<<32 | h.Lo&0xffffffff, h.Hi
}

// tagOfHash is the cold index tag within lo (hashKey).
func tagOfHash(lo uint64) uint32 { return uint32(lo >> 32) }

// shardOfTag is the index of the shard holding the keys of tag.
func shardOfTag(tag uint32) int { return int(tag >> 24) }

func (d *directory) shard(lo uint64) *shard { return &d.shards[shardOfTag(tagOfHash(lo))] }

// keyCount is the number of keys without walking the map: expired keys the
// sweep has not removed yet are counted (as Redis's DBSIZE counts them).
func (d *directory) keyCount() int64 {
	var n int64
	for i := range d.shards {
		n += d.shards[i].live.Load()
	}
	return n
}

// expiringCount is the number of entries filed in the shards' expiry
// indexes (T55), taking each shard's read lock in turn.
func (d *directory) expiringCount() int64 {
	var n int64
	for i := range d.shards {
		sh := &d.shards[i]
		sh.mu.RLock()
		if sh.exps != nil {
			n += int64(sh.exps.n)
		}
		sh.mu.RUnlock()
	}
	return n
}

// headerCount is the number of entries whose key cold holds a header of
// (hdr), without walking the map.
func (d *directory) headerCount() int64 {
	var n int64
	for i := range d.shards {
		n += d.shards[i].hdrs.Load()
	}
	return n
}

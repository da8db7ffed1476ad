package tier

import (
	"sync"
	"sync/atomic"

	"github.com/tiercache/tiercache/policy"
	"github.com/tiercache/tiercache/tier/dram"
)

// memTier names the log an entry's DRAM record is in.
type memTier uint8

const (
	memNone memTier = iota
	memHot
	memWarm
	// memLive: the DRAM copy is a live structure on the Go heap, held by
	// hot (live.go): entry.loc is its handle in the shard's table.
	memLive
	memTiers
)

func (w memTier) tier() policy.Tier {
	switch w {
	case memHot, memLive:
		return policy.Hot
	case memWarm:
		return policy.Warm
	}
	return policy.None
}

// The DRAM tiers (docs/DESIGN.md §3): hot and warm are two logs of
// off-heap records (tier/dram), hot in plain memory, warm in an arena that
// may be bound to a CXL node; one LFU (policy.LFU, a W-TinyLFU) decides
// which keys DRAM keeps, over both, by their bytes. Where a kept key's
// record is — hot or warm — is placement, decided apart from it: a new
// value goes to hot (warm if it is larger than HotMaxValue), cleaning the
// oldest hot segment moves its records to warm unless they were read
// since they were placed (a second chance in hot), and a warm hit the
// promotion policy deems frequent moves up to hot. Keys the LFU evicts
// go to cold, written from where they are (flushing), or are lost
// without a cold tier.
//
// Locks: a shard's lock, then mem.mu, never the other way round; a record
// is freed or moved only with its entry's shard lock held for writing,
// so a reader holding the read lock may copy it. Cleaning takes one
// shard lock at a time.

// placementSamples is how many warm pages the placement check samples.
const placementSamples = 1024

// writerKeep is the free segments a log keeps for its cleanings: a writer
// never takes the last one.
const writerKeep = 1

// memRounds bounds the cleanings one allocation may run before it gives
// up (the value then goes to cold, or the write fails).
const memRounds = 64

// memMargin is the share of the DRAM logs the LFU leaves unused beyond
// the segments they keep: dead records a cleaning can take back, so that
// cleaning the sparsest segment frees room at a bounded copying cost.
const memMargin = 0.01

type mem struct {
	// cleaning serializes each log's cleanings (makeRoom): concurrent ones
	// would each take the segments the log keeps free and leave none to
	// clean into. Taken before mu, hot's before warm's.
	cleaning [memTiers]sync.Mutex
	// owners is each log's cleaning's copy of a segment's owners
	// (BeginClean), reused under cleaning[w] and cleared after.
	owners [memTiers][]*entry
	mu     sync.Mutex
	// lfus is each tenant's LFU, by tenant id (0: the default tenant, the
	// only one without Options.Tenants): an entry is in its tenant's only
	// (entry.tenant), so a tenant's keys are evicted to make room for its
	// own alone (T35). Their capacities sum to memCapacity.
	lfus    []*policy.LFU
	logs    [memTiers]*dram.Log[*entry] // by memTier; warm nil without a warm tier
	victims []*entry                    // evicted by the LFU, records not yet released
	// hasVictims is len(victims) > 0, read without mu (processVictims).
	hasVictims atomic.Bool
	evictFn    func(*policy.Node)
	items      [memTiers]int64 // records by memTier
	bytes      [memTiers]int64
	evicted    [memTiers]uint64 // LFU evictions by the tier the record was in
	// tenantEvicted is the LFU evictions (and records dropped by a
	// cleaning) by tenant id.
	tenantEvicted []uint64
	pinned        [memTiers]int64 // bytes of records being written to cold where they are, by log
	// placement is the fraction of sampled warm pages on the warm node
	// when the log was opened (-1: not checked, or no warm tier).
	placement float64
	moved     uint64 // hot records demoted to warm
	rescued   uint64 // hot records kept in hot by their second chance
	compact   uint64 // records moved within a log by its cleaning
	dropped   uint64 // records a cleaning found no room for in either log (evicted)
	forced    uint64 // times the LFU evicted below its capacity for want of a segment worth cleaning
	// demotedFreq is the LFU's count of the records hot's cleaning demotes
	// to warm, averaged over the last demotions (demotedWindow), times
	// demotedScale: the bar a warm hit's count passes to move to hot (T56).
	demotedFreq int64
	// liveDemoted counts the live structures demoted for hot's room (to
	// warm records, or out of DRAM), live_mem.go.
	liveDemoted uint64
}

// memCapacity is what the LFU may keep: each log less the segments it
// keeps free and its open segment, less memMargin.
func memCapacity(logs ...*dram.Log[*entry]) int64 {
	var c int64
	for _, l := range logs {
		if l != nil {
			c += l.Capacity() - int64(writerKeep)*int64(l.SegmentBytes())
		}
	}
	return max(int64(float64(c)*(1-memMargin)), 1)
}

// newMem makes the DRAM tiers over the logs: one LFU per tenant of ten,
// each with its quota's share of memCapacity; dram is the DRAM budget the
// quotas are shares of (HotBytes + WarmBytes).
func newMem(hot, warm *dram.Log[*entry], ten *tenants, dram int64) (*mem, error) {
	m := &mem{placement: -1}
	for _, c := range ten.capacities(memCapacity(hot, warm), dram) {
		lfu, err := policy.NewLFU(policy.LFUOptions{Capacity: c})
		if err != nil {
			return nil, err
		}
		m.lfus = append(m.lfus, lfu)
	}
	m.tenantEvicted = make([]uint64, len(m.lfus))
	m.logs[memHot], m.logs[memWarm] = hot, warm
	if warm != nil {
		if _, bound := warm.Arena().Bound(); bound {
			if f, err := warm.Arena().Placement(placementSamples); err == nil {
				m.placement = f
			}
		}
	}
	m.evictFn = func(n *policy.Node) {
		m.victims = append(m.victims, entryOf(n))
		m.hasVictims.Store(true)
	}
	return m, nil
}

// admitLocked makes e, whose record holds an n-byte value, resident in
// the LFU, or updates its weight (mem.mu held). An item weighs its key
// and value bytes, as the caches bench/ compares with are charged.
func (m *mem) admitLocked(e *entry, n int) {
	w := uint32(len(e.key) + n)
	if e.node.Resident() {
		m.lfuOf(e).Update(&e.node, w, m.evictFn)
	} else {
		m.lfuOf(e).Add(&e.node, hashOf(e), w, m.evictFn)
	}
}

// lfuOf is the LFU of e's tenant.
func (m *mem) lfuOf(e *entry) *policy.LFU { return m.lfus[e.tenant] }

// capacity is what the LFUs may keep together (mem.mu held).
func (m *mem) capacity() int64 {
	var c int64
	for _, l := range m.lfus {
		c += l.Capacity()
	}
	return c
}

// sketchBytes is the Go heap the LFUs' frequency sketches take (mem.mu
// held).
func (m *mem) sketchBytes() int64 {
	var n int64
	for _, l := range m.lfus {
		n += l.SketchBytes()
	}
	return n
}

// bytesOf is e's record (the shard lock held).
func (m *mem) bytesOf(e *entry) []byte { return m.logs[e.where].Bytes(e.loc, int(e.recSize)) }

// alloc places a record of n bytes for e in log w, keeping keep free
// segments (mem.mu held).
func (m *mem) allocLocked(w memTier, n int, e *entry, keep int) (dram.Loc, []byte, bool) {
	l := m.logs[w]
	if l == nil {
		return 0, nil, false
	}
	loc, b, ok := l.Alloc(n, e, keep)
	if ok {
		m.items[w]++
		m.bytes[w] += int64(n)
	}
	return loc, b, ok
}

// freeLocked frees the n-byte record at loc in log w (mem.mu held).
func (m *mem) freeLocked(w memTier, loc dram.Loc, n int) {
	m.logs[w].Free(loc, n)
	m.items[w]--
	m.bytes[w] -= int64(n)
}

// closeLogs unmaps both arenas.
func (m *mem) closeLogs() error {
	var first error
	for _, l := range m.logs {
		if l != nil {
			if err := l.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// dropLocked takes e out of the LFU, if it is there, and counts its record
// as dropped from log w by a cleaning that found no room for it (m.mu
// held); the caller then evicts it (evictLocked).
func (m *mem) dropLocked(e *entry, w memTier) {
	if e.node.Resident() {
		m.lfuOf(e).Remove(&e.node)
		m.evicted[w]++
		m.tenantEvicted[e.tenant]++
	}
	m.dropped++
}

// flusherLagLocked reports whether DRAM records are on their way to cold
// (evictions the flusher has not written yet, pinned where they are):
// their writes give room back, so a cleaning's last resorts take no
// other tenant's keys meanwhile (T61). mem.mu held.
func (m *mem) flusherLagLocked() bool { return m.pinned[memHot]+m.pinned[memWarm] > 0 }

// beginClean starts the cleaning of log w's segment seg (BeginClean) and
// returns its owners in m.owners[w] (mu and cleaning[w] held).
func (m *mem) beginClean(w memTier, seg int) []*entry {
	m.owners[w] = m.logs[w].BeginClean(seg, m.owners[w])
	return m.owners[w]
}

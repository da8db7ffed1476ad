package tier

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/behind"
	"github.com/tiercache/tiercache/flusher"
	"github.com/tiercache/tiercache/policy"
)

type counters struct {
	hits   [5]atomic.Uint64 // by policy.Tier (None unused)
	misses atomic.Uint64
	_      [64]byte

	promotions, demotions, forgotten, flushed, lost, phantoms, adopted, coldKept atomic.Uint64
	coldErrors, coldDeletes, tombstones, expired, coldWrites                     atomic.Uint64
	mgetSubmissions, purged, coldBehind                                          atomic.Uint64
	sweepVisits                                                                  atomic.Uint64 // entries the sweep took from the expiry index (T55)
}

// count counts a read of key: served by tier t, or a miss; with Tenants,
// for key's tenant too.
func (c *Cache) count(key []byte, t policy.Tier, hit bool) {
	if hit {
		c.st.hits[t].Add(1)
	} else {
		c.st.misses.Add(1)
	}
	if c.ten.enabled() {
		c.ten.count(c.ten.of(key), t, hit)
	}
}

// TierLevel is one tier's counters.
type TierLevel struct {
	Name      string
	Items     int64 // -1 if unknown
	Bytes     int64 // -1 if unknown
	Hits      uint64
	Misses    uint64 // reads that fell through this tier
	Evictions uint64
}

// Stats is a snapshot of the cache.
type Stats struct {
	Keys int64 // keys, counting expired ones not yet swept and those only cold holds (O(1), T37; Len is exact and O(keys) over the directory)
	// DirectoryKeys is the live keys of the directory: those in DRAM, in
	// flight, or only in cold but not forgotten yet (T12, T15, T37).
	DirectoryKeys int64
	// Expiring is the directory's keys with an expiry (the expiry index's
	// entries, T55), expired ones not yet swept among them: INFO
	// keyspace's expires. O(shards).
	Expiring int64
	Tiers    []TierLevel // hot, warm, cold, remote in that order (absent tiers omitted)

	Misses      uint64 // Get/MGet keys found nowhere
	Promotions  uint64 // warm hits moved to hot, and cold hits given a DRAM record
	Demotions   uint64 // hot records moved to warm by a cleaning of hot
	ColdKept    uint64 // DRAM evictions not written to cold, which held that version already (T18)
	Flushed     uint64 // DRAM evictions written to cold from where they are
	Lost        uint64 // keys forgotten because their only copy was dropped, failed or reclaimed
	Forgotten   uint64 // cold-only keys the directory forgot to stay within MaxKeys (still in cold)
	Phantoms    uint64 // reads that found the key's version nowhere after retrying
	Adopted     uint64 // keys found in a cold store from an earlier run
	ColdErrors  uint64 // cold-tier errors (served as misses or dropped writes)
	ColdDeletes uint64 // cold deletes queued to invalidate old copies
	Tombstones  uint64 // deletes that had to wait for a cold delete
	Expired     uint64 // keys purged by the expiry sweep
	InTransit   int64  // values on their way to cold that DRAM does not hold (transit)
	// Purged counts the keys the background purge of a Flush purged (T14);
	// PurgePending the keys flushed and not purged yet (their DRAM records
	// and heap still held), Purging whether a purge runs.
	Purged       uint64
	PurgePending int64
	Purging      bool

	// The DRAM tiers' eviction policy (policy.LFU) and its logs.
	DRAM DRAMStats
	// Tenants: each tenant's counters, the default tenant first, then
	// Options.Tenants in their order; none without Options.Tenants.
	Tenants         []TenantStats
	MGetSubmissions uint64 // cold GetMany submissions made by MGet

	Flusher flusher.Stats
	// ColdBehind counts writes refused with ErrColdBehind: they waited
	// Flusher.Wait for the flusher in Backpressure mode (T25).
	ColdBehind uint64

	WarmNode      int
	WarmPlacement float64

	ColdBackend      string
	ColdFreeBytes    uint64
	ColdBytesRead    uint64
	ColdBytesWritten uint64
	ColdStalledIO    uint64        // device I/O in flight longer than ColdStallAfter
	ColdOldestIO     time.Duration // age of the oldest device I/O in flight
	ColdWriteError   error         // why the cold store takes no more writes; nil while writable

	// Where the emulated cold store's index is (T33): its node (-1
	// unbound), its bytes and those bound to the node (tables under 2 MiB
	// live on the Go heap and cannot be), the tables that could not be
	// bound, and the fraction of its resident off-heap pages on the node
	// (-1: unbound, or nothing off the heap yet).
	ColdIndexNode                       int
	ColdIndexBytes, ColdIndexBoundBytes int64
	ColdIndexBindErrors                 uint64
	ColdIndexPlacement                  float64

	// Remote is the remote tier's figures (zero, Backend "", without one).
	Remote RemoteStats
}

// RemoteStats are the remote tier's figures (T38-T42).
type RemoteStats struct {
	Backend string
	// Reads the local tiers missed and the remote answered: hits, misses,
	// errors and timeouts (both misses to the client); hits admitted
	// locally.
	Hits, Misses, Errors, Admitted uint64
	// Invalidated counts local copies dropped because another sidecar
	// changed the key; Resyncs the times invalidations may have been lost,
	// so that every local copy became suspect (unless KeepOnResync).
	Invalidated, Resyncs uint64
	// Suspect local copies checked against the remote (T42): found the
	// same (Validated), replaced by the remote's value, or dropped as the
	// remote no longer holds them.
	Validated, Replaced, Dropped uint64
	// WaitTimeouts counts write-through waits that gave up; ClearErrors the
	// FLUSHALLs that could not clear the remote at once, ClearPending
	// whether one still waits for a retry.
	WaitTimeouts, ClearErrors uint64
	ClearPending              bool
	BytesRead, BytesWritten   uint64
	Queue                     behind.Stats        // the write-behind queue
	Store                     backend.RemoteStats // the store's own figures (breaker, latency, ...)
}

// ColdWritable reports whether there is a cold tier and it takes writes.
func (s *Stats) ColdWritable() bool { return s.ColdBackend != "" && s.ColdWriteError == nil }

// DRAMStats are the DRAM tiers' own counters.
type DRAMStats struct {
	Capacity, Weight          int64 // what the LFU may keep, and keeps (bytes)
	Items                     int
	Admits, Rejects           uint64 // window leavers that took a probation item's place, or lost to it
	HotUsed, WarmUsed         int64  // bytes appended to segments in use (live and dead records)
	HotSegments, WarmSegments int
	Rescued, Compacted        uint64 // hot records kept in hot by a cleaning; records moved within a log
	Dropped                   uint64 // records a cleaning found no room for in either log (evicted)
	Forced                    uint64 // times the LFU evicted below its capacity for want of a segment worth cleaning
	// Live structures (T44, T45): how many hot holds, their Go heap
	// (counted in the hot tier's Items and Bytes too), the hot segments
	// withheld for them, and how many were demoted for hot's room.
	LiveItems         int64
	LiveBytes         int64
	LiveWithheldBytes int64
	LiveDemoted       uint64
}

// Stats returns a snapshot.
func (c *Cache) Stats() Stats {
	s := Stats{Keys: c.keyCount(), DirectoryKeys: c.dir.keyCount(), Expiring: c.dir.expiringCount(), WarmNode: -1, ColdIndexNode: -1, ColdIndexPlacement: -1}
	m := c.mem
	m.mu.Lock()
	var ls policy.LFUStats
	for id, l := range m.lfus {
		x := l.Stats()
		ls.Capacity, ls.Weight, ls.Items = ls.Capacity+x.Capacity, ls.Weight+x.Weight, ls.Items+x.Items
		ls.Admits, ls.Rejects = ls.Admits+x.Admits, ls.Rejects+x.Rejects
		if c.ten.enabled() {
			s.Tenants = append(s.Tenants, c.tenantStats(uint8(id), x, m.tenantEvicted[id]))
		}
	}
	items, bytes, evicted := m.items, m.bytes, m.evicted
	d := DRAMStats{Capacity: ls.Capacity, Weight: ls.Weight, Items: ls.Items, Admits: ls.Admits, Rejects: ls.Rejects,
		HotUsed: m.logs[memHot].Used(), HotSegments: m.logs[memHot].Segments(), Rescued: m.rescued, Compacted: m.compact,
		Dropped: m.dropped, Forced: m.forced, LiveItems: m.items[memLive], LiveBytes: m.bytes[memLive],
		LiveWithheldBytes: int64(m.logs[memHot].Withheld()) * int64(m.logs[memHot].SegmentBytes()), LiveDemoted: m.liveDemoted}
	if w := m.logs[memWarm]; w != nil {
		d.WarmUsed, d.WarmSegments = w.Used(), w.Segments()
	}
	m.mu.Unlock()
	s.DRAM = d
	warmHits := c.st.hits[policy.Warm].Load()
	coldHits := c.st.hits[policy.Cold].Load()
	misses := c.st.misses.Load()
	s.Tiers = append(s.Tiers, TierLevel{Name: "hot", Items: items[memHot] + items[memLive], Bytes: bytes[memHot] + bytes[memLive],
		Hits: c.st.hits[policy.Hot].Load(), Misses: warmHits + coldHits + misses, Evictions: evicted[memHot] + evicted[memLive]})
	if w := m.logs[memWarm]; w != nil {
		s.Tiers = append(s.Tiers, TierLevel{Name: "warm", Items: items[memWarm], Bytes: bytes[memWarm], Hits: warmHits,
			Misses: coldHits + misses, Evictions: evicted[memWarm]})
		if node, ok := w.Arena().Bound(); ok {
			s.WarmNode = node
		}
		s.WarmPlacement = m.placement
	}
	if c.cold != nil {
		cs := c.cold.Stats()
		s.Tiers = append(s.Tiers, TierLevel{Name: "cold", Items: cs.Items, Bytes: -1, Hits: coldHits, Misses: misses, Evictions: cs.Evictions})
		s.ColdBackend, s.ColdFreeBytes, s.ColdBytesRead, s.ColdBytesWritten = cs.Backend, cs.FreeBytes, cs.BytesRead, cs.BytesWritten
		s.ColdStalledIO, s.ColdOldestIO, s.ColdWriteError = cs.StalledIO, cs.OldestIO, cs.WriteError
		if cs.IndexBytes > 0 {
			s.ColdIndexNode, s.ColdIndexBytes, s.ColdIndexBoundBytes = cs.IndexNode, cs.IndexBytes, cs.IndexBoundBytes
			s.ColdIndexBindErrors, s.ColdIndexPlacement = cs.IndexBindErrors, cs.IndexPlacement
		}
		s.Flusher = c.fl.Stats()
		if s.Tenants != nil {
			s.Tenants = withCold(s.Tenants, cs.Tenants)
		}
	}
	if r := c.rt; r != nil {
		bs := r.s.Stats()
		rs := RemoteStats{Backend: bs.Backend, Hits: r.st.hits.Load(), Misses: r.st.misses.Load(), Errors: r.st.errors.Load(),
			Admitted: r.st.admitted.Load(), Invalidated: r.st.invalidated.Load(), Resyncs: r.st.resyncs.Load(),
			Validated: r.st.validated.Load(), Replaced: r.st.replaced.Load(), Dropped: r.st.dropped.Load(),
			WaitTimeouts: r.st.waitTimeouts.Load(), ClearErrors: r.st.clearErrors.Load(), ClearPending: r.clearPending.Load(),
			BytesRead: bs.BytesRead, BytesWritten: bs.BytesWritten, Queue: r.q.Stats()}
		if bs.Remote != nil {
			rs.Store = *bs.Remote
		}
		s.Remote = rs
		s.Tiers = append(s.Tiers, TierLevel{Name: "remote", Items: -1, Bytes: -1, Hits: c.st.hits[policy.Remote].Load(),
			Misses: rs.Misses + rs.Errors})
	}
	s.Misses = misses
	s.Promotions = c.st.promotions.Load()
	s.Demotions = c.st.demotions.Load()
	s.ColdKept = c.st.coldKept.Load()
	s.Flushed = c.st.flushed.Load()
	s.Lost = c.st.lost.Load()
	s.Forgotten = c.st.forgotten.Load()
	s.Phantoms = c.st.phantoms.Load()
	s.Adopted = c.st.adopted.Load()
	s.ColdErrors = c.st.coldErrors.Load()
	s.ColdBehind = c.st.coldBehind.Load()
	s.ColdDeletes = c.st.coldDeletes.Load()
	s.Tombstones = c.st.tombstones.Load()
	s.Expired = c.st.expired.Load()
	s.InTransit = int64(c.tr.len())
	s.MGetSubmissions = c.st.mgetSubmissions.Load()
	s.Purged = c.st.purged.Load()
	s.PurgePending = c.pg.pending.Load()
	c.pg.mu.Lock()
	s.Purging = c.pg.running
	c.pg.mu.Unlock()
	return s
}

// TenantStats are one tenant's counters (T35).
type TenantStats struct {
	Name      string
	Quota     int64  // bytes of the DRAM budget (the default tenant: what the others leave)
	Capacity  int64  // key and value bytes its keys may keep in DRAM (its LFU's capacity)
	Keys      int64  // live keys, counted as Stats.Keys counts them
	DRAMItems int    // keys with a DRAM record
	DRAMBytes int64  // their key and value bytes (what Capacity bounds)
	Hits      uint64 // reads served, from any tier
	DRAMHits  uint64 // reads served from hot or warm
	Misses    uint64 // reads that found nothing
	Evictions uint64 // its keys the DRAM tiers evicted (to cold, or lost without one)
	// Cold is its figures in the cold store: where its keys are (a
	// namespace of its own or the shared default one), the keys, bytes,
	// capacity and reclaims of its own namespace (of the shared one in
	// the default tenant's row), its cold reads and writes, its
	// namespace's device bytes (backend.TenantStats; Keys -1 unknown).
	// A row of a namespace kept from a tenant no longer configured
	// (coldstore CS8) has its Name and Cold alone.
	Cold backend.TenantStats
}

// tenantStats is tenant id's counters; ls is its LFU's (mem.mu held).
func (c *Cache) tenantStats(id uint8, ls policy.LFUStats, evicted uint64) TenantStats {
	tc := &c.ten.counts[id]
	hot, warm := tc.hits[policy.Hot].Load(), tc.hits[policy.Warm].Load()
	return TenantStats{Name: c.ten.names[id], Quota: c.ten.quotas[id], Capacity: ls.Capacity,
		Keys: c.dir.tenantKeys(id), DRAMItems: ls.Items, DRAMBytes: ls.Weight,
		Hits: hot + warm + tc.hits[policy.Cold].Load() + tc.hits[policy.Remote].Load(), DRAMHits: hot + warm, Misses: tc.misses.Load(), Evictions: evicted}
}

// withCold gives each tenant's row its cold figures, by name, and appends
// a row for each namespace the store keeps for a tenant no longer
// configured.
func withCold(ts []TenantStats, cold []backend.TenantStats) []TenantStats {
	for _, cs := range cold {
		i := slices.IndexFunc(ts, func(t TenantStats) bool { return t.Name == cs.Name })
		if i < 0 {
			ts = append(ts, TenantStats{Name: cs.Name})
			i = len(ts) - 1
		}
		ts[i].Cold = cs
	}
	return ts
}

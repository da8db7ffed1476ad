package warm

import "encoding/binary"

// Stats is a pulled snapshot of the cache counters.
type Stats struct {
	Items         int64   // items held (expired ones until evicted)
	Bytes         int64   // bytes of live records (header + key + value + padding)
	ArenaBytes    int64   // mapped arena bytes
	Segments      int     // segments in the arena (including one spare per shard)
	SegmentsInUse int     // segments holding data
	SegmentBytes  int     // segment size
	MaxItemBytes  int     // largest key+value a Set accepts (SegmentBytes - 32-byte header)
	Shards        int     // lock shards
	Evictions     uint64  // live items evicted (handed to OnEvict)
	Displaced     uint64  // of Evictions: pushed out by a 64-bit hash collision
	Expired       uint64  // expired items discarded by eviction
	Rescued       uint64  // items given a second chance (re-appended) on eviction
	Hits          uint64  // Get hits
	Misses        uint64  // Get misses (absent, expired or collided)
	IndexBytes    int64   // DRAM (Go heap) used by the index slots
	Placement     float64 // fraction of sampled pages on the intended node; -1 never checked
	Node          int     // node the arena is bound to, -1 unbound
	Bound         bool    // a memory policy is in force as configured
	Fallback      string  // why the arena runs unbound (FallbackPreferred), "" otherwise
}

// Stats sums the shards' counters.
func (c *Cache) Stats() Stats {
	st := Stats{SegmentBytes: c.opts.SegmentBytes, MaxItemBytes: c.opts.SegmentBytes - hdrSize, Shards: len(c.shards), Placement: c.Placement()}
	st.Node, st.Bound = c.arena.Bound()
	if err := c.arena.FallbackErr(); err != nil {
		st.Fallback = err.Error()
	}
	for _, s := range c.shards {
		st.Hits += s.hits.Load()
		st.Misses += s.misses.Load()
		s.mu.RLock()
		st.Items += s.items
		st.Bytes += s.liveBytes
		st.ArenaBytes += int64(len(s.mem))
		st.Segments += len(s.segs)
		st.SegmentsInUse += len(s.segs) - len(s.free) - 1
		st.Evictions += s.evictions
		st.Displaced += s.displaced
		st.Expired += s.expired
		st.Rescued += s.rescued
		st.IndexBytes += s.idx.bytes()
		s.mu.RUnlock()
	}
	return st
}

func putExpiry(rec []byte, expiry int64) {
	binary.LittleEndian.PutUint64(rec[offExpiry:], uint64(expiry))
}

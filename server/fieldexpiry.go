package server

import (
	"container/heap"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/tier"
)

// Hash field expiry (Redis 7.4's HEXPIRE family; docs/DESIGN.md, "Hash
// field expiry"). A hash's field expiries live in its hash.Hash in the
// DRAM tiers (a side table) and in its record, of hash's second version,
// everywhere else. Every read answers from its fields not yet expired
// (hash.Hash's live readers; hash.Live on a record), every write drops
// the expired ones first (hashEdit), so an expired field is seen by
// nothing. The sweeper below removes them for good, and the hash with its last field, as Redis's
// active expiry does: it knows every hash with field expiries that a
// command wrote or read since the server started, by its earliest expiry
// (hfeIndex), and at each tick purges those that are due (expireFields),
// in one Cache.Edit, from any tier, publishing "hexpired" (and "del").
// A hash it does not know (written by a run before a restart, or by
// another sidecar through the remote tier, and not read since) keeps its
// expired fields out of sight until a command writes it or reads it
// whole (a read of a few fields from its cold pieces notes nothing), as a
// key only cold holds keeps its own expiry (tier T37).

// hfeTick is how often the sweeper looks for due hashes (Redis's hz 10).
const hfeTick = 100 * time.Millisecond

// hfeBatch bounds the hashes one tick rewrites; the rest wait for the
// next tick (Redis's active expiry is bounded per cycle too).
const hfeBatch = 4096

// hfeIndexMax bounds the hashes the sweeper knows; past it a hash is not
// noted (counted in hash_field_expiry_untracked) and its fields expire
// out of sight until a command reads or writes it.
const hfeIndexMax = 1 << 20

// hfeIndex is the hashes with field expiries the sweeper knows, by the
// earliest expiry each was noted with (unix ms). A note keeps the earlier
// of two times, and the sweeper takes a due hash out before it reads it,
// so a hash's entry is never later than its record's earliest expiry: it
// may wake early, never late (S43).
type hfeIndex struct {
	mu   sync.Mutex
	at   map[string]int64
	q    hfeHeap // (at, key), entries whose at is no longer the map's skipped
	kick chan struct{}

	untracked atomic.Uint64 // notes refused past hfeIndexMax
	expired   atomic.Uint64 // fields expired: Redis's expired_subkeys
	stop      chan struct{}
	done      chan struct{}
}

type hfeItem struct {
	at  int64
	key string
}

type hfeHeap []hfeItem

func (h hfeHeap) Len() int           { return len(h) }
func (h hfeHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h hfeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hfeHeap) Push(x any)        { *h = append(*h, x.(hfeItem)) }
func (h *hfeHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

func newHFEIndex() *hfeIndex {
	return &hfeIndex{at: map[string]int64{}, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// note tells the sweeper that key's hash has a field expiring at at (unix
// ms; 0: none, nothing to note), or earlier.
func (x *hfeIndex) note(key []byte, at int64) {
	if at == 0 {
		return
	}
	x.mu.Lock()
	old, ok := x.at[string(key)]
	switch {
	case ok && old <= at:
	case !ok && len(x.at) >= hfeIndexMax:
		x.untracked.Add(1)
	default:
		k := string(key)
		x.at[k] = at
		heap.Push(&x.q, hfeItem{at, k})
		if len(x.q) > 2*len(x.at)+1024 {
			x.rebuild()
		}
	}
	x.mu.Unlock()
}

// dueNow notes key as due at once (a reader saw expired fields in it) and
// wakes the sweeper.
func (x *hfeIndex) dueNow(key []byte, now int64) {
	x.note(key, now)
	select {
	case x.kick <- struct{}{}:
	default:
	}
}

// rebuild drops the heap's stale entries (under mu).
func (x *hfeIndex) rebuild() {
	x.q = x.q[:0]
	for k, at := range x.at {
		x.q = append(x.q, hfeItem{at, k})
	}
	heap.Init(&x.q)
}

// due takes out of the index at most max keys due at now, earliest first.
func (x *hfeIndex) due(now int64, max int) []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	var keys []string
	for len(x.q) > 0 && len(keys) < max && x.q[0].at <= now {
		it := heap.Pop(&x.q).(hfeItem)
		if at, ok := x.at[it.key]; ok && at == it.at {
			delete(x.at, it.key)
			keys = append(keys, it.key)
		}
	}
	return keys
}

// carried notes dst as src is noted (RENAME, COPY: the record went along).
func (x *hfeIndex) carried(src, dst []byte) {
	x.mu.Lock()
	at, ok := x.at[string(src)]
	x.mu.Unlock()
	if ok {
		x.note(dst, at)
	}
}

// clear forgets every hash (FLUSHALL).
func (x *hfeIndex) clear() {
	x.mu.Lock()
	clear(x.at)
	x.q = nil
	x.mu.Unlock()
}

// len is the hashes known.
func (x *hfeIndex) len() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.at)
}

// nowMs is the cache's time in unix milliseconds: field expiries follow the
// clock key expiries follow.
func (s *Server) nowMs() int64 { return s.cache.Now() / int64(time.Millisecond) }

// hfeLoop is the sweeper: it runs from New until Close.
func (s *Server) hfeLoop() {
	x := s.hfe
	defer close(x.done)
	t := time.NewTicker(hfeTick)
	defer t.Stop()
	for {
		select {
		case <-x.stop:
			return
		case <-t.C:
		case <-x.kick:
		}
		if s.loading.Load() || s.pause.on.Load() { // no active expiry while clients are paused (S98)
			continue
		}
		now := s.nowMs()
		for _, k := range x.due(now, hfeBatch) {
			s.expireFields([]byte(k), now)
		}
	}
}

// expireFields removes key's expired fields (the key with its last one)
// and notes its next expiry. It runs as a command does, holding the
// transaction lock shared, so no EXEC or script sees it halfway; the
// purge is one Cache.Edit.
func (s *Server) expireFields(key []byte, now int64) {
	s.tx.excl.RLock()
	defer s.tx.excl.RUnlock()
	var expired int
	var next int64
	var removed bool
	_, err := s.cache.Edit(key, hashes, false, func(v tier.Live) (tier.EditResult, error) {
		h := hashOf(v)
		expired, removed = h.Purge(now), false
		next = h.MinExpiry()
		switch {
		case expired == 0:
			return tier.Unchanged, nil
		case h.Len() == 0:
			removed = true
			return tier.Emptied, nil
		}
		return tier.Changed, nil
	})
	if errors.Is(err, tier.ErrWrongKind) { // no longer a hash
		return
	}
	if err != nil {
		// A cold read that failed, or a record that does not decode: try
		// again in a second rather than at every tick.
		s.log.Debug("hash field expiry: sweep failed", zap.ByteString("key", key), zap.Error(err))
		s.hfe.note(key, now+1000)
		return
	}
	s.hfe.note(key, next)
	if expired == 0 {
		return
	}
	s.hfe.expired.Add(uint64(expired))
	s.touchKey(key)
	s.publishEvent(notifyHash, "hexpired", key)
	if removed {
		s.publishEvent(notifyGeneric, "del", key)
	}
	s.trk.invalidate(nil, [][]byte{key})
}

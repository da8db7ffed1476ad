package warm

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/tiercache/tiercache/numa"
	"github.com/zeebo/xxh3"
	"go.uber.org/zap"
)

// Cache is the warm tier: values off-heap in a NUMA-placed arena, a
// pointer-free index per shard, a segmented log evicted a segment at a time.
type Cache struct {
	opts      Options
	arena     *numa.Arena
	shards    []*shard
	shardBits uint
	clock     func() int64

	placement atomic.Uint64 // float64 bits of the last verified placement fraction
	closeOnce sync.Once
	closeErr  error
}

// New maps and places the arena, verifies placement and returns the cache.
func New(opts Options) (*Cache, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	segsPerShard := int(opts.Bytes / int64(opts.SegmentBytes) / int64(opts.Shards))
	shardBytes := segsPerShard * opts.SegmentBytes
	ao := opts.Arena
	ao.Bytes = shardBytes * opts.Shards
	arena, err := numa.NewArena(ao)
	if err != nil {
		return nil, fmt.Errorf("warm: arena of %d bytes: %w", ao.Bytes, err)
	}
	c := &Cache{opts: opts, arena: arena, clock: opts.Clock, shardBits: uint(bits.TrailingZeros(uint(opts.Shards)))}
	mem := arena.Bytes()
	for i := 0; i < opts.Shards; i++ {
		c.shards = append(c.shards, newShard(mem[i*shardBytes:(i+1)*shardBytes:(i+1)*shardBytes],
			opts.SegmentBytes, opts.OnEvict, opts.Clock))
	}
	c.placement.Store(^uint64(0))
	if opts.PlacementSamples > 0 {
		if _, err := c.VerifyPlacement(opts.PlacementSamples); err != nil {
			opts.Logger.Warn("warm: placement check failed", zap.Error(err))
		}
	}
	node, bound := arena.Bound()
	opts.Logger.Info("warm: ready", zap.Int("bytes", ao.Bytes), zap.Int("shards", opts.Shards),
		zap.Int("segment_bytes", opts.SegmentBytes), zap.Int("node", node), zap.Bool("bound", bound),
		zap.Float64("placement", c.Placement()))
	return c, nil
}

// keyHash is xxh3 of the key, never 0 (0 marks an empty index slot).
func keyHash(key []byte) uint64 {
	h := xxh3.Hash(key)
	if h == 0 {
		h = 1
	}
	return h
}

func (c *Cache) shard(h uint64) *shard {
	if c.shardBits == 0 {
		return c.shards[0]
	}
	return c.shards[h>>(64-c.shardBits)]
}

// Get appends the value of key to dst. It allocates nothing on a hit when
// dst has room. An expired item is a miss.
func (c *Cache) Get(dst, key []byte) ([]byte, Meta, bool) {
	h := keyHash(key)
	s := c.shard(h)
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return dst, Meta{}, false
	}
	off, r := s.lookup(h, key)
	if off < 0 || (r.meta.Expiry != 0 && r.meta.Expiry <= c.clock()) {
		s.mu.RUnlock()
		s.misses.Add(1)
		return dst, Meta{}, false
	}
	markHit(s.mem, off, r.keyWord)
	dst = append(dst, r.value...)
	s.mu.RUnlock()
	s.hits.Add(1)
	return dst, r.meta, true
}

// Has reports whether key is present and unexpired, with its Meta, without
// copying the value or counting a hit.
func (c *Cache) Has(key []byte) (Meta, bool) {
	h := keyHash(key)
	s := c.shard(h)
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return Meta{}, false
	}
	off, r := s.lookup(h, key)
	if off < 0 || (r.meta.Expiry != 0 && r.meta.Expiry <= c.clock()) {
		return Meta{}, false
	}
	return r.meta, true
}

// Set stores key/value with m, replacing any previous item. An expiry in
// the past deletes the key. ErrTooLarge if the record cannot fit a segment.
func (c *Cache) Set(key, value []byte, m Meta) error {
	_, err := c.set(key, value, m, false)
	return err
}

// SetIfNewer stores the item unless a live item with a higher version is
// present; it reports whether it stored.
func (c *Cache) SetIfNewer(key, value []byte, m Meta) (bool, error) {
	return c.set(key, value, m, true)
}

func (c *Cache) set(key, value []byte, m Meta, ifNewer bool) (bool, error) {
	size := recSize(len(key), len(value))
	if len(key) > MaxKeyLen || size > c.opts.SegmentBytes {
		return false, fmt.Errorf("%w: key %d bytes + value %d bytes = record of %d bytes; segment is %d bytes, key limit %d",
			ErrTooLarge, len(key), len(value), size, c.opts.SegmentBytes, MaxKeyLen)
	}
	h := keyHash(key)
	s := c.shard(h)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false, ErrClosed
	}
	if m.Expiry != 0 && m.Expiry <= c.clock() {
		if off, r := s.lookup(h, key); off >= 0 && (!ifNewer || r.meta.Version <= m.Version) {
			s.remove(h, r.size())
		}
		return false, nil
	}
	if ifNewer {
		if off, r := s.lookup(h, key); off >= 0 && r.meta.Version > m.Version &&
			(r.meta.Expiry == 0 || r.meta.Expiry > c.clock()) {
			return false, nil
		}
	}
	off := s.alloc(size) // may evict, including this key's old record
	gen := s.segs[off/s.segBytes].gen
	writeRecord(s.mem[off:off+size], h, key, value, m)
	if old, existed := s.idx.put(h, packLoc(gen, off)); existed {
		oo := locOff(old)
		r := readRecord(s.mem[oo:], loadKeyWord(s.mem, oo))
		s.liveBytes -= int64(r.size())
		s.items--
		if string(r.key) != string(key) { // hash collision: the other key is pushed out
			s.displaced++
			s.evictions++
			if s.onEvict != nil {
				s.onEvict(r.key, r.value, r.meta)
			}
		}
	}
	s.items++
	s.liveBytes += int64(size)
	return true, nil
}

// SetExpiry changes the expiry of a live item in place; false if absent.
func (c *Cache) SetExpiry(key []byte, expiry int64) bool {
	h := keyHash(key)
	s := c.shard(h)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	off, r := s.lookup(h, key)
	if off < 0 || (r.meta.Expiry != 0 && r.meta.Expiry <= c.clock()) {
		return false
	}
	putExpiry(s.mem[off:], expiry)
	return true
}

// Delete removes key; it reports whether a live, unexpired item was removed.
func (c *Cache) Delete(key []byte) bool {
	h := keyHash(key)
	s := c.shard(h)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	off, r := s.lookup(h, key)
	if off < 0 {
		return false
	}
	s.remove(h, r.size())
	return r.meta.Expiry == 0 || r.meta.Expiry > c.clock()
}

// ForEach calls fn for every live, unexpired item, a shard at a time under
// that shard's lock (fn must not call the Cache; slices valid during the
// call). It stops when fn returns false. For drain-on-shutdown.
func (c *Cache) ForEach(fn func(key, value []byte, m Meta) bool) {
	now := c.clock()
	for _, s := range c.shards {
		if !s.forEach(now, fn) {
			return
		}
	}
}

func (s *shard) forEach(now int64, fn func(key, value []byte, m Meta) bool) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return false
	}
	for _, sl := range s.idx.slots {
		if sl.h == 0 {
			continue
		}
		off := locOff(sl.loc)
		r := readRecord(s.mem[off:], loadKeyWord(s.mem, off))
		if r.meta.Expiry != 0 && r.meta.Expiry <= now {
			continue
		}
		if !fn(r.key, r.value, r.meta) {
			return false
		}
	}
	return true
}

// Len is the number of items held (expired ones included until evicted).
func (c *Cache) Len() int {
	n := 0
	for _, s := range c.shards {
		s.mu.RLock()
		n += int(s.items)
		s.mu.RUnlock()
	}
	return n
}

// VerifyPlacement samples the arena's pages and records the fraction on the
// intended node (reported by Stats.Placement).
func (c *Cache) VerifyPlacement(samples int) (float64, error) {
	f, err := c.arena.Placement(samples)
	if err != nil {
		return 0, fmt.Errorf("warm: verify placement: %w", err)
	}
	c.placement.Store(math.Float64bits(f))
	return f, nil
}

// Placement is the last verified placement fraction, or -1 if never checked.
func (c *Cache) Placement() float64 {
	v := c.placement.Load()
	if v == ^uint64(0) {
		return -1
	}
	return math.Float64frombits(v)
}

// Arena exposes the underlying arena (node, fallback reason, policy).
func (c *Cache) Arena() *numa.Arena { return c.arena }

// Close drops every item and unmaps the arena; OnEvict is not called.
// Idempotent; later calls return the first result.
func (c *Cache) Close() error {
	c.closeOnce.Do(func() {
		for _, s := range c.shards {
			s.mu.Lock()
			s.closed = true
			s.mu.Unlock()
		}
		c.closeErr = errors.Join(c.arena.Close())
	})
	return c.closeErr
}

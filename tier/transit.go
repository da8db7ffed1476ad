package tier

import (
	"sync"
	"sync/atomic"

	"github.com/tiercache/tiercache/policy"
)

// transit holds copies that are moving between tiers (a hot eviction on its
// way to warm, a warm eviction or a large value on its way to cold), so a
// reader finds them while no tier has them yet (T5). One version per key:
// the newest wins, and each add of that version is matched by one remove.
type transit struct {
	// total is the sum of the shards' n: get and forget, while no copy is
	// anywhere (nearly always), return before they hash the key.
	total  atomic.Int64
	_      [56]byte
	shards [shardCount]transitShard
}

type transitShard struct {
	mu sync.Mutex
	m  map[string]*moving
	// n is len(m), changed under mu: get and forget of a shard with no
	// copy (nearly always) take no lock. A caller that saw 0 ran before
	// any add it does not see, as it would with the lock.
	n atomic.Int32
	_ [44]byte
}

type moving struct {
	val  []byte
	ver  uint64
	exp  int64
	refs int
	to   policy.Tier // where the copy is going (what Where reports)
}

func newTransit() *transit {
	t := &transit{}
	for i := range t.shards {
		t.shards[i].m = make(map[string]*moving)
	}
	return t
}

func (t *transit) shard(key []byte) *transitShard {
	lo, _ := hashKey(key)
	return &t.shards[lo>>56]
}

// add records a copy moving to tier to. val must not be modified afterwards.
func (t *transit) add(key, val []byte, ver uint64, exp int64, to policy.Tier) {
	s := t.shard(key)
	s.mu.Lock()
	m := s.m[viewString(key)]
	switch {
	case m == nil:
		s.m[string(key)] = &moving{val: val, ver: ver, exp: exp, refs: 1, to: to}
		s.n.Add(1)
		t.total.Add(1)
	case m.ver == ver:
		m.refs++
		m.to = to
	case m.ver < ver:
		*m = moving{val: val, ver: ver, exp: exp, refs: 1, to: to}
	}
	s.mu.Unlock()
}

// remove drops one reference of key at version ver.
func (t *transit) remove(key []byte, ver uint64) {
	s := t.shard(key)
	s.mu.Lock()
	if m := s.m[viewString(key)]; m != nil && m.ver == ver {
		if m.refs--; m.refs <= 0 {
			delete(s.m, viewString(key))
			s.n.Add(-1)
			t.total.Add(-1)
		}
	}
	s.mu.Unlock()
}

// get appends the moving copy of key at version ver to dst and says where
// it is going.
func (t *transit) get(dst, key []byte, ver uint64) ([]byte, policy.Tier, bool) {
	if t.total.Load() == 0 {
		return dst, policy.None, false
	}
	s := t.shard(key)
	if s.n.Load() == 0 {
		return dst, policy.None, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.m[viewString(key)]; m != nil && m.ver == ver {
		return append(dst, m.val...), m.to, true
	}
	return dst, policy.None, false
}

// forget removes key whatever its version (Delete, Flush).
func (t *transit) forget(key []byte) {
	if t.total.Load() == 0 {
		return
	}
	s := t.shard(key)
	if s.n.Load() == 0 {
		return
	}
	s.mu.Lock()
	if _, ok := s.m[viewString(key)]; ok {
		delete(s.m, viewString(key))
		s.n.Add(-1)
		t.total.Add(-1)
	}
	s.mu.Unlock()
}

func (t *transit) clear() {
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		clear(s.m)
		t.total.Add(-int64(s.n.Swap(0)))
		s.mu.Unlock()
	}
}

func (t *transit) len() int {
	n := 0
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		n += len(s.m)
		s.mu.Unlock()
	}
	return n
}

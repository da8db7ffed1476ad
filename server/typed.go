package server

import (
	"github.com/tiercache/tiercache/tier"
	"github.com/tiercache/tiercache/value"
	"github.com/tiercache/tiercache/value/set"
	"github.com/tiercache/tiercache/value/zset"
)

// The set and sorted-set commands read a value into a set.Set or a
// zset.ZSet (value/set, value/zset) and, for a write, store its record
// again in one Cache.Update: each write decodes and encodes the whole
// value, O(its size), as the hash and list commands do (docs/DESIGN.md).

// typedBufs are a connection's decoded set and sorted set, reused.
type typedBufs struct {
	set  set.Members
	zset zset.Entries
	out  zset.Entries // a computed result (the algebra, ZRANGESTORE)
	mems [][]byte
	rec  []byte
}

// release drops what the buffers reference (the values and arguments
// they alias) and buffers grown past maxAggKeep.
func (b *typedBufs) release() {
	b.set.Release()
	b.zset.Release()
	b.out.Release()
	clear(b.mems[:cap(b.mems)])
	b.mems = b.mems[:0]
	if cap(b.rec) > maxAggKeep {
		b.rec = nil
	}
}

// readSet decodes key's set into s (empty when absent); exists reports
// the key. ok false: the error reply is written.
func (c *conn) readSet(key []byte, s *set.Members, own bool) (exists, ok bool) {
	rec, ok := c.kindRead(key, kindSet, own)
	if !ok {
		return false, false
	}
	if err := s.Load(rec); err != nil {
		c.cacheError(err)
		return false, false
	}
	return rec != nil, true
}

// readZSet decodes key's sorted set into z (empty when absent).
func (c *conn) readZSet(key []byte, z *zset.Entries, own bool) (exists, ok bool) {
	rec, ok := c.kindRead(key, kindZSet, own)
	if !ok {
		return false, false
	}
	if err := z.Load(rec); err != nil {
		c.cacheError(err)
		return false, false
	}
	return rec != nil, true
}

// storeOf is the change that stores v (a set or sorted set of kind k)
// after a write: none when unchanged, a delete when left empty, else its
// record, checked against the limits first.
func (c *conn) storeOf(v interface {
	Len() int
	Size() int
	AppendRecord([]byte) []byte
}, k tier.Kind, changed bool) (tier.Change, error) {
	switch {
	case !changed:
		return tier.Change{Op: tier.Keep}, nil
	case v.Len() == 0:
		return tier.Change{Op: tier.Remove}, nil
	}
	if err := c.s.setLimits.Check(v.Len(), v.Size()); err != nil {
		return tier.Change{}, err
	}
	c.typed.rec = v.AppendRecord(c.typed.rec[:0]) // the cache copies it
	return tier.Change{Op: tier.Store, Value: c.typed.rec, Kind: k}, nil
}

// setUpdate changes key's set in one step: edit gets the set (empty when
// the key is absent) and reports whether it changed it; a set left empty
// is removed. edit may run more than once (tier.Cache.Update): it must
// only compute, from the set it is given.
func (c *conn) setUpdate(key []byte, edit func(s *set.Members) (bool, error)) error {
	s := &c.typed.set
	return c.s.cache.Update(key, func(cur tier.Current) (tier.Change, error) {
		s.Reset()
		if cur.Exists {
			if cur.Kind != kindSet {
				return tier.Change{}, wrongType
			}
			if err := s.Decode(cur.Value); err != nil {
				return tier.Change{}, err
			}
		}
		changed, err := edit(s)
		if err != nil {
			return tier.Change{}, err
		}
		return c.storeOf(s, kindSet, changed)
	})
}

// zsetUpdate is setUpdate for a sorted set.
func (c *conn) zsetUpdate(key []byte, edit func(z *zset.Entries) (bool, error)) error {
	z := &c.typed.zset
	return c.s.cache.Update(key, func(cur tier.Current) (tier.Change, error) {
		z.Reset()
		if cur.Exists {
			if cur.Kind != kindZSet {
				return tier.Change{}, wrongType
			}
			if err := z.Decode(cur.Value); err != nil {
				return tier.Change{}, err
			}
		}
		changed, err := edit(z)
		if err != nil {
			return tier.Change{}, err
		}
		return c.storeOf(z, kindZSet, changed)
	})
}

// storeResult replaces dst with v (kind k; none when v is empty, which
// deletes dst), without an expiry, as a STORE command does (Redis's
// setKey), and touches dst for WATCH. It answers v's size.
func (c *conn) storeResult(dst []byte, v interface {
	Len() int
	Size() int
	AppendRecord([]byte) []byte
}, k tier.Kind) {
	c.noop = true // the sources are not touched: only dst (below)
	n := v.Len()
	var err error
	if n == 0 {
		var deleted int
		if deleted, err = c.s.cache.Delete(dst); err == nil && deleted > 0 {
			c.s.touch(touchKeys, [][]byte{nil, dst})
		}
	} else if err = c.s.setLimits.Check(n, v.Size()); err == nil {
		c.typed.rec = v.AppendRecord(c.typed.rec[:0])
		if _, err = c.s.cache.Set(dst, c.typed.rec, tier.SetOptions{Kind: k}); err == nil {
			c.s.touch(touchKeys, [][]byte{nil, dst})
			if k == kindZSet {
				c.wakeAfter(dst)
			}
		}
	}
	c.numReply(int64(n), err)
}

// setEdit changes key's set in place, in one Cache.Edit: edit gets the
// live set (a new empty one when the key is absent and create is set)
// and reports whether it changed it; a set left empty is removed. It may
// run more than once (writethrough): it must only change the set and
// note what it answers.
func (c *conn) setEdit(key []byte, create bool, edit func(s *set.Live) (bool, error)) (exists bool, err error) {
	return c.s.cache.Edit(key, sets, create, func(v tier.Live) (tier.EditResult, error) {
		s := v.(*set.Live)
		changed, err := edit(s)
		switch {
		case err != nil || !changed:
			return tier.Unchanged, err
		case s.Len() == 0:
			return tier.Emptied, nil
		}
		return tier.Changed, nil
	})
}

// readLiveSet runs f on key's set for a read-only command (readLive).
func (c *conn) readLiveSet(key []byte, f func(s *set.Live)) (exists, ok bool) {
	return c.readLive(key, sets, func(v tier.Live) { f(v.(*set.Live)) })
}

// setAddCheck checks that s with members added in order stays within
// the limits after each, before any is added.
func (c *conn) setAddCheck(s *set.Live, members [][]byte) error {
	n, size := s.Len(), s.Size()
	var seen map[string]bool
	if len(members) > 1 {
		seen = make(map[string]bool, len(members))
	}
	for _, m := range members {
		if s.Has(m) || seen[string(m)] {
			continue
		}
		if seen != nil {
			seen[string(m)] = true
		}
		size += value.UvarintLen(len(m)) + len(m) + value.UvarintLen(n+1) - value.UvarintLen(n)
		n++
		if err := c.s.setLimits.Check(n, size); err != nil {
			return err
		}
	}
	return nil
}

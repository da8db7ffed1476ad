package server

import (
	"github.com/tiercache/tiercache/tier"
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
	// smoveAdded says SMOVE added its member to the destination (its
	// "sadd" event).
	smoveAdded bool
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
	hooks := c.s.keyHooks()
	existed := hooks && c.exists(dst)
	var err error
	if n == 0 {
		var deleted int
		if deleted, err = c.s.cache.Delete(dst); err == nil && deleted > 0 {
			c.s.touch(touchKeys, [][]byte{nil, dst})
			if hooks {
				c.emit(notifyGeneric, "del", dst)
			}
		}
	} else if err = c.s.setLimits.Check(n, v.Size()); err == nil {
		c.typed.rec = v.AppendRecord(c.typed.rec[:0])
		if _, err = c.s.cache.Set(dst, c.typed.rec, tier.SetOptions{Kind: k}); err == nil {
			c.s.touch(touchKeys, [][]byte{nil, dst})
			if hooks {
				// Redis's setKey, then the command's event (its name:
				// sinterstore ... zrangestore).
				if !existed && c.s.conf.notify.Load()&notifyNew != 0 {
					c.events = append(c.events, keyEvent{class: notifyNew, name: "new", key: dst})
				}
				class := notifySet
				if k == kindZSet {
					class = notifyZset
				}
				c.emit(class, c.cmd.name, dst)
			}
			if k == kindZSet {
				c.wakeAfter(dst)
			}
		}
	}
	c.servedEvents()
	c.flushEvents() // afterWrite does not run: the command is a noop for its sources
	c.numReply(int64(n), err)
}

package server

import (
	"github.com/tiercache/tiercache/tier"
	"github.com/tiercache/tiercache/value"
	"github.com/tiercache/tiercache/value/set"
	"github.com/tiercache/tiercache/value/zset"
)

// The set and sorted-set commands change a set or sorted set in place, as
// the DRAM tiers keep it live (set.Live, zset.Sorted), in one Cache.Edit
// (setEdit, zsetEdit), and read one key in one Cache.Read; those that
// read several keys or walk one in member order decode records into a
// set.Members or zset.Entries (readSet, readZSet).

// typedBufs are a connection's decoded set and sorted set, reused.
type typedBufs struct {
	set    set.Members
	zset   zset.Entries
	out    zset.Entries // a computed result (the algebra, ZRANGESTORE)
	mems   [][]byte
	rec    []byte
	scores []float64 // ZADD's
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
	if cap(b.scores) > maxAggKeep/8 {
		b.scores = nil
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

// storedValue is a computed aggregate a STORE command stores.
type storedValue interface {
	Len() int
	Size() int
	AppendRecord([]byte) []byte
}

// storeResult replaces dst with v (kind k; none when v is empty, which
// deletes dst), without an expiry, as a STORE command does (Redis's
// setKey), and touches dst for WATCH. It answers v's size. Its event is
// the command's name (sinterstore ... zrangestore, geosearchstore), or
// georadiusstore (storeEvent).
func (c *conn) storeResult(dst []byte, v storedValue, k tier.Kind) {
	class := notifySet
	if k == kindZSet {
		class = notifyZset
	}
	c.storeAs(dst, v, k, class, storeEvent(c.cmd.name))
}

// storeAs is storeResult with the event to publish when dst is written
// (SORT's "sortstore", of the list class). A sorted set or list stored
// serves the clients blocked on dst.
func (c *conn) storeAs(dst []byte, v storedValue, k tier.Kind, class uint32, event string) {
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
	} else if err = c.storeCheck(k, n, v.Size()); err == nil {
		c.typed.rec = v.AppendRecord(c.typed.rec[:0])
		if _, err = c.s.cache.Set(dst, c.typed.rec, tier.SetOptions{Kind: k}); err == nil {
			c.s.touch(touchKeys, [][]byte{nil, dst})
			if hooks {
				// Redis's setKey, then the command's event.
				if !existed && c.s.conf.notify.Load()&notifyNew != 0 {
					c.events = append(c.events, keyEvent{class: notifyNew, name: "new", key: dst})
				}
				c.emit(class, event, dst)
			}
			if k == kindZSet || k == kindList {
				c.wakeAfter(dst)
			}
		}
	}
	c.servedEvents()
	c.flushEvents() // afterWrite does not run: the command is a noop for its sources
	c.numReply(int64(n), err)
}

// storeCheck refuses a value of kind k of n elements and size bytes
// past the limits of its kind.
func (c *conn) storeCheck(k tier.Kind, n, size int) error {
	if k == kindList {
		return c.lists.limits.Check(n, size)
	}
	return c.s.setLimits.Check(n, size)
}

// setEdit changes key's set in place, in one Cache.Edit (editCounted).
func (c *conn) setEdit(key []byte, create bool, edit func(s *set.Live) (bool, error)) (exists bool, err error) {
	return editCounted(c, key, sets, create, edit)
}

// editCounted changes key's aggregate of kind lk (a T) in place, in one
// Cache.Edit: edit gets the structure (a new empty one when the key is
// absent and create is set) and reports whether it changed it; one left
// empty is removed. It may run more than once (writethrough): it must
// only change the structure and note what it answers.
func editCounted[T interface {
	tier.Live
	Len() int
}](c *conn, key []byte, lk tier.LiveKind, create bool, edit func(v T) (bool, error)) (exists bool, err error) {
	return c.s.cache.Edit(key, lk, create, func(lv tier.Live) (tier.EditResult, error) {
		v := lv.(T)
		changed, err := edit(v)
		switch {
		case err != nil || !changed:
			return tier.Unchanged, err
		case v.Len() == 0:
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
	if c.allNewFit(n, size, members, 1, 0) {
		return nil
	}
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

// zsetEdit is setEdit for a sorted set (a zset.Sorted).
func (c *conn) zsetEdit(key []byte, create bool, edit func(z *zset.Sorted) (bool, error)) (exists bool, err error) {
	return editCounted(c, key, zsets, create, edit)
}

// readLiveZSet runs f on key's sorted set for a read-only command
// (readLive).
func (c *conn) readLiveZSet(key []byte, f func(z *zset.Sorted)) (exists, ok bool) {
	return c.readLive(key, zsets, func(v tier.Live) { f(v.(*zset.Sorted)) })
}

// zaddCheck checks that z with the members of a ZADD added (pairs of
// score and member from first; xx adds none) stays within the limits
// after each, before any is added.
func (c *conn) zaddCheck(z *zset.Sorted, args [][]byte, first int, xx bool) error {
	if xx {
		return nil
	}
	n, size := z.Len(), z.Size()
	if c.allNewFit(n, size, args[first+1:], 2, 8) {
		return nil
	}
	var seen map[string]bool
	for i := first + 1; i < len(args); i += 2 {
		m := args[i]
		if _, ok := z.Score(m); ok || seen[string(m)] {
			continue
		}
		if seen == nil {
			seen = map[string]bool{}
		}
		seen[string(m)] = true
		size += 8 + value.UvarintLen(len(m)) + len(m) + value.UvarintLen(n+1) - value.UvarintLen(n)
		n++
		if err := c.s.setLimits.Check(n, size); err != nil {
			return err
		}
	}
	return nil
}

// allNewFit reports whether a set or sorted set of n members and size
// bytes stays within the limits with every member of ms (each stride-th
// argument) new, extra bytes besides its own each (8: a score): then no
// member need be looked up, for the sizes after each add are smaller.
func (c *conn) allNewFit(n, size int, ms [][]byte, stride, extra int) bool {
	k := 0
	for i := 0; i < len(ms); i += stride {
		size += extra + value.UvarintLen(len(ms[i])) + len(ms[i])
		k++
	}
	size += value.UvarintLen(n+k) - value.UvarintLen(n)
	return c.s.setLimits.Check(n+k, size) == nil
}

package server

import (
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/tiercache/tiercache/tier"
	"github.com/tiercache/tiercache/value"
	"github.com/tiercache/tiercache/value/hash"
)

// The hash commands (Redis 7.0). A hash is a hash.Hash in the DRAM tiers
// (a record edited in place while small, a table once large): a write is
// one Cache.Edit that changes the fields it names, a read one Cache.Read
// that answers from the structure under the cache's read lock.

// aggBuf is a connection's reused buffers for aggregate commands.
type aggBuf struct {
	fields []hash.Field
	enc    []byte
	seen   map[string]int // hashPutCheck's fields named twice, for many pairs
}

// maxAggKeep is the largest buffer an aggregate command keeps for the
// next one.
const maxAggKeep = 1 << 20

// hashOf is the hash an Edit or Read function is given.
func hashOf(v tier.Live) *hash.Hash { return v.(*hash.Hash) }

// kindRead reads key's value of kind want for a read command: rec is nil
// when the key is absent. When ok is false the error reply is written.
// With own the value is in a buffer of its own (a command that reads
// several keys keeps each); else it may be the connection's scratch.
func (c *conn) kindRead(key []byte, want tier.Kind, own bool) (rec []byte, ok bool) {
	dst := c.scratch[:0]
	if own {
		dst = nil
	}
	v, kind, shared, exists, _, err := c.s.cache.ViewAny(dst, key)
	switch {
	case err != nil:
		c.cacheError(err)
		return nil, false
	case !exists:
		c.st.misses.Add(1)
		return nil, true
	case kind != want:
		c.w.Error(errWrongType)
		return nil, false
	}
	c.st.hits.Add(1)
	if !own && !shared && cap(v) <= maxScratch && cap(v) > cap(c.scratch) {
		c.scratch = v[:0]
	}
	return v, true
}

// readHash runs f on key's hash for a read-only command (readLive).
func (c *conn) readHash(key []byte, f func(h *hash.Hash)) (exists, ok bool) {
	return c.readLive(key, hashes, func(v tier.Live) { f(hashOf(v)) })
}

// hashPutCheck checks that h, with pairs (field, value, ...) set in
// order, stays within the limits after each pair, before any is set: the
// error names the first count or size past them, as setting them one by
// one would meet it.
func (c *conn) hashPutCheck(h *hash.Hash, pairs [][]byte) error {
	lim := c.s.hashLimits
	if len(pairs) == 2 {
		return lim.Check(h.SizeAfter(pairs[0], pairs[1]))
	}
	n, size := h.Len(), h.RecordSize()
	if c.agg.seen == nil {
		c.agg.seen = map[string]int{}
	}
	seen := c.agg.seen
	defer clear(seen)
	for i := 0; i+1 < len(pairs); i += 2 {
		f, v := pairs[i], pairs[i+1]
		size += value.EntrySize(f, v)
		if j, ok := seen[string(f)]; ok {
			size -= value.EntrySize(f, pairs[j+1])
		} else if old, ok := h.Get(f); ok {
			size -= value.EntrySize(f, old)
		} else {
			size += value.UvarintLen(n+1) - value.UvarintLen(n)
			n++
		}
		seen[string(f)] = i
		if err := lim.Check(n, size); err != nil {
			return err
		}
	}
	return nil
}

// hashPut sets pairs in h once they fit the limits, and returns how many
// fields are new.
func (c *conn) hashPut(h *hash.Hash, pairs [][]byte) (int, error) {
	if err := c.hashPutCheck(h, pairs); err != nil {
		return 0, err
	}
	added := 0
	for i := 0; i+1 < len(pairs); i += 2 {
		if h.Put(pairs[i], pairs[i+1]) {
			added++
		}
	}
	return added, nil
}

// hsetCmd: HSET key field value [field value ...] → fields added; HMSET
// (okReply) answers OK.
func (c *conn) hsetCmd(args [][]byte, okReply bool) {
	if len(args)%2 != 0 {
		c.wrongArity()
		return
	}
	var added int
	_, err := c.s.cache.Edit(args[1], hashes, true, func(v tier.Live) (tier.EditResult, error) {
		var err error
		added, err = c.hashPut(hashOf(v), args[2:])
		if err != nil {
			return tier.Unchanged, err
		}
		return tier.Changed, nil
	})
	switch {
	case err != nil:
		c.cacheError(err)
	case okReply:
		c.w.OK()
	default:
		c.w.Int(int64(added))
	}
}

// cmdHSetNX: HSETNX key field value → 1 if set, 0 if the field existed.
func (c *conn) cmdHSetNX(args [][]byte) {
	var added bool
	_, err := c.s.cache.Edit(args[1], hashes, true, func(v tier.Live) (tier.EditResult, error) {
		h := hashOf(v)
		if _, added = h.Get(args[2]); added {
			added = false
			return tier.Unchanged, nil
		}
		if _, err := c.hashPut(h, args[2:4]); err != nil {
			return tier.Unchanged, err
		}
		added = true
		return tier.Changed, nil
	})
	c.noop = !added
	c.boolReply(added, err)
}

// cmdHDel: HDEL key field [field ...] → fields removed; the key goes with
// its last field.
func (c *conn) cmdHDel(args [][]byte) {
	var removed int
	_, err := c.s.cache.Edit(args[1], hashes, false, func(v tier.Live) (tier.EditResult, error) {
		h := hashOf(v)
		removed = 0
		for _, f := range args[2:] {
			if h.Delete(f) {
				removed++
			}
		}
		switch {
		case removed == 0:
			return tier.Unchanged, nil
		case h.Len() == 0:
			return tier.Emptied, nil
		}
		return tier.Changed, nil
	})
	if removed == 0 && err == nil {
		c.noop = true // nothing changed: WATCHed keys are not touched (intReply)
	}
	c.numReply(int64(removed), err)
}

// cmdHGet: HGET key field → the value, nil if absent.
func (c *conn) cmdHGet(args [][]byte) {
	if c.hashCold(args[1], args[2:3], func(get func([]byte) ([]byte, bool), _ int) {
		if v, found := get(args[2]); found {
			c.w.Bulk(v)
		} else {
			c.w.Null()
		}
	}) {
		return
	}
	exists, ok := c.readHash(args[1], func(h *hash.Hash) {
		if v, found := h.Get(args[2]); found {
			c.w.Bulk(v)
		} else {
			c.w.Null()
		}
	})
	if ok && !exists {
		c.w.Null()
	}
}

// cmdHMGet: HMGET key field [field ...] → one value (or nil) per field.
func (c *conn) cmdHMGet(args [][]byte) {
	answer := func(get func([]byte) ([]byte, bool), _ int) {
		c.w.Array(len(args) - 2)
		for _, f := range args[2:] {
			if v, found := get(f); found {
				c.w.Bulk(v)
			} else {
				c.w.Null()
			}
		}
	}
	if c.hashCold(args[1], args[2:], answer) {
		return
	}
	exists, ok := c.readHash(args[1], func(h *hash.Hash) { answer(h.Get, h.Len()) })
	if ok && !exists {
		c.w.Array(len(args) - 2)
		for range args[2:] {
			c.w.Null()
		}
	}
}

// hashList writes key's fields (HKEYS), values (HVALS) or both (HGETALL:
// field, value, ... in the hash's order, a map in RESP3).
func (c *conn) hashList(key []byte, fields, values bool) {
	header := func(n int) {
		if fields && values {
			c.w.Map(n)
		} else {
			c.w.Array(n)
		}
	}
	exists, ok := c.readHash(key, func(h *hash.Hash) {
		header(h.Len())
		h.Each(func(f, v []byte) bool {
			if fields {
				c.w.Bulk(f)
			}
			if values {
				c.w.Bulk(v)
			}
			return true
		})
	})
	if ok && !exists {
		header(0)
	}
}

// cmdHLen: HLEN key → the field count.
func (c *conn) cmdHLen(args [][]byte) {
	if c.hashCold(args[1], nil, func(_ func([]byte) ([]byte, bool), n int) { c.w.Int(int64(n)) }) {
		return
	}
	if exists, ok := c.readHash(args[1], func(h *hash.Hash) { c.w.Int(int64(h.Len())) }); ok && !exists {
		c.w.Int(0)
	}
}

// hashField answers HEXISTS key field (1 or 0) or, with length, HSTRLEN
// key field (the value's length, 0 if absent).
func (c *conn) hashField(args [][]byte, length bool) {
	var v []byte
	var found bool
	exists, ok := true, true
	if !c.hashCold(args[1], args[2:3], func(get func([]byte) ([]byte, bool), _ int) { v, found = get(args[2]) }) {
		exists, ok = c.readHash(args[1], func(h *hash.Hash) { v, found = h.Get(args[2]) })
	}
	switch {
	case !ok:
	case length:
		c.w.Int(int64(len(v))) // a length read under the lock: v is not read again
	case exists && found:
		c.w.Int(1)
	default:
		c.w.Int(0)
	}
}

// cmdHIncrBy: HINCRBY key field increment → the new value.
func (c *conn) cmdHIncrBy(args [][]byte) {
	incr, ok := c.intArg(args[3])
	if !ok {
		return
	}
	var result int64
	var num [20]byte
	_, err := c.s.cache.Edit(args[1], hashes, true, func(v tier.Live) (tier.EditResult, error) {
		h := hashOf(v)
		var cur int64
		if old, found := h.Get(args[2]); found {
			var ok bool
			if cur, ok = parseInt(old); !ok {
				return tier.Unchanged, replyError(errHashNotInt)
			}
		}
		if incr > 0 && cur > math.MaxInt64-incr || incr < 0 && cur < math.MinInt64-incr {
			return tier.Unchanged, replyError(errOverflow)
		}
		result = cur + incr
		if _, err := c.hashPut(h, [][]byte{args[2], strconv.AppendInt(num[:0], result, 10)}); err != nil {
			return tier.Unchanged, err
		}
		return tier.Changed, nil
	})
	c.numReply(result, err)
}

// cmdHIncrByFloat: HINCRBYFLOAT key field increment → the new value, as
// Redis formats it (resp.AppendFloat).
func (c *conn) cmdHIncrByFloat(args [][]byte) {
	incr, ok := parseFloat(args[3])
	if !ok {
		c.w.Error(errNotFloat)
		return
	}
	if incr.IsInf() {
		c.w.Error(errValueNaNInf)
		return
	}
	var result []byte
	_, err := c.s.cache.Edit(args[1], hashes, true, func(v tier.Live) (tier.EditResult, error) {
		h := hashOf(v)
		old, found := h.Get(args[2])
		var err error
		if result, err = incrFloat(result[:0], old, found, incr, errHashNotFloat); err != nil {
			return tier.Unchanged, err
		}
		if _, err := c.hashPut(h, [][]byte{args[2], result}); err != nil {
			return tier.Unchanged, err
		}
		return tier.Changed, nil
	})
	if err != nil {
		c.cacheError(err)
		return
	}
	c.w.Bulk(result)
}

// maxRandCount bounds HRANDFIELD's negative count: the reply is built in
// memory (Redis has no bound; it would stream gigabytes).
const maxRandCount = 1 << 20

// cmdHRandField: HRANDFIELD key [count [WITHVALUES]]. Without count, one
// field (nil if the key is absent); a positive count, that many distinct
// fields at most; a negative count, exactly -count fields that may repeat.
func (c *conn) cmdHRandField(args [][]byte) {
	var count int64
	withValues := false
	if len(args) >= 3 {
		var ok bool
		if count, withValues, ok = c.randCountArgs(args[2:]); !ok {
			return
		}
	}
	exists, ok := c.readHash(args[1], func(h *hash.Hash) { c.randFields(h, args, count, withValues) })
	if !ok || exists {
		return
	}
	if len(args) == 2 {
		c.w.Null()
	} else {
		c.w.Array(0)
	}
}

// randFields answers HRANDFIELD from h (under the cache's read lock).
func (c *conn) randFields(h *hash.Hash, args [][]byte, count int64, withValues bool) {
	n := h.Len()
	if len(args) == 2 {
		if n == 0 {
			c.w.Null()
			return
		}
		c.w.Bulk(h.Random().Name)
		return
	}
	write := func(f hash.Field) {
		if withValues && c.w.Proto() >= 3 {
			c.w.Array(2)
		}
		c.w.Bulk(f.Name)
		if withValues {
			c.w.Bulk(f.Value)
		}
	}
	reply := func(k int) {
		if withValues && c.w.Proto() < 3 {
			c.w.Array(2 * k)
		} else {
			c.w.Array(k)
		}
	}
	switch {
	case n == 0 || count == 0:
		reply(0)
	case count < 0:
		k := -count
		if k > maxRandCount {
			c.w.Error(errRandCountTooLarge(maxRandCount))
			return
		}
		reply(int(k))
		for range k {
			write(h.Random())
		}
	default:
		fields := h.Fields(c.agg.fields[:0])
		k := int(min(count, int64(n)))
		if k < n {
			rand.Shuffle(n, func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
		}
		reply(k)
		for _, f := range fields[:k] {
			write(f)
		}
		clear(fields)
		if cap(fields) <= 4096 {
			c.agg.fields = fields[:0]
		}
	}
}

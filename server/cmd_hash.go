package server

import (
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/tiercache/tiercache/tier"
	"github.com/tiercache/tiercache/value/hash"
)

// The hash commands (Redis 7.0). A hash is a hash.Hash in the DRAM tiers
// (a record edited in place while small, a table once large, its field
// expiries in a side table): a write is one Cache.Edit that changes the
// fields it names (hashEdit), a read one Cache.Read that answers from the
// structure under the cache's read lock, skipping expired fields
// (readHash).

// aggBuf is a connection's reused buffers for aggregate commands.
type aggBuf struct {
	fields []hash.Field
	enc    []byte
	seen   map[string]int // hash.CheckPuts's fields named twice
	codes  []int64        // the per-field codes of HEXPIRE and HPERSIST
	vals   hfeValues      // the values HGETDEL and HGETEX answer
	hfe    hfeDone        // what the running field expiry write did (its events)
	// purged is how many expired fields the running write dropped from
	// its hash (afterWrite's "hexpired"); runWrite clears it.
	purged int
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

// readHash runs f on key's hash for a read-only command (readLive): f
// answers from the fields not expired at now (hash.Hash's live readers).
// A hash left with no such field is absent (exists false, f not called).
// It notes the hash for the sweeper, due at once when fields expired.
func (c *conn) readHash(key []byte, f func(h *hash.Hash, now int64)) (exists, ok bool) {
	ns := c.now()
	now := ns / int64(time.Millisecond)
	var expired int
	var bound int64
	empty := false
	exists, ok = c.readLiveAt(key, hashes, ns, func(v tier.Live) {
		h := hashOf(v)
		expired, bound = h.Expired(now), h.ExpiryBound()
		if empty = h.Len() == expired; !empty {
			f(h, now)
		}
	})
	switch {
	case expired > 0:
		c.s.hfe.dueNow(key, now)
	case bound != 0:
		c.s.hfe.note(key, bound)
	}
	return exists && !empty, ok
}

// hashEdit changes key's hash in one Cache.Edit: edit gets the hash (a
// new empty one when the key is absent and create is set) without its
// expired fields and reports whether it changed it; one left empty is
// removed. An error from edit, or no change, leaves the hash as it was:
// a hash with expired fields is edited in a copy without them that
// replaces it only once changed, and so is every hash with isolate (an
// edit that may grow it past the limits, checked after it). edit may run
// more than once (writethrough) and must only change the hash and note
// what it answers.
func (c *conn) hashEdit(key []byte, create, isolate bool, edit func(h *hash.Hash) (bool, error)) (exists bool, err error) {
	var purged, seen int
	var next int64
	ns := c.now()
	now := ns / int64(time.Millisecond) // nowMs's, of the reading Edit decides the key's expiry by
	exists, err = c.s.cache.EditAt(key, hashes, create, ns, func(v tier.Live) (tier.EditResult, error) {
		h := hashOf(v)
		purged, next = 0, 0
		seen = h.Expired(now)
		w := h
		if seen > 0 || isolate {
			w = h.Clone()
			w.Purge(now)
		}
		changed, err := edit(w)
		if err == nil && changed && isolate {
			err = c.s.hashLimits.Check(w.Len(), w.RecordSize())
		}
		if err != nil || !changed {
			next = h.ExpiryBound()
			return tier.Unchanged, err
		}
		if w != h {
			h.Become(w)
		}
		purged, next = seen, h.MinExpiry()
		if h.Len() == 0 {
			return tier.Emptied, nil
		}
		return tier.Changed, nil
	})
	if err == nil {
		c.hashWritten(key, purged, seen, next, now)
	}
	return exists, err
}

// hashWritten follows a write of key's hash: it counts the expired fields
// the write dropped and stored (their "hexpired" event is afterWrite's),
// makes the hash due for the sweeper when it saw expired fields it did not
// drop (it changed nothing), and notes the hash's earliest expiry.
func (c *conn) hashWritten(key []byte, purged, seen int, next, now int64) {
	if purged > 0 {
		c.agg.purged += purged
		c.s.hfe.expired.Add(uint64(purged))
	} else if seen > 0 {
		c.s.hfe.dueNow(key, now)
	}
	c.s.hfe.note(key, next)
}

// hashPut sets pairs in h (HSET's: a field set again loses its expiry;
// with keepTTL keeps it, HINCRBY's) once they fit the limits, and returns
// how many fields are new.
func (c *conn) hashPut(h *hash.Hash, pairs [][]byte, keepTTL bool) (int, error) {
	if len(pairs) == 2 {
		added, err := h.PutLimited(pairs[0], pairs[1], keepTTL, c.s.hashLimits)
		if added {
			return 1, err
		}
		return 0, err
	}
	if c.agg.seen == nil {
		c.agg.seen = map[string]int{}
	}
	if err := h.CheckPuts(pairs, keepTTL, c.s.hashLimits, c.agg.seen); err != nil {
		return 0, err
	}
	put := h.Put
	if keepTTL {
		put = h.PutKeepTTL
	}
	added := 0
	for i := 0; i+1 < len(pairs); i += 2 {
		if put(pairs[i], pairs[i+1]) {
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
	_, err := c.hashEdit(args[1], true, false, func(h *hash.Hash) (bool, error) {
		var err error
		added, err = c.hashPut(h, args[2:], false)
		return err == nil, err
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
	_, err := c.hashEdit(args[1], true, false, func(h *hash.Hash) (bool, error) {
		if _, added = h.Get(args[2]); added {
			added = false
			return false, nil
		}
		if _, err := c.hashPut(h, args[2:4], false); err != nil {
			return false, err
		}
		added = true
		return true, nil
	})
	c.noop = !added
	c.boolReply(added, err)
}

// cmdHDel: HDEL key field [field ...] → fields removed; the key goes with
// its last field.
func (c *conn) cmdHDel(args [][]byte) {
	var removed int
	_, err := c.hashEdit(args[1], false, false, func(h *hash.Hash) (bool, error) {
		removed = 0
		for _, f := range args[2:] {
			if h.Delete(f) {
				removed++
			}
		}
		return removed > 0, nil
	})
	if removed == 0 && err == nil {
		c.noop = true // nothing changed: WATCHed keys are not touched (intReply)
	}
	c.numReply(int64(removed), err)
}

// cmdHGet: HGET key field → the value, nil if absent.
func (c *conn) cmdHGet(args [][]byte) {
	if c.hashCold(args[1], args[2:3], false, func(get coldLookup, _ int) {
		if v, _, found := get(args[2]); found {
			c.w.Bulk(v)
		} else {
			c.w.Null()
		}
	}) {
		return
	}
	exists, ok := c.readHash(args[1], func(h *hash.Hash, now int64) {
		if v, found := h.GetLive(args[2], now); found {
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
	answer := func(get coldLookup, _ int) {
		c.w.Array(len(args) - 2)
		for _, f := range args[2:] {
			if v, _, found := get(f); found {
				c.w.Bulk(v)
			} else {
				c.w.Null()
			}
		}
	}
	if c.hashCold(args[1], args[2:], false, answer) {
		return
	}
	exists, ok := c.readHash(args[1], func(h *hash.Hash, now int64) {
		answer(func(f []byte) ([]byte, int64, bool) {
			v, found := h.GetLive(f, now)
			return v, 0, found
		}, 0)
	})
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
	exists, ok := c.readHash(key, func(h *hash.Hash, now int64) {
		header(h.LenLive(now))
		h.EachLive(now, func(f, v []byte, _ int64) bool {
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
	if c.hashCold(args[1], nil, true, func(_ coldLookup, n int) { c.w.Int(int64(n)) }) {
		return
	}
	if exists, ok := c.readHash(args[1], func(h *hash.Hash, now int64) { c.w.Int(int64(h.LenLive(now))) }); ok && !exists {
		c.w.Int(0)
	}
}

// hashField answers HEXISTS key field (1 or 0) or, with length, HSTRLEN
// key field (the value's length, 0 if absent).
func (c *conn) hashField(args [][]byte, length bool) {
	var v []byte
	var found bool
	exists, ok := true, true
	if !c.hashCold(args[1], args[2:3], false, func(get coldLookup, _ int) { v, _, found = get(args[2]) }) {
		exists, ok = c.readHash(args[1], func(h *hash.Hash, now int64) { v, found = h.GetLive(args[2], now) })
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
	_, err := c.hashEdit(args[1], true, false, func(h *hash.Hash) (bool, error) {
		var cur int64
		if old, found := h.Get(args[2]); found {
			var ok bool
			if cur, ok = parseInt(old); !ok {
				return false, replyError(errHashNotInt)
			}
		}
		if incr > 0 && cur > math.MaxInt64-incr || incr < 0 && cur < math.MinInt64-incr {
			return false, replyError(errOverflow)
		}
		result = cur + incr
		_, err := c.hashPut(h, [][]byte{args[2], strconv.AppendInt(num[:0], result, 10)}, true)
		return err == nil, err
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
	_, err := c.hashEdit(args[1], true, false, func(h *hash.Hash) (bool, error) {
		old, found := h.Get(args[2])
		var err error
		if result, err = incrFloat(result[:0], old, found, incr, errHashNotFloat); err != nil {
			return false, err
		}
		_, err = c.hashPut(h, [][]byte{args[2], result}, true)
		return err == nil, err
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
	exists, ok := c.readHash(args[1], func(h *hash.Hash, now int64) { c.randFields(h, now, args, count, withValues) })
	if !ok || exists {
		return
	}
	if len(args) == 2 {
		c.w.Null()
	} else {
		c.w.Array(0)
	}
}

// randFields answers HRANDFIELD from h's fields not expired at now
// (under the cache's read lock).
func (c *conn) randFields(h *hash.Hash, now int64, args [][]byte, count int64, withValues bool) {
	var live []hash.Field // the fields left, when some expired
	if h.Expired(now) > 0 {
		live = h.LiveFields(c.agg.fields[:0], now)
		defer c.keepFields(live)
	}
	random := h.Random
	if live != nil {
		random = func() hash.Field { return live[rand.IntN(len(live))] }
	}
	n := h.LenLive(now)
	if len(args) == 2 {
		if n == 0 {
			c.w.Null()
			return
		}
		c.w.Bulk(random().Name)
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
			c.w.Error(errRandCountTooLarge(maxRandCount, "fields"))
			return
		}
		reply(int(k))
		for range k {
			write(random())
		}
	default:
		fields := live
		if fields == nil {
			fields = h.Fields(c.agg.fields[:0])
			defer c.keepFields(fields)
		}
		k := int(min(count, int64(n)))
		if k < n {
			rand.Shuffle(n, func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
		}
		reply(k)
		for _, f := range fields[:k] {
			write(f)
		}
	}
}

// keepFields drops what fields references (the hash's bytes) and keeps
// the buffer for the next command, unless it grew large.
func (c *conn) keepFields(fields []hash.Field) {
	clear(fields)
	if cap(fields) <= 4096 {
		c.agg.fields = fields[:0]
	}
}

package server

import (
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/tiercache/tiercache/tier"
	"github.com/tiercache/tiercache/value/hash"
)

// The hash commands (Redis 7.0). A read decodes the one record that holds
// the hash; a write decodes it, changes it and stores it again in one
// Cache.Update (so it is atomic, and O(hash size): docs/DESIGN.md).

// aggBuf is a connection's reused buffers for aggregate commands.
type aggBuf struct {
	fields []hash.Field
	enc    []byte
	enc2   []byte    // the second of two buffers record edits alternate between
	live   []byte    // a hash without its expired fields (hashLiveView, hashEdit)
	codes  []int64   // the per-field codes of HEXPIRE and HPERSIST
	vals   hfeValues // the values HGETDEL and HGETEX answer
	hfe    hfeDone   // what the running field expiry write did (its events)
	// purged is how many expired fields the running write dropped from
	// its hash (afterWrite's "hexpired"); runWrite clears it.
	purged int
}

// hashEditMax is the most fields a command edits in the record directly
// (hash.Put, hash.Remove: a scan for the field and one copy of the bytes
// around it); more go through hash.Decode and hash.Encode.
const hashEditMax = 8

// maxAggKeep is the largest buffer an aggregate command keeps for the
// next one.
const maxAggKeep = 1 << 20

// hashRead reads key's hash for a read command: rec is nil when the key is
// absent, and holds no expired field (hashLiveView). When ok is false the
// error reply is written.
func (c *conn) hashRead(key []byte) (rec []byte, ok bool) {
	rec, ok = c.kindRead(key, kindHash, false)
	if !ok || !hash.HasTTL(rec) {
		return rec, ok
	}
	rec, err := c.hashLiveView(key, rec)
	if err != nil {
		c.cacheError(err)
		return nil, false
	}
	return rec, true
}

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

// hashFields decodes key's hash; ok false means the reply is written.
func (c *conn) hashFields(key []byte) (fields []hash.Field, ok bool) {
	rec, ok := c.hashRead(key)
	if !ok || rec == nil {
		return nil, ok
	}
	fields, err := hash.Decode(c.agg.fields[:0], rec)
	if err != nil {
		c.cacheError(err)
		return nil, false
	}
	if cap(fields) <= 4096 {
		c.agg.fields = fields[:0]
	}
	return fields, true
}

// hashUpdate changes key's hash in one step: edit gets its fields (none
// when absent) and returns the new ones and whether anything changed; a
// hash left empty is removed. edit may run more than once (tier.Cache.Update)
// and must only compute. An error from edit changes nothing.
func (c *conn) hashUpdate(key []byte, edit func(fields []hash.Field) ([]hash.Field, bool, error)) error {
	var purged, seen int
	var next int64
	now := c.s.nowMs()
	err := c.s.cache.Update(key, func(cur tier.Current) (tier.Change, error) {
		fields := c.agg.fields[:0]
		purged, seen, next = 0, 0, 0
		if cur.Exists {
			if cur.Kind != kindHash {
				return tier.Change{}, wrongType
			}
			var err error
			if fields, err = hash.Decode(fields, cur.Value); err != nil {
				return tier.Change{}, err
			}
			fields, seen = hash.Purge(fields, now) // expired fields are not there
		}
		out, changed, err := edit(fields)
		if err != nil || !changed {
			return tier.Change{Op: tier.Keep}, err
		}
		purged = seen
		if len(out) == 0 {
			return tier.Change{Op: tier.Remove}, nil
		}
		next = hash.MinExpiry(out)
		size := hash.Size(out)
		if err := c.s.hashLimits.Check(len(out), size); err != nil {
			return tier.Change{}, err
		}
		enc := hash.Encode(c.agg.enc[:0], out) // the cache copies it
		if cap(enc) <= maxAggKeep {
			c.agg.enc = enc[:0]
		}
		if cap(out) <= 4096 {
			c.agg.fields = out[:0]
		}
		return tier.Change{Op: tier.Store, Value: enc, Kind: kindHash}, nil
	})
	clear(c.agg.fields[:cap(c.agg.fields)]) // drop the references to the record and the arguments
	if err == nil {
		c.hashWritten(key, purged, seen, next, now)
	}
	return err
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

// hashEdit changes key's hash record in one step, as hashUpdate does, for
// edits made on the record itself (hashPut, hashRemove): edit gets the
// record (nil when absent) and returns the new one (checked against the
// limits by hashPut), or changed false.
func (c *conn) hashEdit(key []byte, edit func(rec []byte) ([]byte, bool, error)) error {
	var purged, seen int
	var next int64
	now := c.s.nowMs()
	err := c.s.cache.Update(key, func(cur tier.Current) (tier.Change, error) {
		var rec []byte
		purged, seen, next = 0, 0, 0
		if cur.Exists {
			if cur.Kind != kindHash {
				return tier.Change{}, wrongType
			}
			rec = cur.Value
			if hash.HasTTL(rec) { // expired fields are not there
				var err error
				if rec, next, seen, err = hash.Live(c.agg.live[:0], rec, now, true); err != nil {
					return tier.Change{}, err
				}
			}
		}
		out, changed, err := edit(rec)
		if err != nil || !changed {
			return tier.Change{Op: tier.Keep}, err
		}
		purged = seen
		if hash.Empty(out) {
			return tier.Change{Op: tier.Remove}, nil
		}
		return tier.Change{Op: tier.Store, Value: out, Kind: kindHash}, nil // the cache copies it
	})
	if err == nil {
		c.hashWritten(key, purged, seen, next, now) // next: no later than the stored record's earliest
	}
	return err
}

// recBufs hands out the connection's two edit buffers in turn, and keeps
// them for the next command (keep).
type recBufs struct {
	b [2][]byte
	i int
}

func (c *conn) recBufs() *recBufs { return &recBufs{b: [2][]byte{c.agg.enc[:0], c.agg.enc2[:0]}} }

// next is the buffer not holding the last output.
func (r *recBufs) next() []byte { return r.b[r.i&1][:0] }

// took records out as the last output (written into next's buffer).
func (r *recBufs) took(out []byte) {
	r.b[r.i&1] = out
	r.i++
}

func (c *conn) keepBufs(r *recBufs) {
	if cap(r.b[0]) <= maxAggKeep {
		c.agg.enc = r.b[0][:0]
	}
	if cap(r.b[1]) <= maxAggKeep {
		c.agg.enc2 = r.b[1][:0]
	}
}

// hashPutAll sets the pairs in rec by record edits: the new record and how
// many fields are new. A field set again loses its expiry (HSET), or keeps
// it with keepTTL (HINCRBY).
func (c *conn) hashPutAll(rec []byte, pairs [][]byte, keepTTL bool) ([]byte, int, error) {
	bufs := c.recBufs()
	defer c.keepBufs(bufs)
	put := hash.Put
	if keepTTL {
		put = hash.PutKeepTTL
	}
	added := 0
	for i := 0; i+1 < len(pairs); i += 2 {
		out, a, err := put(bufs.next(), rec, pairs[i], pairs[i+1], c.s.hashLimits)
		if err != nil {
			return nil, 0, err
		}
		bufs.took(out)
		rec = out
		if a {
			added++
		}
	}
	return rec, added, nil
}

// hsetCmd: HSET key field value [field value ...] → fields added; HMSET
// (okReply) answers OK.
func (c *conn) hsetCmd(args [][]byte, okReply bool) {
	if len(args)%2 != 0 {
		c.wrongArity()
		return
	}
	var added int
	var err error
	if len(args)-2 <= 2*hashEditMax {
		err = c.hashEdit(args[1], func(rec []byte) ([]byte, bool, error) {
			out, a, err := c.hashPutAll(rec, args[2:], false)
			added = a
			return out, err == nil, err
		})
	} else {
		err = c.hashUpdate(args[1], func(fields []hash.Field) ([]hash.Field, bool, error) {
			fields, added = hash.Set(fields, args[2:])
			return fields, true, nil
		})
	}
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
	var added int
	err := c.hashEdit(args[1], func(rec []byte) ([]byte, bool, error) {
		added = 0
		_, found, err := hash.Get(rec, args[2])
		if err != nil || found {
			return nil, false, err
		}
		out, _, err := c.hashPutAll(rec, args[2:4], false)
		added = 1
		return out, err == nil, err
	})
	c.boolReply(added == 1, err)
}

// cmdHDel: HDEL key field [field ...] → fields removed; the key goes with
// its last field.
func (c *conn) cmdHDel(args [][]byte) {
	var removed int
	var err error
	if len(args)-2 <= hashEditMax {
		err = c.hashEdit(args[1], func(rec []byte) ([]byte, bool, error) {
			removed = 0
			bufs := c.recBufs()
			defer c.keepBufs(bufs)
			for _, f := range args[2:] {
				out, ok, err := hash.Remove(bufs.next(), rec, f)
				if err != nil {
					return nil, false, err
				}
				if ok {
					bufs.took(out)
					rec = out
					removed++
				}
			}
			return rec, removed > 0, nil
		})
	} else {
		err = c.hashUpdate(args[1], func(fields []hash.Field) ([]hash.Field, bool, error) {
			fields, removed = hash.Delete(fields, args[2:])
			return fields, removed > 0, nil
		})
	}
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
	rec, ok := c.hashRead(args[1])
	if !ok {
		return
	}
	if rec == nil {
		c.w.Null()
		return
	}
	v, found, err := hash.Get(rec, args[2])
	switch {
	case err != nil:
		c.cacheError(err)
	case !found:
		c.w.Null()
	default:
		c.w.Bulk(v)
	}
}

// cmdHMGet: HMGET key field [field ...] → one value (or nil) per field.
func (c *conn) cmdHMGet(args [][]byte) {
	if c.hashCold(args[1], args[2:], func(get func([]byte) ([]byte, bool), _ int) {
		c.w.Array(len(args) - 2)
		for _, f := range args[2:] {
			if v, found := get(f); found {
				c.w.Bulk(v)
			} else {
				c.w.Null()
			}
		}
	}) {
		return
	}
	fields, ok := c.hashFields(args[1])
	if !ok {
		return
	}
	c.w.Array(len(args) - 2)
	for _, f := range args[2:] {
		if j := hash.Find(fields, f); j >= 0 {
			c.w.Bulk(fields[j].Value)
			continue
		}
		c.w.Null()
	}
	clear(fields)
}

// hashList writes key's fields (HKEYS), values (HVALS) or both (HGETALL:
// field, value, ... in insertion order, a map in RESP3).
func (c *conn) hashList(key []byte, fields, values bool) {
	rec, ok := c.hashRead(key)
	if !ok {
		return
	}
	if rec == nil {
		if fields && values {
			c.w.Map(0)
		} else {
			c.w.Array(0)
		}
		return
	}
	n, err := hash.Check(rec) // before a reply starts
	if err != nil {
		c.cacheError(err)
		return
	}
	if fields && values {
		c.w.Map(n)
	} else {
		c.w.Array(n)
	}
	_ = hash.Each(rec, func(f, v []byte) bool {
		if fields {
			c.w.Bulk(f)
		}
		if values {
			c.w.Bulk(v)
		}
		return true
	})
}

// cmdHLen: HLEN key → the field count.
func (c *conn) cmdHLen(args [][]byte) {
	if c.hashCold(args[1], nil, func(_ func([]byte) ([]byte, bool), n int) { c.w.Int(int64(n)) }) {
		return
	}
	rec, ok := c.hashRead(args[1])
	if !ok {
		return
	}
	if rec == nil {
		c.w.Int(0)
		return
	}
	n, err := hash.Check(rec)
	if err != nil {
		c.cacheError(err)
		return
	}
	c.w.Int(int64(n))
}

// hashField answers HEXISTS key field (1 or 0) or, with length, HSTRLEN
// key field (the value's length, 0 if absent).
func (c *conn) hashField(args [][]byte, length bool) {
	if c.hashCold(args[1], args[2:3], func(get func([]byte) ([]byte, bool), _ int) {
		v, found := get(args[2])
		switch {
		case length:
			c.w.Int(int64(len(v)))
		case found:
			c.w.Int(1)
		default:
			c.w.Int(0)
		}
	}) {
		return
	}
	rec, ok := c.hashRead(args[1])
	if !ok {
		return
	}
	var v []byte
	var found bool
	var err error
	if rec != nil {
		v, found, err = hash.Get(rec, args[2])
	}
	switch {
	case err != nil:
		c.cacheError(err)
	case length:
		c.w.Int(int64(len(v)))
	case found:
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
	err := c.hashEdit(args[1], func(rec []byte) ([]byte, bool, error) {
		v, found, err := hash.Get(rec, args[2])
		if err != nil {
			return nil, false, err
		}
		var cur int64
		if found {
			var ok bool
			if cur, ok = parseInt(v); !ok {
				return nil, false, replyError(errHashNotInt)
			}
		}
		if incr > 0 && cur > math.MaxInt64-incr || incr < 0 && cur < math.MinInt64-incr {
			return nil, false, replyError(errOverflow)
		}
		result = cur + incr
		out, _, err := c.hashPutAll(rec, [][]byte{args[2], strconv.AppendInt(num[:0], result, 10)}, true)
		return out, err == nil, err
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
	err := c.hashEdit(args[1], func(rec []byte) ([]byte, bool, error) {
		v, found, err := hash.Get(rec, args[2])
		if err != nil {
			return nil, false, err
		}
		if result, err = incrFloat(result[:0], v, found, incr, errHashNotFloat); err != nil {
			return nil, false, err
		}
		out, _, err := c.hashPutAll(rec, [][]byte{args[2], result}, true)
		return out, err == nil, err
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
	fields, ok := c.hashFields(args[1])
	if !ok {
		return
	}
	if len(args) == 2 {
		if len(fields) == 0 {
			c.w.Null()
			return
		}
		c.w.Bulk(fields[rand.IntN(len(fields))].Name)
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
	n := len(fields)
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
			write(fields[rand.IntN(n)])
		}
	default:
		k := int(min(count, int64(n)))
		if k < n {
			rand.Shuffle(n, func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
		}
		reply(k)
		for _, f := range fields[:k] {
			write(f)
		}
	}
	clear(fields)
}

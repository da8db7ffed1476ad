package server

import (
	"context"
	"time"

	"github.com/tiercache/tiercache/resp"
	"github.com/tiercache/tiercache/tier"
)

func (c *conn) cmdGet(args [][]byte) { c.getKey(args[1], c.now()) }

// getKey answers GET key at the cache's time now, and notes in c.coldGet
// whether that read the cold device. A big value read from cold goes into
// a buffer lent by c.lendBig, and is sent from there.
func (c *conn) getKey(key []byte, now int64) {
	lent := len(c.bigLent)
	v, filled, ok, cold, err := c.s.cache.ViewBigAt(c.scratch[:0], key, now, c.into, c.lendBig)
	c.coldGet = cold
	if filled && ok && err == nil {
		c.st.hits.Add(1) // the value went straight into the reply buffer
		return
	}
	if ok && err == nil && len(c.bigLent) > lent {
		c.st.hits.Add(1)
		c.w.BulkShared(v) // c.bigLent keeps it until the reply is flushed
		return
	}
	c.valueReply(v, ok, err)
}

// lendBig lends a GET an off-heap buffer of n bytes for a big value read
// from cold (resp.LendBig), given back once the reply is flushed; none to
// a script's connection, which never flushes (its replies are read back).
func (c *conn) lendBig(n int) []byte {
	if c.scriptOf != nil {
		return nil
	}
	b := resp.LendBig(n)
	if b != nil {
		c.bigLent = append(c.bigLent, b)
	}
	return b
}

// giveBackBig gives back the buffers lendBig lent (the replies sent from
// them were flushed).
func (c *conn) giveBackBig() {
	for i, b := range c.bigLent {
		if c.s.opts.PoisonBigBuffers {
			resp.Poison(b)
		}
		resp.GiveBackBig(b)
		c.bigLent[i] = nil
	}
	c.bigLent = c.bigLent[:0]
}

// cmdSet: SET key value [NX|XX] [GET] [EX s|PX ms|EXAT ts|PXAT ms-ts|KEEPTTL].
func (c *conn) cmdSet(args [][]byte) {
	var o tier.SetOptions
	var get bool
	if len(args) > 3 { // a plain SET, the most frequent, calls no parser
		var ok bool
		if o, get, ok = c.setArgs(args[3:]); !ok {
			return
		}
	}
	key, val := args[1], args[2]
	if get {
		// One step: the value returned is the one this SET replaced.
		old, hadOld, stored, err := c.s.cache.SetGet(c.scratch[:0], key, val, o)
		c.noop = !stored
		c.valueReply(old, hadOld, err)
		return
	}
	// An absolute expiry in the past leaves the key absent, as in Redis
	// (the Cache deletes it in the same step). A big value the cache
	// would keep is the Reader's to give (rather than copied); one copied
	// into DRAM leaves its slice to the Reader, to receive the next big
	// value into.
	o.Owned = c.s.cache.KeepsOwned(len(val)) && c.rd.Keep(val)
	o.Now = c.now()
	stored, err := c.s.cache.Set(key, val, o)
	if err != nil {
		c.cacheError(err)
		return
	}
	if stored {
		c.w.OK()
		return
	}
	c.noop = true
	c.w.Null()
}

func (c *conn) cmdDel(args [][]byte) {
	n, err := c.s.cache.Delete(args[1:]...)
	if err != nil {
		c.cacheError(err)
		return
	}
	c.noop = n == 0
	c.w.Int(int64(n))
}

func (c *conn) cmdExists(args [][]byte) { c.w.Int(int64(c.s.cache.Exists(args[1:]...))) }

func (c *conn) cmdMGet(args [][]byte) {
	vals, err := c.s.cache.MGetIn(&c.chunks, args[1:])
	if err != nil {
		c.cacheError(err)
		return
	}
	c.w.Array(len(vals))
	var hits uint64
	for _, v := range vals {
		if v == nil {
			c.w.Null()
			continue
		}
		hits++
		c.w.BulkShared(v) // c.chunks keeps them until the reply is flushed
	}
	c.st.hits.Add(hits)
	c.st.misses.Add(uint64(len(vals)) - hits)
}

func (c *conn) cmdMSet(args [][]byte) {
	if len(args)%2 != 1 {
		c.wrongArity()
		return
	}
	kvs := c.kvs[:0]
	for i := 1; i < len(args); i += 2 {
		kvs = append(kvs, [2][]byte{args[i], args[i+1]})
	}
	err := c.s.cache.MSet(kvs)
	clear(kvs)
	if cap(kvs) <= 1024 {
		c.kvs = kvs[:0]
	}
	if err != nil {
		c.cacheError(err)
		return
	}
	c.w.OK()
}

// expireCmd: EXPIRE key seconds, PEXPIRE key ms (unit), EXPIREAT key
// unix-seconds, PEXPIREAT key unix-ms (at), each [NX|XX|GT|LT]. The
// condition is checked and the expiry set in one step; a non-positive
// time, or one in the past, deletes the key (when the condition holds),
// as in Redis.
func (c *conn) expireCmd(args [][]byte, unit time.Duration, at bool) {
	d, when, cond, ok := c.expireArgs(args[2:], unit, at)
	if !ok {
		return
	}
	if !when.IsZero() {
		c.intReplyErr(c.s.cache.ExpireAtIf(args[1], when, cond))
		return
	}
	c.intReplyErr(c.s.cache.ExpireIf(args[1], d, cond))
}

// ttlCmd: TTL key (unit time.Second), PTTL key (time.Millisecond): as
// Redis counts them, the expiry's millisecond less the clock's (PTTL),
// that rounded to seconds (TTL); -1 without an expiry, -2 when the key is
// absent.
func (c *conn) ttlCmd(args [][]byte, unit time.Duration) {
	ms, exists := c.s.cache.TTLMillis(args[1])
	switch {
	case !exists:
		c.w.Int(-2)
	case ms < 0:
		c.w.Int(-1)
	case unit == time.Second:
		c.w.Int((ms + 500) / 1000)
	default:
		c.w.Int(ms)
	}
}

func (c *conn) cmdPersist(args [][]byte) {
	c.intReplyErr(c.s.cache.Persist(args[1]))
}

func (c *conn) cmdTier(args [][]byte) {
	if t := c.s.cache.Where(args[1]); t != "" {
		c.w.BulkString(t)
		return
	}
	c.w.Null()
}

func (c *conn) cmdDBSize(args [][]byte) { c.w.Int(int64(c.s.cache.Keys())) }

// cmdFlush: FLUSHALL|FLUSHDB [ASYNC|SYNC]. Either way other clients wait
// only while the cache swaps its directory's maps, and see no key from
// then on (tier T14, T36). ASYNC answers then, while the flushed keys'
// memory is freed and their cold deletes queued in the background; SYNC,
// and no argument (Redis's default, lazyfree-lazy-user-flush no), answer
// once that is done.
func (c *conn) cmdFlush(args [][]byte) {
	async, ok := c.flushArgs(args[1:])
	if !ok {
		return
	}
	c.s.touchAll() // the keys it removes: their watchers' EXEC aborts
	if err := c.s.cache.Flush(); err != nil {
		c.cacheError(err)
		return
	}
	c.s.hfe.clear()
	c.s.trk.forgetAll() // with a client tracking, afterWrite tells it too (invalidateAll)
	if !async {
		if err := c.s.cache.WaitPurge(context.Background()); err != nil {
			c.cacheError(err)
			return
		}
	}
	c.w.OK()
}

package server

import (
	"bytes"
	"context"
	"math"
	"strings"
	"time"
)

func (c *conn) cmdGet(args [][]byte) { c.getKey(args[1]) }

// getKey answers GET key, and notes in c.coldGet whether that read the
// cold device.
func (c *conn) getKey(key []byte) {
	v, filled, ok, cold, err := c.s.cache.View(c.scratch[:0], key, c.into)
	c.coldGet = cold
	if filled && ok && err == nil {
		c.st.hits.Add(1) // the value went straight into the reply buffer
		return
	}
	c.valueReply(v, ok, err)
}

// cmdSet: SET key value [NX|XX] [GET] [EX s|PX ms|EXAT ts|PXAT ms-ts|KEEPTTL].
func (c *conn) cmdSet(args [][]byte) {
	var o SetOptions
	get, expiry := false, false
	var at time.Time
	for i := 3; i < len(args); i++ {
		opt := strings.ToUpper(string(args[i]))
		switch opt {
		case "NX", "XX":
			if o.NX || o.XX {
				c.w.Error("ERR syntax error")
				return
			}
			o.NX, o.XX = opt == "NX", opt == "XX"
		case "GET":
			get = true
		case "KEEPTTL":
			if expiry {
				c.w.Error("ERR syntax error")
				return
			}
			o.KeepTTL, expiry = true, true
		case "EX", "PX", "EXAT", "PXAT":
			if expiry || i+1 >= len(args) {
				c.w.Error("ERR syntax error")
				return
			}
			i++
			var ok bool
			if o.TTL, at, ok = c.expiryArg("set", opt, args[i]); !ok {
				return
			}
			o.ExpireAt = at
			expiry = true
		default:
			c.w.Error("ERR syntax error")
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
	// (the Cache deletes it in the same step).
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

// expiryArg parses the number after SET's, SETEX's or GETEX's EX, PX, EXAT
// or PXAT (opt, upper case) as redis-server 7.0 does
// (getExpireMillisecondsOrReply): a positive integer whose milliseconds
// fit an int64, and for EX and PX still fit once added to now. It returns
// a relative ttl for EX and PX, an absolute time for EXAT and PXAT, both
// saturated at the largest time.Duration (the tier's clock ends in 2262),
// and answers the error itself when ok is false.
func (c *conn) expiryArg(cmd, opt string, arg []byte) (ttl time.Duration, at time.Time, ok bool) {
	n, ok := parseInt(arg)
	if !ok {
		c.w.Error(errNotInt)
		return 0, time.Time{}, false
	}
	sec, rel := opt == "EX" || opt == "EXAT", opt == "EX" || opt == "PX"
	ms := n
	if sec && n <= math.MaxInt64/1000 {
		ms = n * 1000
	}
	if n <= 0 || sec && n > math.MaxInt64/1000 || rel && ms > math.MaxInt64-time.Now().UnixMilli() {
		c.w.Error("ERR invalid expire time in '" + cmd + "' command")
		return 0, time.Time{}, false
	}
	d := msDuration(ms)
	if rel {
		return d, time.Time{}, true
	}
	return 0, time.Unix(0, 0).Add(d), true
}

// msDuration is ms milliseconds (>= 0), saturated at the largest Duration.
func msDuration(ms int64) time.Duration {
	if ms > math.MaxInt64/int64(time.Millisecond) {
		return math.MaxInt64
	}
	return time.Duration(ms) * time.Millisecond
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
		c.wrongArgs("mset")
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

// expireArg parses the arguments of EXPIRE, PEXPIRE, EXPIREAT and
// PEXPIREAT: the time (args[2]; the P forms count milliseconds) as a
// duration, a non-positive one as 0 (which also keeps a huge negative
// time from overflowing into a positive one), and the NX, XX, GT and LT
// options, which Redis checks first. It answers the error itself when ok
// is false.
func (c *conn) expireArg(args [][]byte) (d time.Duration, cond ExpireCond, ok bool) {
	if cond, ok = c.expireCond(args[3:]); !ok {
		return 0, 0, false
	}
	unit := time.Second
	if args[0][0] == 'p' || args[0][0] == 'P' {
		unit = time.Millisecond
	}
	n, ok := parseInt(args[2])
	if !ok {
		c.w.Error(errNotInt)
		return 0, 0, false
	}
	// Redis 7.0 (expire.c expireGenericCommand) refuses a time whose
	// milliseconds, added to the base (now for EXPIRE and PEXPIRE, 0 for
	// the AT forms), overflow a long long; anything else is accepted and
	// saturates here at the largest duration (the tier at the year 2262).
	ms := n
	if unit == time.Second {
		if n > math.MaxInt64/1000 || n < math.MinInt64/1000 {
			c.w.Error("ERR invalid expire time in '" + strings.ToLower(string(args[0])) + "' command")
			return 0, 0, false
		}
		ms = n * 1000
	}
	if !bytes.Contains(bytes.ToLower(args[0]), []byte("at")) && ms > math.MaxInt64-time.Now().UnixMilli() {
		c.w.Error("ERR invalid expire time in '" + strings.ToLower(string(args[0])) + "' command")
		return 0, 0, false
	}
	return msDuration(max(ms, 0)), cond, true
}

// cmdExpire: EXPIRE|PEXPIRE key n [NX|XX|GT|LT]. A non-positive time
// deletes the key, as in Redis.
func (c *conn) cmdExpire(args [][]byte) {
	ttl, cond, ok := c.expireArg(args)
	if !ok {
		return
	}
	// The condition is checked and the expiry set in one step; a ttl of 0
	// deletes the key (when the condition holds).
	c.intReplyErr(c.s.cache.ExpireIf(args[1], ttl, cond))
}

// expireCond parses the NX, XX, GT and LT options of EXPIRE, PEXPIRE,
// EXPIREAT and PEXPIREAT, answering Redis's error itself when ok is false.
func (c *conn) expireCond(opts [][]byte) (cond ExpireCond, ok bool) {
	for _, a := range opts {
		switch strings.ToUpper(string(a)) {
		case "NX":
			cond |= ExpireNX
		case "XX":
			cond |= ExpireXX
		case "GT":
			cond |= ExpireGT
		case "LT":
			cond |= ExpireLT
		default:
			c.w.Error("ERR Unsupported option " + string(a))
			return 0, false
		}
	}
	if cond&ExpireNX != 0 && cond&(ExpireXX|ExpireGT|ExpireLT) != 0 {
		c.w.Error("ERR NX and XX, GT or LT options at the same time are not compatible")
		return 0, false
	}
	if cond&ExpireGT != 0 && cond&ExpireLT != 0 {
		c.w.Error("ERR GT and LT options at the same time are not compatible")
		return 0, false
	}
	return cond, true
}

func (c *conn) cmdTTL(args [][]byte) {
	ttl, exists := c.s.cache.TTL(args[1])
	switch {
	case !exists:
		c.w.Int(-2)
	case ttl < 0:
		c.w.Int(-1)
	case args[0][0] == 'p' || args[0][0] == 'P':
		c.w.Int(int64((ttl + time.Millisecond/2) / time.Millisecond))
	default:
		c.w.Int(int64((ttl + time.Second/2) / time.Second))
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
	async := false
	switch {
	case len(args) > 2:
		c.w.Error("ERR syntax error")
		return
	case len(args) == 2:
		switch strings.ToUpper(string(args[1])) {
		case "ASYNC":
			async = true
		case "SYNC":
		default:
			c.w.Error("ERR syntax error")
			return
		}
	}
	c.s.touchAll() // the keys it removes: their watchers' EXEC aborts
	if err := c.s.cache.Flush(); err != nil {
		c.cacheError(err)
		return
	}
	if !async {
		if err := c.s.cache.WaitPurge(context.Background()); err != nil {
			c.cacheError(err)
			return
		}
	}
	c.w.OK()
}

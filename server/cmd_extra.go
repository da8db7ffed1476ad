package server

import (
	"math"
	"strconv"
	"time"
)

// Commands beyond the required set that clients commonly send and that map
// onto Cache methods without a read-modify-write race (so no INCR/GETDEL).

// cmdSetEx: SETEX key seconds value, PSETEX key milliseconds value.
func (c *conn) cmdSetEx(args [][]byte) {
	unit, name := time.Second, "setex"
	if args[0][0] == 'p' || args[0][0] == 'P' {
		unit, name = time.Millisecond, "psetex"
	}
	n, err := strconv.ParseInt(string(args[2]), 10, 64)
	if err != nil {
		c.w.Error(errNotInt)
		return
	}
	if n <= 0 || n > math.MaxInt64/int64(unit) {
		c.w.Error("ERR invalid expire time in '" + name + "' command")
		return
	}
	if _, err := c.s.cache.Set(args[1], args[3], SetOptions{TTL: time.Duration(n) * unit}); err != nil {
		c.cacheError(err)
		return
	}
	c.w.OK()
}

// cmdSetNX: SETNX key value → 1 if set, 0 if the key existed.
func (c *conn) cmdSetNX(args [][]byte) {
	stored, err := c.s.cache.Set(args[1], args[2], SetOptions{NX: true})
	if err != nil {
		c.cacheError(err)
		return
	}
	if stored {
		c.w.Int(1)
		return
	}
	c.w.Int(0)
}

// cmdStrlen: STRLEN key → the value's length, 0 when absent.
func (c *conn) cmdStrlen(args [][]byte) {
	v, ok, err := c.s.cache.Get(c.scratch[:0], args[1])
	if err != nil {
		c.cacheError(err)
		return
	}
	if !ok {
		c.w.Int(0)
		return
	}
	c.w.Int(int64(len(v)))
}

// cmdType: TYPE key → string or none (every value is a string).
func (c *conn) cmdType(args [][]byte) {
	if c.s.cache.Exists(args[1]) > 0 {
		c.w.Simple("string")
		return
	}
	c.w.Simple("none")
}

// cmdTouch: TOUCH key... → how many exist.
func (c *conn) cmdTouch(args [][]byte) { c.w.Int(int64(c.s.cache.Exists(args[1:]...))) }

// cmdExpireAt: EXPIREAT key unix-seconds, PEXPIREAT key unix-ms; a time in
// the past deletes the key.
func (c *conn) cmdExpireAt(args [][]byte) {
	n, unit, ok := c.expireArg(args)
	if !ok {
		return
	}
	ttl := time.Until(time.Unix(0, 0).Add(time.Duration(max(n, 0)) * unit))
	if ttl <= 0 {
		c.w.Int(int64(c.s.cache.Delete(args[1])))
		return
	}
	if c.s.cache.Expire(args[1], ttl) {
		c.w.Int(1)
		return
	}
	c.w.Int(0)
}

package server

import "github.com/tiercache/tiercache/tier"

// Commands beyond the required set that clients commonly send and that map
// onto Cache methods without a read-modify-write race (so no INCR or
// APPEND; GETDEL and GETEX have their own one-step Cache methods).

// setExCmd: SETEX key seconds value (opt "EX"), PSETEX key milliseconds
// value ("PX"), the time as SET's EX and PX take it.
func (c *conn) setExCmd(args [][]byte, opt string) {
	ttl, at, ok := c.expiryArg(opt, args[2])
	if !ok {
		return
	}
	if _, err := c.s.cache.Set(args[1], args[3], tier.SetOptions{TTL: ttl, ExpireAt: at}); err != nil {
		c.cacheError(err)
		return
	}
	c.w.OK()
}

// cmdSetNX: SETNX key value → 1 if set, 0 if the key existed.
func (c *conn) cmdSetNX(args [][]byte) {
	stored, err := c.s.cache.Set(args[1], args[2], tier.SetOptions{NX: true})
	if err != nil {
		c.cacheError(err)
		return
	}
	c.intReply(stored)
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

// cmdGetDel: GETDEL key → the value, deleted in the same step; nil if absent.
func (c *conn) cmdGetDel(args [][]byte) {
	v, ok, err := c.s.cache.GetDel(c.scratch[:0], args[1])
	c.noop = !ok
	c.valueReply(v, ok, err)
}

// cmdGetEx: GETEX key [EX s|PX ms|EXAT ts|PXAT ms-ts|PERSIST] → the value,
// its expiry changed in the same step (an EXAT/PXAT in the past deletes
// it); nil if absent.
func (c *conn) cmdGetEx(args [][]byte) {
	x, _, ok := c.getExArgs(args[2:])
	if !ok {
		return
	}
	v, ok, changed, err := c.s.cache.GetExChanged(c.scratch[:0], args[1], x)
	c.noop = !changed // GETEX without an option, or PERSIST of a key without an expiry, changes nothing
	c.valueReply(v, ok, err)
}

// valueReply answers a read of one value (v, ok, err) that appended to
// c.scratch, counting the hit or miss.
func (c *conn) valueReply(v []byte, ok bool, err error) {
	switch {
	case err != nil:
		c.cacheError(err)
	case !ok:
		c.st.misses.Add(1)
		c.w.Null()
	default:
		c.st.hits.Add(1)
		c.w.Bulk(v)
		if cap(v) <= maxScratch && cap(v) > cap(c.scratch) {
			c.scratch = v[:0]
		}
	}
}

// cmdType: TYPE key → the name of its kind (kindName), or none.
func (c *conn) cmdType(args [][]byte) {
	if k, ok := c.s.cache.KindOf(args[1]); ok {
		c.w.Simple(kindName(k))
		return
	}
	c.w.Simple("none")
}

// cmdTouch: TOUCH key... → how many exist.
func (c *conn) cmdTouch(args [][]byte) { c.w.Int(int64(c.s.cache.Exists(args[1:]...))) }

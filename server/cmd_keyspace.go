package server

import (
	"math/rand/v2"
	"time"
)

// The keyspace commands that carry a key's value to another key or read
// its absolute expiry; RENAME and COPY are one step in the Cache.

// renameCmd: RENAME src dst → OK; RENAMENX src dst (nx) → 1, or 0 when
// dst exists; "no such key" when src is absent.
func (c *conn) renameCmd(args [][]byte, nx bool) {
	renamed, err := c.s.cache.Rename(args[1], args[2], nx)
	switch {
	case err != nil:
		c.cacheError(err)
	case string(args[1]) == string(args[2]): // Redis answers and changes nothing (renameGenericCommand)
		c.noop = true
		if nx {
			c.w.Int(0)
		} else {
			c.w.OK()
		}
	case !nx:
		c.w.OK()
		c.s.hfe.carried(args[1], args[2])
		c.wakeListAt(args[2])
	default:
		c.intReply(renamed)
		if renamed {
			c.s.hfe.carried(args[1], args[2])
			c.wakeListAt(args[2])
		}
	}
}

// wakeListAt serves clients blocked on key (BLPOP, BZPOPMIN and the
// other blocking pops) after a RENAME or COPY made it a list or a sorted
// set, as Redis's dbAdd signals the key as ready.
func (c *conn) wakeListAt(key []byte) {
	if c.s.blk.waiting.Load() == 0 {
		return
	}
	if k, ok := c.s.cache.KindOf(key); ok && (k == kindList || k == kindZSet) {
		c.wakeAfter(key)
	}
}

// cmdCopy: COPY src dst [DB n] [REPLACE] → 1, or 0 when src is absent or
// dst exists (without REPLACE). Only database 0 exists.
func (c *conn) cmdCopy(args [][]byte) {
	replace, ok := c.copyArgs(args[3:])
	if !ok {
		return
	}
	if string(args[1]) == string(args[2]) {
		c.w.Error(errSameObject)
		return
	}
	copied, err := c.s.cache.Copy(args[1], args[2], replace)
	switch {
	case err != nil:
		c.cacheError(err)
	default:
		c.intReply(copied)
		if copied {
			c.s.touch(touchKeys, [][]byte{nil, args[2]}) // the source is only read: WATCH sees the destination
			c.touched = true
			c.s.hfe.carried(args[1], args[2])
			c.wakeListAt(args[2])
		}
	}
}

// cmdRandomKey: RANDOMKEY → a key, nil when there is none. It scans from a
// random cursor (for tier.Cache a random 32-bit tag, where a scan of the
// keys of every tier goes in tag order) and picks one key of the first
// non-empty piece at random: every key can come out, not all equally
// often.
func (c *conn) cmdRandomKey(args [][]byte) {
	for _, cur := range [2]uint64{rand.Uint64N(1 << 32), 0} {
		for {
			next, keys := c.s.cache.Scan(cur, 1, nil)
			if len(keys) > 0 {
				c.w.Bulk(keys[rand.IntN(len(keys))])
				return
			}
			if next == 0 {
				break
			}
			cur = next
		}
	}
	c.w.Null()
}

// expireTimeCmd: EXPIRETIME key → unix seconds (unit time.Second),
// PEXPIRETIME → unix ms (time.Millisecond); -1 without an expiry, -2 when
// the key is absent.
func (c *conn) expireTimeCmd(args [][]byte, unit time.Duration) {
	at, ok := c.s.cache.ExpireTime(args[1])
	switch {
	case !ok:
		c.w.Int(-2)
	case at.IsZero():
		c.w.Int(-1)
	case unit == time.Millisecond:
		c.w.Int(at.UnixMilli())
	default: // rounded as redis-server's (ms+500)/1000, without its overflow
		ms := at.UnixMilli()
		c.w.Int(ms/1000 + (ms%1000+500)/1000)
	}
}

// intReply answers a write command's outcome as 1 or 0; 0 (nothing
// changed) sets c.noop, so WATCHed keys are not touched.
// intReplyErr is intReply, or the error of a change that could not be
// made durable (writethrough: nothing changed).
func (c *conn) intReplyErr(changed bool, err error) {
	if err != nil {
		c.cacheError(err)
		return
	}
	c.intReply(changed)
}

func (c *conn) intReply(changed bool) {
	if changed {
		c.w.Int(1)
		return
	}
	c.noop = true
	c.w.Int(0)
}

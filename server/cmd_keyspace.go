package server

import (
	"errors"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/tiercache/tiercache/tier"
)

// The keyspace commands that carry a key's value to another key or read
// its absolute expiry; RENAME and COPY are one step in the Cache.

// cmdRename: RENAME src dst → OK; RENAMENX src dst → 1, or 0 when dst
// exists. "ERR no such key" when src is absent.
func (c *conn) cmdRename(args [][]byte) {
	nx := len(args[0]) == len("renamenx")
	renamed, err := c.s.cache.Rename(args[1], args[2], nx)
	switch {
	case errors.Is(err, tier.ErrNoSuchKey):
		c.w.Error("ERR no such key")
	case err != nil:
		c.cacheError(err)
	case !nx:
		c.w.OK()
		c.wakeListAt(args[2])
	default:
		c.intReply(renamed)
		if renamed {
			c.wakeListAt(args[2])
		}
	}
}

// wakeListAt serves clients blocked on key (BLPOP and the other blocking
// pops) after a RENAME or COPY made it a list, as Redis's dbAdd signals
// the key as ready.
func (c *conn) wakeListAt(key []byte) {
	if c.s.blk.waiting.Load() == 0 {
		return
	}
	if k, ok := c.s.cache.KindOf(key); ok && k == kindList {
		c.wakeAfter(key)
	}
}

// cmdCopy: COPY src dst [DB n] [REPLACE] → 1, or 0 when src is absent or
// dst exists (without REPLACE). Only database 0 exists.
func (c *conn) cmdCopy(args [][]byte) {
	replace := false
	for i := 3; i < len(args); i++ {
		switch opt := strings.ToLower(string(args[i])); {
		case opt == "replace":
			replace = true
		case opt == "db" && i+1 < len(args):
			i++
			db, ok := c.int32Arg(args[i])
			if !ok {
				return
			}
			if db != 0 {
				c.w.Error("ERR DB index is out of range")
				return
			}
		default:
			c.w.Error("ERR syntax error")
			return
		}
	}
	if string(args[1]) == string(args[2]) {
		c.w.Error("ERR source and destination objects are the same")
		return
	}
	copied, err := c.s.cache.Copy(args[1], args[2], replace)
	switch {
	case err != nil:
		c.cacheError(err)
	default:
		c.intReply(copied)
		if copied {
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

// cmdExpireTime: EXPIRETIME key → unix seconds, PEXPIRETIME → unix ms;
// -1 without an expiry, -2 when the key is absent.
func (c *conn) cmdExpireTime(args [][]byte) {
	at, ok := c.s.cache.ExpireTime(args[1])
	switch {
	case !ok:
		c.w.Int(-2)
	case at.IsZero():
		c.w.Int(-1)
	case args[0][0] == 'p' || args[0][0] == 'P':
		c.w.Int(at.UnixMilli())
	default:
		c.w.Int(at.Unix())
	}
}

// cmdExpireAt: EXPIREAT key unix-seconds [NX|XX|GT|LT], PEXPIREAT key
// unix-ms [...]; a time in the past deletes the key (when the condition
// holds), in the same step as the check.
func (c *conn) cmdExpireAt(args [][]byte) {
	d, cond, ok := c.expireArg(args)
	if !ok {
		return
	}
	c.intReplyErr(c.s.cache.ExpireAtIf(args[1], time.Unix(0, 0).Add(d), cond))
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

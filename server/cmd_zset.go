package server

import (
	"math"

	"github.com/tiercache/tiercache/value/zset"
)

// The sorted-set commands (Redis 7.0, t_zset.c). A sorted set is one
// record (value/zset); a read decodes it, a write decodes, changes and
// stores it in one Cache.Update (typed.go). Scores are printed as 7.0
// prints a double (resp.Writer.Double).

// zaddCmd: ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member... → the
// members added (with CH, added or changed); with INCR, and ZINCRBY key
// increment member (incr), the new score, nil when a condition stopped
// it.
func (c *conn) zaddCmd(args [][]byte, incr bool) {
	f, first, scores, ok := c.zaddArgs(args, incr)
	if !ok {
		return
	}
	var added, updated, processed int
	var last float64
	err := c.zsetUpdate(args[1], func(z *zset.Entries) (bool, error) {
		added, updated, processed = 0, 0, 0
		if z.Len() == 0 && f.xx {
			return false, nil
		}
		for i, score := range scores {
			m := args[first+1+2*i]
			cur, exists := z.Score(m)
			switch {
			case exists && f.nx, !exists && f.xx:
				continue
			case !exists:
				z.Put(m, score)
				added++
				processed++
				last = score
				continue
			}
			if f.incr {
				if score += cur; math.IsNaN(score) {
					return false, replyError(errScoreNaN)
				}
			}
			if f.lt && score >= cur || f.gt && score <= cur {
				continue
			}
			processed++
			last = score
			if score != cur {
				z.Put(m, score)
				updated++
			}
		}
		return added+updated > 0, nil
	})
	c.typed.release()
	if err != nil {
		c.cacheError(err)
		return
	}
	c.noop = added+updated == 0
	if added > 0 {
		c.wakeAfter(args[1]) // BZPOPMIN and BZPOPMAX wait for a member
	}
	switch {
	case f.incr && processed > 0:
		c.w.Double(last)
	case f.incr:
		c.w.Null()
	case f.ch:
		c.w.Int(int64(added + updated))
	default:
		c.w.Int(int64(added))
	}
}

// cmdZRem: ZREM key member... → how many were there; the key goes with
// its last member.
func (c *conn) cmdZRem(args [][]byte) {
	var removed int
	err := c.zsetUpdate(args[1], func(z *zset.Entries) (bool, error) {
		removed = 0
		for _, m := range args[2:] {
			if z.Remove(m) {
				removed++
			}
		}
		return removed > 0, nil
	})
	c.typed.release()
	c.countReply(removed, err)
}

// cmdZCard: ZCARD key → the member count.
func (c *conn) cmdZCard(args [][]byte) {
	rec, ok := c.kindRead(args[1], kindZSet, false)
	if !ok {
		return
	}
	if rec == nil {
		c.w.Int(0)
		return
	}
	n, _, err := zset.Count(rec)
	if err != nil {
		c.cacheError(err)
		return
	}
	c.w.Int(int64(n))
}

// cmdZScore: ZSCORE key member → the score, nil when absent.
func (c *conn) cmdZScore(args [][]byte) {
	z := &c.typed.zset
	defer c.typed.release()
	if _, ok := c.readZSet(args[1], z, false); !ok {
		return
	}
	if s, ok := z.Score(args[2]); ok {
		c.w.Double(s)
		return
	}
	c.w.Null()
}

// cmdZMScore: ZMSCORE key member... → each score, nil when absent.
func (c *conn) cmdZMScore(args [][]byte) {
	z := &c.typed.zset
	defer c.typed.release()
	if _, ok := c.readZSet(args[1], z, false); !ok {
		return
	}
	c.w.Array(len(args) - 2)
	for _, m := range args[2:] {
		if s, ok := z.Score(m); ok {
			c.w.Double(s)
		} else {
			c.w.Null()
		}
	}
}

// zrankCmd: ZRANK key member (ZREVRANK, rev) → the member's 0-based rank
// from the lowest score (the highest), nil when absent.
func (c *conn) zrankCmd(args [][]byte, rev bool) {
	z := &c.typed.zset
	defer c.typed.release()
	if _, ok := c.readZSet(args[1], z, false); !ok {
		return
	}
	r, ok := z.Rank(args[2])
	switch {
	case !ok:
		c.w.Null()
	case rev:
		c.w.Int(int64(z.Len() - 1 - r))
	default:
		c.w.Int(int64(r))
	}
}

package server

import (
	"math"

	"github.com/tiercache/tiercache/value/zset"
)

// The sorted-set commands (Redis 7.0, t_zset.c). A sorted set is a
// zset.Sorted in the DRAM tiers: a write is one Cache.Edit that changes
// the members it names, a read of one key one Cache.Read (typed.go); the
// commands that read several keys or walk one in member order (the
// algebra, ZRANGESTORE, ZSCAN) decode records. Scores are printed as 7.0
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
	_, err := c.zsetEdit(args[1], true, func(z *zset.Sorted) (bool, error) {
		added, updated, processed = 0, 0, 0
		if z.Len() == 0 && f.xx {
			return false, nil
		}
		if err := c.zaddCheck(z, args, first, f.xx); err != nil {
			return false, err
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
	_, err := c.zsetEdit(args[1], false, func(z *zset.Sorted) (bool, error) {
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
	n := 0
	if _, ok := c.readLiveZSet(args[1], func(z *zset.Sorted) { n = z.Len() }); ok {
		c.w.Int(int64(n))
	}
}

// cmdZScore: ZSCORE key member → the score, nil when absent.
func (c *conn) cmdZScore(args [][]byte) {
	exists, ok := c.readLiveZSet(args[1], func(z *zset.Sorted) {
		if s, ok := z.Score(args[2]); ok {
			c.w.Double(s)
		} else {
			c.w.Null()
		}
	})
	if ok && !exists {
		c.w.Null()
	}
}

// cmdZMScore: ZMSCORE key member... → each score, nil when absent.
func (c *conn) cmdZMScore(args [][]byte) {
	c.eachScore(args, c.w.Double, c.w.Null)
}

// eachScore answers an array of one reply for each member of args[2:] in
// the sorted set args[1]: found's for a member's score, missing's for one
// absent (every one when the key is).
func (c *conn) eachScore(args [][]byte, found func(float64), missing func()) {
	exists, ok := c.readLiveZSet(args[1], func(z *zset.Sorted) {
		c.w.Array(len(args) - 2)
		for _, m := range args[2:] {
			if s, ok := z.Score(m); ok {
				found(s)
			} else {
				missing()
			}
		}
	})
	if ok && !exists {
		c.w.Array(len(args) - 2)
		for range args[2:] {
			missing()
		}
	}
}

// zrankCmd: ZRANK key member (ZREVRANK, rev) → the member's 0-based rank
// from the lowest score (the highest), nil when absent.
func (c *conn) zrankCmd(args [][]byte, rev bool) {
	exists, ok := c.readLiveZSet(args[1], func(z *zset.Sorted) {
		r, ok := z.Rank(args[2])
		switch {
		case !ok:
			c.w.Null()
		case rev:
			c.w.Int(int64(z.Len() - 1 - r))
		default:
			c.w.Int(int64(r))
		}
	})
	if ok && !exists {
		c.w.Null()
	}
}

package server

import (
	"github.com/tiercache/tiercache/value/zset"
)

// The range commands of sorted sets: ZRANGE (BYSCORE, BYLEX, REV, LIMIT),
// ZRANGESTORE, the legacy ZREVRANGE, ZRANGEBYSCORE, ZREVRANGEBYSCORE,
// ZRANGEBYLEX and ZREVRANGEBYLEX, ZCOUNT, ZLEXCOUNT and
// ZREMRANGEBYRANK|SCORE|LEX.

// zrangeRanks appends to ranks the ranks q selects of z, in the order
// answered.
func zrangeRanks(ranks []int, z zset.Reader, q zrangeReq) []int {
	lo, hi, rev := zrangeSpan(z, q)
	for i := lo; i < hi; i++ {
		if rev {
			ranks = append(ranks, hi-1-(i-lo))
		} else {
			ranks = append(ranks, i)
		}
	}
	return ranks
}

// zrangeSpan is the ranks q selects of z, [lo, hi), answered in
// descending order when rev.
func zrangeSpan(z zset.Reader, q zrangeReq) (lo, hi int, rev bool) {
	n := z.Len()
	if q.by == byRank {
		lo, hi = zset.RankSpan(n, q.start, q.stop)
		if q.rev {
			lo, hi = n-hi, n-lo
		}
		return lo, hi, q.rev
	}
	if q.by == byScore {
		lo, hi = zset.ScoreSpan(z, q.score)
	} else {
		lo, hi = zset.LexSpan(z, q.lex, q.rev)
	}
	if q.offset < 0 || q.offset >= int64(hi-lo) || q.limit == 0 {
		return 0, 0, q.rev
	}
	k := int64(hi-lo) - q.offset
	if q.limit > 0 {
		k = min(k, q.limit)
	}
	if q.rev {
		return hi - int(q.offset) - int(k), hi - int(q.offset), true
	}
	return lo + int(q.offset), lo + int(q.offset) + int(k), false
}

// zrangeCmd answers ZRANGE and its legacy forms: args from the key on,
// by and rev as the command fixes them (byAuto and revFixed false let the
// options choose).
func (c *conn) zrangeCmd(args [][]byte, by zrangeBy, rev, revFixed bool) {
	q, ok := c.zrangeArgs(args[1:], false, by, rev, revFixed)
	if !ok {
		return
	}
	exists, ok := c.readLiveZSet(args[1], func(z *zset.Sorted) {
		lo, hi, rev := zrangeSpan(z, q)
		c.entriesHeader(hi-lo, q.withScores)
		z.EachRank(lo, hi, rev, func(e zset.Entry) { c.writeEntry(e, q.withScores) })
	})
	if ok && !exists {
		c.writeEntries(zset.FromSorted(nil), nil, q.withScores)
	}
}

// writeEntries answers the entries of z at ranks: members, with scores a
// flat array in RESP2 and pairs in RESP3.
func (c *conn) writeEntries(z zset.Reader, ranks []int, withScores bool) {
	c.entriesHeader(len(ranks), withScores)
	for _, r := range ranks {
		c.writeEntry(z.At(r), withScores)
	}
}

// entriesHeader starts the answer of n entries (writeEntries).
func (c *conn) entriesHeader(n int, withScores bool) {
	if withScores && c.w.Proto() < 3 {
		c.w.Array(2 * n)
	} else {
		c.w.Array(n)
	}
}

// writeEntry answers one of the entries (writeEntries).
func (c *conn) writeEntry(e zset.Entry, withScores bool) {
	if withScores && c.w.Proto() >= 3 {
		c.w.Array(2)
	}
	c.w.Bulk(e.Member)
	if withScores {
		c.w.Double(e.Score)
	}
}

// cmdZRangeStore: ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV]
// [LIMIT offset count] → the entries stored in dst (without an expiry;
// none deletes dst).
func (c *conn) cmdZRangeStore(args [][]byte) {
	q, ok := c.zrangeArgs(args[2:], true, byAuto, false, false)
	if !ok {
		return
	}
	defer c.typed.release()
	z := &c.typed.zset
	if _, ok := c.readZSet(args[2], z, false); !ok {
		return
	}
	out := &c.typed.out
	out.Reset()
	ranks := zrangeRanks(nil, z, q)
	entries := out.All()[:0]
	for _, r := range ranks {
		entries = append(entries, z.At(r))
	}
	if q.rev {
		for i, j := 0, len(entries)-1; i < j; i, j = i+1, j-1 {
			entries[i], entries[j] = entries[j], entries[i]
		}
	}
	*out = *zset.FromSorted(entries)
	out.NormalizeZeros()
	c.storeResult(args[1], out, kindZSet)
}

// cmdZCount: ZCOUNT key min max → the members with a score in range.
func (c *conn) cmdZCount(args [][]byte) {
	r, ok := scoreRangeArgs(args[2], args[3])
	if !ok {
		c.w.Error(errMinMaxFloat)
		return
	}
	n := 0
	if _, ok := c.readLiveZSet(args[1], func(z *zset.Sorted) { lo, hi := zset.ScoreSpan(z, r); n = hi - lo }); ok {
		c.w.Int(int64(n))
	}
}

// cmdZLexCount: ZLEXCOUNT key min max → the members in range.
func (c *conn) cmdZLexCount(args [][]byte) {
	r, ok := lexRangeArgs(args[2], args[3])
	if !ok {
		c.w.Error(errMinMaxLex)
		return
	}
	n := 0
	if _, ok := c.readLiveZSet(args[1], func(z *zset.Sorted) { lo, hi := zset.LexSpan(z, r, false); n = hi - lo }); ok {
		c.w.Int(int64(n))
	}
}

// zremRangeCmd: ZREMRANGEBYRANK key start stop, ZREMRANGEBYSCORE key min
// max, ZREMRANGEBYLEX key min max (by) → the members removed; the key goes
// with its last one.
func (c *conn) zremRangeCmd(args [][]byte, by zrangeBy) {
	q := zrangeReq{by: by, limit: -1}
	var ok bool
	switch by {
	case byRank:
		var ok1, ok2 bool
		q.start, ok1 = parseInt(args[2])
		q.stop, ok2 = parseInt(args[3])
		if ok = ok1 && ok2; !ok {
			c.w.Error(errNotInt)
		}
	case byScore:
		if q.score, ok = scoreRangeArgs(args[2], args[3]); !ok {
			c.w.Error(errMinMaxFloat)
		}
	case byLex:
		if q.lex, ok = lexRangeArgs(args[2], args[3]); !ok {
			c.w.Error(errMinMaxLex)
		}
	}
	if !ok {
		return
	}
	var removed int
	_, err := c.zsetEdit(args[1], false, func(z *zset.Sorted) (bool, error) {
		ranks := zrangeRanks(nil, z, q)
		removed = len(ranks)
		if removed > 0 {
			z.RemoveRanks(ranks[0], ranks[len(ranks)-1]+1)
		}
		return removed > 0, nil
	})
	c.typed.release()
	c.countReply(removed, err)
}

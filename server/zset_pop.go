package server

import (
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/tiercache/tiercache/resp"
	"github.com/tiercache/tiercache/value/set"
	"github.com/tiercache/tiercache/value/zset"
)

// zpop removes up to count (≥ 1) entries from the lowest scores of key
// (the highest, max) in one step and returns copies of them in the order
// popped; exists reports whether the key held a sorted set.
func (c *conn) zpop(key []byte, max bool, count int64) (popped []zset.Entry, exists bool, err error) {
	_, err = c.zsetEdit(key, false, func(z *zset.Sorted) (bool, error) {
		popped = popped[:0]
		exists = z.Len() > 0
		k := int(min(count, int64(z.Len())))
		popped = popEntries(z, k, max, popped)
		return k > 0, nil
	})
	c.typed.release()
	return popped, exists, err
}

// popEntries removes the n lowest-scored entries of z (the n highest,
// max) and appends copies of them to out in the order they pop.
func popEntries(z *zset.Sorted, n int, max bool, out []zset.Entry) []zset.Entry {
	for i := range n {
		r := i
		if max {
			r = z.Len() - 1 - i
		}
		e := z.At(r)
		out = append(out, zset.Entry{Member: slices.Clone(e.Member), Score: e.Score})
	}
	if max {
		z.RemoveRanks(z.Len()-n, z.Len())
	} else {
		z.RemoveRanks(0, n)
	}
	return out
}

// zpopCmd: ZPOPMIN key [count], ZPOPMAX key [count] (max) → member,
// score, ... (pairs in RESP3 when count is given); the key goes with its
// last member.
func (c *conn) zpopCmd(args [][]byte, max bool) {
	if len(args) > 3 {
		c.w.Error(errSyntax)
		return
	}
	count := int64(-1)
	if len(args) == 3 {
		var ok bool
		if count, ok = c.countArg(args[2]); !ok {
			return
		}
	}
	if count == 0 { // Redis checks the key's type first, and answers an empty array
		if _, ok := c.kindRead(args[1], kindZSet, false); ok {
			c.noop = true
			c.w.Array(0)
		}
		return
	}
	n := count
	if n < 0 {
		n = 1 // no count: one
	}
	popped, _, err := c.zpop(args[1], max, n)
	if err != nil {
		c.cacheError(err)
		return
	}
	c.noop = len(popped) == 0
	nested := c.w.Proto() >= 3 && count != -1
	if nested {
		c.w.Array(len(popped))
	} else {
		c.w.Array(2 * len(popped))
	}
	for _, e := range popped {
		if nested {
			c.w.Array(2)
		}
		c.w.Bulk(e.Member)
		c.w.Double(e.Score)
	}
}

// cmdZRandMember: ZRANDMEMBER key [count [WITHSCORES]]. Without count,
// one random member (nil when absent); a positive count, that many
// distinct members at most; a negative count, exactly -count that may
// repeat.
func (c *conn) cmdZRandMember(args [][]byte) {
	var count int64
	withScores := false
	if len(args) >= 3 {
		var ok bool
		if count, ok = c.randCountArg(args[2]); !ok {
			return
		}
		if len(args) > 4 || len(args) == 4 && word(args[3]) != "WITHSCORES" {
			c.w.Error(errSyntax)
			return
		}
		if withScores = len(args) == 4; withScores && (count < -(1<<62-1) || count > 1<<62-1) {
			c.w.Error(errValueRange)
			return
		}
	}
	answer := func(z zset.Reader) {
		n := z.Len()
		if len(args) == 2 {
			if n == 0 {
				c.w.Null()
				return
			}
			c.w.Bulk(z.At(rand.IntN(n)).Member)
			return
		}
		picks := randPicks(n, count)
		if picks == nil {
			c.w.Error(errRandCountTooLarge(maxRandCount, "members"))
			return
		}
		c.writeEntries(z, picks, withScores)
	}
	if exists, ok := c.readLiveZSet(args[1], func(z *zset.Sorted) { answer(z) }); ok && !exists {
		answer(zset.FromSorted(nil))
	}
}

// cmdZScan: ZSCAN key cursor [MATCH pattern] [COUNT count] → the next
// cursor and member, score, ... A small sorted set comes back whole with
// cursor 0, its scores as its listpack holds them in Redis
// (resp.AppendDoubleString); a larger one is walked as SSCAN walks a set.
func (c *conn) cmdZScan(args [][]byte) {
	cursor, ok := c.cursorArg(args[2])
	if !ok {
		return
	}
	z := &c.typed.zset
	defer c.typed.release()
	exists, ok := c.readZSet(args[1], z, false)
	if !ok {
		return
	}
	if !exists {
		c.emptyScan()
		return
	}
	o, ok := c.scanArgs(args[3:], false)
	if !ok {
		return
	}
	entries := z.All()
	var next uint64
	small := z.Small() // a listpack in Redis
	if cursor != 0 || len(entries) > max(set.ScanWhole, o.count) {
		entries, next = set.ScanStep(nil, entries, func(e zset.Entry) []byte { return e.Member }, cursor, o.count)
	}
	if o.pattern != "*" {
		entries = slices.DeleteFunc(slices.Clone(entries), func(e zset.Entry) bool { return !globMatch(o.pattern, string(e.Member)) })
	}
	c.w.Array(2)
	c.w.BulkString(strconv.FormatUint(next, 10))
	c.w.Array(2 * len(entries))
	var num [32]byte
	for _, e := range entries {
		c.w.Bulk(e.Member)
		if small {
			c.w.Bulk(resp.AppendDoubleString(num[:0], e.Score))
		} else {
			c.w.Bulk(resp.AppendDouble(num[:0], e.Score))
		}
	}
}

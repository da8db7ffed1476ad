package server

import (
	"github.com/tiercache/tiercache/value/set"
	"github.com/tiercache/tiercache/value/zset"
)

// The sorted-set algebra: ZUNION, ZINTER, ZDIFF, their STORE forms and
// ZINTERCARD, over sorted sets and plain sets (whose scores are 1). They
// read several keys and run exclusively (table.go).

// zalgebraCmd: ZUNIONSTORE|ZINTERSTORE|ZDIFFSTORE destination numkeys
// key... (store), ZUNION|ZINTER|ZDIFF numkeys key... [WITHSCORES] and
// ZINTERCARD numkeys key... [LIMIT limit] (card), with WEIGHTS and
// AGGREGATE for a union or an intersection.
func (c *conn) zalgebraCmd(args [][]byte, op zset.Op, store, card bool) {
	nk := 1
	if store {
		nk = 2
	}
	n, ok := parseInt(args[nk])
	switch {
	case !ok:
		c.w.Error(errNotInt)
		return
	case n < 1:
		c.w.Error(errAtLeastOneKey(c.cmd.name))
		return
	case n > int64(len(args)-nk-1):
		c.w.Error(errSyntax)
		return
	}
	keys := args[nk+1 : nk+1+int(n)]
	srcs := make([]zset.Source, len(keys))
	seen := map[string]zset.Reader{}
	for i, k := range keys {
		srcs[i].Weight = 1
		if r, ok := seen[string(k)]; ok {
			srcs[i].Z = r
			continue
		}
		r, ok := c.readSource(k)
		if !ok {
			return
		}
		srcs[i].Z, seen[string(k)] = r, r
	}
	agg, withScores, limit, ok := c.algebraArgs(args[nk+1+int(n):], srcs, op, store, card)
	if !ok {
		return
	}
	var out zset.Entries
	count := zset.Combine(&out, srcs, op, agg, int(min(limit, 1<<40)))
	switch {
	case card:
		c.w.Int(int64(count))
	case store:
		out.NormalizeZeros()
		c.storeResult(args[1], &out, kindZSet)
	default:
		ranks := make([]int, out.Len())
		for i := range ranks {
			ranks[i] = i
		}
		c.writeEntries(&out, ranks, withScores)
	}
}

// readSource reads key as an input of the algebra: a sorted set, a set
// read as one (scores 1), nil for a missing key; ok false: WRONGTYPE is
// answered.
func (c *conn) readSource(key []byte) (zset.Reader, bool) {
	v, kind, _, exists, _, err := c.s.cache.ViewAny(nil, key)
	switch {
	case err != nil:
		c.cacheError(err)
		return nil, false
	case !exists:
		return nil, true
	case kind == kindZSet:
		z := new(zset.Entries)
		if err := z.Decode(v); err != nil {
			c.cacheError(err)
			return nil, false
		}
		return z, true
	case kind == kindSet:
		s := new(set.Members)
		if err := s.Decode(v); err != nil {
			c.cacheError(err)
			return nil, false
		}
		return zset.FromSet(s), true
	}
	c.w.Error(errWrongType)
	return nil, false
}

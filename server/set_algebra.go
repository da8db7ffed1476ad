package server

import (
	"math"

	"github.com/tiercache/tiercache/value/set"
)

// The set algebra: SINTER, SUNION, SDIFF, their STORE forms and
// SINTERCARD. They read several keys, and run exclusively (table.go) so
// that what they read is one moment's.

// setOp is which algebra a command runs.
type setOp uint8

const (
	setInter setOp = iota
	setUnion
	setDiff
)

// readSets reads keys as sets (nil for a missing key), each decoded into
// a buffer of its own; ok false: the reply (WRONGTYPE) is written.
func (c *conn) readSets(keys [][]byte) (sets []set.Set, ok bool) {
	sets = make([]set.Set, len(keys))
	for i, k := range keys {
		m := new(set.Members)
		exists, ok := c.readSet(k, m, true)
		if !ok {
			return nil, false
		}
		if exists {
			sets[i] = m
		}
	}
	return sets, true
}

// combineSets computes op over sets into out.
func combineSets(out *set.Members, sets []set.Set, op setOp) {
	switch op {
	case setInter:
		for _, s := range sets {
			if s == nil {
				out.Reset()
				return
			}
		}
		*out = *set.FromSorted(set.Inter(nil, sets))
	case setUnion:
		set.Union(out, sets)
	case setDiff:
		*out = *set.FromSorted(set.Diff(nil, sets))
	}
}

// setAlgebraCmd: SINTER|SUNION|SDIFF key... → the members (a set in
// RESP3); with store, SINTERSTORE|SUNIONSTORE|SDIFFSTORE destination
// key... → the result's size, stored without an expiry (deleting
// destination when empty).
func (c *conn) setAlgebraCmd(args [][]byte, op setOp, store bool) {
	keys := args[1:]
	if store {
		keys = args[2:]
	}
	sets, ok := c.readSets(keys)
	if !ok {
		return
	}
	var out set.Members
	combineSets(&out, sets, op)
	if store {
		c.storeResult(args[1], &out, kindSet)
		return
	}
	c.w.Set(out.Len())
	for _, m := range out.All() {
		c.w.Bulk(m)
	}
}

// cmdSInterCard: SINTERCARD numkeys key... [LIMIT limit] → the size of
// the intersection, counting stopped at limit (0: none).
func (c *conn) cmdSInterCard(args [][]byte) {
	n, ok := parseInt(args[1])
	if !ok || n < 1 {
		c.w.Error(errNumKeysPositive)
		return
	}
	if n > int64(len(args)-2) {
		c.w.Error(errNumKeysTooMany)
		return
	}
	limit := int64(0)
	for j := 2 + int(n); j < len(args); j++ {
		if word(args[j]) != "LIMIT" || j+1 >= len(args) {
			c.w.Error(errSyntax)
			return
		}
		j++
		if limit, ok = parseInt(args[j]); !ok || limit < 0 {
			c.w.Error(errLimitNegative)
			return
		}
	}
	sets, ok := c.readSets(args[2 : 2+n])
	if !ok {
		return
	}
	for _, s := range sets {
		if s == nil {
			c.w.Int(0)
			return
		}
	}
	c.w.Int(int64(set.InterCard(sets, int(min(limit, math.MaxInt32)))))
}

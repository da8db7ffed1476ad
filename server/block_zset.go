package server

import (
	"errors"

	"github.com/tiercache/tiercache/tier"
	"github.com/tiercache/tiercache/value/zset"
)

// BZPOPMIN and BZPOPMAX block as BLPOP does (block.go): a waiter whose
// zpop is set is served from a sorted set, by whatever writes one
// (ZADD, ZINCRBY, the STORE commands) calling wakeAfter.

// zpopEnd is the end of a sorted set a blocked client pops from.
type zpopEnd uint8

const (
	zpopNone zpopEnd = iota // a list waiter
	zpopMin
	zpopMax
)

// wants is the kind of value w is served from.
func (w *waiter) wants() tier.Kind {
	if w.zpop != zpopNone {
		return kindZSet
	}
	return kindList
}

// serveFirst serves the first of the waiters q (on key) that key's value
// can serve: a waiter for a list and one for a sorted set wait side by
// side on a key that holds neither yet, and one kind failing does not
// stop the other.
func (ops *listOps) serveFirst(q []*waiter, key string) (*waiter, blockResult, bool) {
	failed := map[tier.Kind]bool{}
	for _, w := range q {
		if failed[w.wants()] {
			continue
		}
		if res, ok := ops.serveOne(w, key); ok {
			return w, res, true
		}
		failed[w.wants()] = true
	}
	return nil, blockResult{}, false
}

// zpopOne pops one entry of key's sorted set for w; false when key holds
// none.
func (ops *listOps) zpopOne(w *waiter, key string) (blockResult, bool) {
	var res blockResult
	popped := false
	_, err := ops.cache.Edit([]byte(key), zsets, false, func(v tier.Live) (tier.EditResult, error) {
		z := v.(*zset.Sorted)
		popped = false
		if z.Len() == 0 {
			return tier.Unchanged, nil
		}
		n := 1
		if w.mpop > 0 {
			n = int(min(w.mpop, int64(z.Len())))
		}
		res = blockResult{key: key, popped: popEntries(z, n, w.zpop == zpopMax, nil)}
		popped = true
		if z.Len() == 0 {
			return tier.Emptied, nil
		}
		return tier.Changed, nil
	})
	switch {
	case errors.Is(err, tier.ErrWrongKind) || err == nil && !popped:
		return blockResult{}, false // a key that is not a sorted set serves nobody
	case err != nil:
		return blockResult{key: key, err: err}, true
	}
	return res, true
}

// bzpopCmd: BZPOPMIN|BZPOPMAX key... timeout → [key, member, score] from
// the first key with a member, else once one is added; a nil array at
// the timeout.
func (c *conn) bzpopCmd(args [][]byte, end zpopEnd) {
	d, msg := parseTimeout(args[len(args)-1])
	if msg != "" {
		c.w.Error(msg)
		return
	}
	c.block(blockCmd{keys: args[1 : len(args)-1], zpop: end}, d)
}

// zpushBack puts back the entries served to a client as it hung up (the
// caller holds the transaction lock and touches nothing else).
func (c *conn) zpushBack(key []byte, res blockResult) {
	_, err := c.zsetEdit(key, true, func(z *zset.Sorted) (bool, error) {
		put := false
		for _, e := range res.popped {
			if _, ok := z.Score(e.Member); !ok { // one added again meanwhile keeps that score
				z.Put(e.Member, e.Score)
				put = true
			}
		}
		return put, nil
	})
	c.typed.release()
	if err == nil {
		c.s.touch(touchKeys, [][]byte{nil, key})
		c.s.wake(&c.lists, key)
	}
}

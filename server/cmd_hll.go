package server

import (
	"fmt"
	"math"

	"github.com/tiercache/tiercache/tier"
	"github.com/tiercache/tiercache/value/hll"
)

// The HyperLogLog commands (Redis 7.0, hyperloglog.c): a HyperLogLog is
// a string in Redis's own layout (value/hll), so GET, SET, APPEND and
// the rest see the same bytes redis-server stores, and a string copied
// from redis-server is read the same. PFADD is one Cache.Update; PFCOUNT
// of one key is one too, storing the cardinality it computed in the
// string's header as Redis does; PFCOUNT of several keys and PFMERGE
// read several keys and hold the transaction lock exclusively (table.go).

// hllSparseMax is hll-sparse-max-bytes as an int.
func (c *conn) hllSparseMax() int {
	return int(min(c.s.conf.hllSparseMax.Load(), math.MaxInt))
}

// hllInput is the stored string for value/hll: nil only when the key is
// absent (an empty string is a string, not a missing HyperLogLog).
func hllInput(v []byte, exists bool) []byte {
	if exists && v == nil {
		return []byte{}
	}
	return v
}

// cmdPFAdd: PFADD key [element ...] → 1 when it made the key or raised a
// register, else 0 (and nothing is touched).
func (c *conn) cmdPFAdd(args [][]byte) {
	sparseMax := c.hllSparseMax()
	var changed bool
	err := c.stringUpdate(args[1], func(v []byte, exists bool) ([]byte, bool, error) {
		out, ch, err := hll.Add(hllInput(v, exists), args[2:], sparseMax)
		changed = ch
		if err != nil {
			return nil, false, fmt.Errorf("pfadd: %w", err)
		}
		if err := c.tooLong(int64(len(out))); err != nil {
			return nil, false, err
		}
		return out, ch, nil
	})
	c.noop = err == nil && !changed
	c.numReply(int64(boolInt(changed)), err)
}

// cmdPFCount: PFCOUNT key [key ...] → the estimated cardinality of the
// union. Of one key: the cached cardinality, or the one computed and then
// cached in the key's header, which touches the key for WATCH and
// tracking clients but sends no keyspace event (pfcountCommand's
// signalModifiedKey). Of several: their registers merged, nothing cached.
func (c *conn) cmdPFCount(args [][]byte) {
	if len(args) > 2 {
		regs, ok := c.mergeHLLs(args[1:])
		if ok {
			c.w.Int(int64(regs.Count())) // 2^63 (no register in range) as Redis: its long long
		}
		return
	}
	key := args[1]
	var card uint64
	var stored bool
	err := c.s.cache.UpdateAt(key, c.now(), func(cur tier.Current) (tier.Change, error) {
		card, stored = 0, false
		switch {
		case !cur.Exists:
			return tier.Change{Op: tier.Keep}, nil
		case cur.Kind != kindString:
			return tier.Change{}, wrongType
		}
		n, fresh, err := hll.Count(hllInput(cur.Value, true))
		if err != nil {
			return tier.Change{}, fmt.Errorf("pfcount: %w", err)
		}
		card = n
		if fresh == nil {
			return tier.Change{Op: tier.Keep}, nil
		}
		stored = true
		return tier.Change{Op: tier.Store, Value: fresh, Kind: kindString}, nil
	})
	if err != nil {
		c.cacheError(err)
		return
	}
	if stored {
		c.s.touchKey(key)
		if c.s.keyHooks() {
			c.emit(0, "", key) // tracking only: Redis sends no event
			c.flushEvents()
		}
	}
	c.w.Int(int64(card))
}

// mergeHLLs merges the HyperLogLogs at keys (a missing one is empty);
// ok false means the error reply is written.
func (c *conn) mergeHLLs(keys [][]byte) (*hll.Registers, bool) {
	regs := new(hll.Registers)
	src := c.scratch[:0]
	defer func() {
		if cap(src) <= maxScratch {
			c.scratch = src[:0]
		}
	}()
	for _, key := range keys {
		v, exists, ok := c.stringReadInto(src[:0], key)
		if !ok {
			return nil, false
		}
		if !exists {
			continue
		}
		src = v
		if err := regs.Merge(hllInput(v, true)); err != nil {
			c.cacheError(err)
			return nil, false
		}
	}
	return regs, true
}

// cmdPFMerge: PFMERGE destkey [sourcekey ...] → OK: the destination, a
// source too, holds the union of the registers (made if absent, dense if
// a source was); only it is touched, with "pfadd" (pfmergeCommand).
func (c *conn) cmdPFMerge(args [][]byte) {
	regs, ok := c.mergeHLLs(args[1:])
	if !ok {
		return
	}
	sparseMax := c.hllSparseMax()
	err := c.stringUpdate(args[1], func(v []byte, exists bool) ([]byte, bool, error) {
		out, err := regs.Store(hllInput(v, exists), sparseMax)
		if err != nil {
			return nil, false, fmt.Errorf("pfmerge: %w", err)
		}
		if err := c.tooLong(int64(len(out))); err != nil {
			return nil, false, err
		}
		return out, true, nil
	})
	if err != nil {
		c.cacheError(err)
		return
	}
	c.s.touch(touchKeys, [][]byte{nil, args[1]}) // the sources are not touched: only the destination
	c.touched = true
	c.w.OK()
}

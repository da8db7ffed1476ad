package server

import (
	"encoding/binary"

	"github.com/tiercache/tiercache/tier"
)

// BITOP (Redis 7.0, bitops.c: bitopCommand): the sources are strings
// (a missing one is empty), shorter ones zero-padded to the longest; the
// result replaces the destination, whatever it held, without an expiry,
// or deletes it when empty. BITOP is exclusive (table.go), so it reads its
// sources and writes its destination at one moment.

// bitOp is BITOP's operation.
type bitOp uint8

const (
	bitAnd bitOp = iota
	bitOr
	bitXor
	bitNot
)

// cmdBitOp: BITOP AND|OR|XOR|NOT destkey key [key ...] → the length of
// the string stored at destkey.
func (c *conn) cmdBitOp(args [][]byte) {
	var op bitOp
	switch word(args[1]) {
	case "AND":
		op = bitAnd
	case "OR":
		op = bitOr
	case "XOR":
		op = bitXor
	case "NOT":
		op = bitNot
	default:
		c.w.Error(errSyntax)
		return
	}
	if op == bitNot && len(args) != 4 {
		c.w.Error(errBitopNot)
		return
	}
	// The sources are folded into res one at a time, so that at most one
	// source and the result are in memory, each at most max_value bytes.
	res, src := c.agg.enc[:0], c.scratch[:0]
	for i, key := range args[3:] {
		v, exists, ok := c.stringReadInto(src[:0], key)
		if !ok {
			return
		}
		if exists {
			src = v // the next source reuses its buffer
		}
		if err := c.tooLong(int64(len(v))); err != nil {
			c.cacheError(err)
			return
		}
		if i == 0 {
			res = append(res, v...)
			if op == bitNot {
				foldBits(res, res, bitNot)
			}
			continue
		}
		if n := len(res); len(v) > n {
			res = append(res, make([]byte, len(v)-n)...) // the result so far, zero-padded
		}
		foldBits(res, v, op)
	}
	if cap(res) <= maxAggKeep {
		c.agg.enc = res[:0]
	}
	if cap(src) <= maxScratch {
		c.scratch = src[:0]
	}
	var err error
	if len(res) == 0 {
		var deleted int
		deleted, err = c.s.cache.Delete(args[2])
		c.noop = deleted == 0 // an empty result and no destination: nothing changed
	} else {
		_, err = c.s.cache.Set(args[2], res, tier.SetOptions{Kind: kindString})
	}
	if err == nil && !c.noop {
		c.s.touch(touchKeys, [][]byte{nil, args[2]}) // the sources are not touched: only the destination
		c.touched = true
	}
	c.numReply(int64(len(res)), err)
}

// foldBits sets res to res op v, v zero-padded to res's length (NOT: res
// is ^v, v as long as res). Eight bytes at a time, then byte by byte.
func foldBits(res, v []byte, op bitOp) {
	if op == bitAnd && len(v) < len(res) {
		clear(res[len(v):]) // x AND 0
	}
	n := min(len(res), len(v))
	i := 0
	for ; i+8 <= n; i += 8 {
		a, b := binary.LittleEndian.Uint64(res[i:]), binary.LittleEndian.Uint64(v[i:])
		binary.LittleEndian.PutUint64(res[i:], bitWord(a, b, op))
	}
	for ; i < n; i++ {
		res[i] = byte(bitWord(uint64(res[i]), uint64(v[i]), op))
	}
}

// bitWord is a op b (NOT: ^b).
func bitWord(a, b uint64, op bitOp) uint64 {
	switch op {
	case bitAnd:
		return a & b
	case bitOr:
		return a | b
	case bitXor:
		return a ^ b
	}
	return ^b
}

package server

import (
	"math/bits"
)

// The bit commands on strings (Redis 7.0, bitops.c). Bit 0 is the most
// significant bit of the first byte.

// cmdSetBit: SETBIT key offset 0|1 → the bit's old value; the string
// grows with zero bytes to hold it.
func (c *conn) cmdSetBit(args [][]byte) {
	off, ok := c.bitOffsetArg(args[2])
	if !ok {
		return
	}
	if len(args[3]) != 1 || args[3][0] != '0' && args[3][0] != '1' {
		c.w.Error(errBitValue)
		return
	}
	on := args[3][0] == '1'
	var old int64
	var changed bool
	err := c.stringUpdate(args[1], func(v []byte, exists bool) ([]byte, bool, error) {
		i := int(off >> 3)
		mask := byte(0x80) >> (off & 7)
		old = 0
		if i < len(v) && v[i]&mask != 0 {
			old = 1
		}
		// Redis 7.0 (bitops.c setbitCommand) writes, signals and
		// notifies only a string it made, grew or whose bit changed.
		changed = !exists || i >= len(v) || (old == 1) != on
		if !changed {
			return nil, false, nil
		}
		out := c.grow(v, max(len(v), i+1))
		if on {
			out[i] |= mask
		} else {
			out[i] &^= mask
		}
		return out, true, nil
	})
	c.noop = err == nil && !changed
	c.numReply(old, err)
}

// cmdGetBit: GETBIT key offset → the bit, 0 past the end or for a
// missing key.
func (c *conn) cmdGetBit(args [][]byte) {
	off, ok := c.bitOffsetArg(args[2])
	if !ok {
		return
	}
	v, _, ok := c.stringRead(args[1])
	if !ok {
		return
	}
	i := off >> 3
	if i >= int64(len(v)) || v[i]&(0x80>>(off&7)) == 0 {
		c.w.Int(0)
		return
	}
	c.w.Int(1)
}

// bitRange turns a BITCOUNT or BITPOS range into bit positions [start,
// end] of a string of n bytes (Redis 7.0's conversion of negative
// offsets); empty when start > end.
func bitRange(start, end, n int64, isBit bool) (int64, int64) {
	total := n
	if isBit {
		total = n << 3
	}
	start, end = clampRange(start, end, total)
	if start > end {
		return 1, 0 // before the shift: a start past the end would overflow it
	}
	if !isBit {
		start, end = start<<3, end<<3+7
	}
	return start, end
}

// cmdBitCount: BITCOUNT key [start end [BYTE|BIT]] → the set bits.
func (c *conn) cmdBitCount(args [][]byte) {
	v, exists, ok := c.stringRead(args[1])
	if !ok {
		return
	}
	if !exists {
		c.w.Int(0) // Redis 7.0 answers 0 for a missing key before it reads the range
		return
	}
	n := int64(len(v))
	start, end := int64(0), n*8-1
	switch len(args) {
	case 2:
	case 4, 5:
		s, e, ok := c.rangeArgs(args[2], args[3])
		if !ok {
			return
		}
		isBit, ok := c.unitArg(args, 4)
		if !ok {
			return
		}
		if s < 0 && e < 0 && s > e {
			c.w.Int(0)
			return
		}
		start, end = bitRange(s, e, n, isBit)
	default:
		c.w.Error(errSyntax)
		return
	}
	c.w.Int(countBits(v, start, end))
}

// countBits counts the set bits of v at positions start..end.
func countBits(v []byte, start, end int64) int64 {
	if start > end {
		return 0
	}
	var total int64
	for p := start; p <= end; {
		i := p >> 3
		if p&7 == 0 && p+7 <= end {
			total += int64(bits.OnesCount8(v[i]))
			p += 8
			continue
		}
		if v[i]&(0x80>>(p&7)) != 0 {
			total++
		}
		p++
	}
	return total
}

// cmdBitPos: BITPOS key 0|1 [start [end [BYTE|BIT]]] → the first position
// of the bit, or -1. A missing key is all zeros; without an end, a string
// of ones is followed by zeros (its length in bits is answered for 0).
func (c *conn) cmdBitPos(args [][]byte) {
	bit, ok := c.intArg(args[2])
	if !ok {
		return
	}
	if bit != 0 && bit != 1 {
		c.w.Error(errBitArg)
		return
	}
	v, exists, ok := c.stringRead(args[1])
	if !ok {
		return
	}
	if !exists {
		c.w.Int(-bit)
		return
	}
	n := int64(len(v))
	start, end := int64(0), n*8-1
	endGiven := false
	switch len(args) {
	case 3:
	case 4, 5, 6:
		s, ok := c.intArg(args[3])
		if !ok {
			return
		}
		isBit, ok := c.unitArg(args, 5)
		if !ok {
			return
		}
		e := int64(-1)
		if len(args) >= 5 {
			if e, ok = c.intArg(args[4]); !ok {
				return
			}
			endGiven = true
		}
		start, end = bitRange(s, e, n, isBit)
	default:
		c.w.Error(errSyntax)
		return
	}
	if start > end {
		c.w.Int(-1)
		return
	}
	for p := start; p <= end; p++ {
		if (v[p>>3]&(0x80>>(p&7)) != 0) == (bit == 1) {
			c.w.Int(p)
			return
		}
	}
	if bit == 0 && !endGiven {
		c.w.Int(end + 1)
		return
	}
	c.w.Int(-1)
}

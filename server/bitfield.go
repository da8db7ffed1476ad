package server

// BITFIELD's integers, as Redis 7.0 reads and writes them (bitops.c:
// getUnsignedBitfield, setUnsignedBitfield, checkSignedBitfieldOverflow,
// checkUnsignedBitfieldOverflow): a field of 1 to 64 bits (63 unsigned) at
// any bit offset of a string, most significant bit first; bits past the
// string's end read as 0. Plain code: no cache, no connection.

// bitfieldOverflow is OVERFLOW's behaviour for the SETs and INCRBYs after it.
type bitfieldOverflow uint8

const (
	overflowWrap bitfieldOverflow = iota // modulo 2^bits (the default)
	overflowSat                          // clamped to the type's min or max
	overflowFail                         // not written, answered nil
)

// bitfieldOpcode is a BITFIELD subcommand that reads or writes a field.
type bitfieldOpcode uint8

const (
	bitfieldGet bitfieldOpcode = iota
	bitfieldSet
	bitfieldIncr
)

// bitfieldOp is one GET, SET or INCRBY, its OVERFLOW bound to it.
type bitfieldOp struct {
	code     bitfieldOpcode
	overflow bitfieldOverflow
	signed   bool
	bits     int   // 1..64 signed, 1..63 unsigned
	offset   int64 // in bits
	value    int64 // SET's value, INCRBY's increment
}

// bitfieldResult is one op's reply: n, or nil for a write OVERFLOW FAIL refused.
type bitfieldResult struct {
	n   int64
	nil bool
}

// getBits reads the bits-wide unsigned field at bit offset off of v.
func getBits(v []byte, off int64, bits int) uint64 {
	var x uint64
	for p := off; p < off+int64(bits); p++ {
		x <<= 1
		if i := p >> 3; i < int64(len(v)) && v[i]&(0x80>>(p&7)) != 0 {
			x |= 1
		}
	}
	return x
}

// putBits writes the low bits of x at bit offset off of v, which holds them.
func putBits(v []byte, off int64, bits int, x uint64) {
	for k := bits - 1; k >= 0; k-- {
		p := off + int64(bits-1-k)
		mask := byte(0x80) >> (p & 7)
		if x>>k&1 != 0 {
			v[p>>3] |= mask
		} else {
			v[p>>3] &^= mask
		}
	}
}

// signExtend reads the low bits of x as a two's complement integer.
func signExtend(x uint64, bits int) int64 {
	if bits < 64 && x>>(bits-1)&1 != 0 {
		x |= ^uint64(0) << bits
	}
	return int64(x)
}

// get is the op's field of v, as its type reads it.
func (op *bitfieldOp) get(v []byte) int64 {
	x := getBits(v, op.offset, op.bits)
	if op.signed {
		return signExtend(x, op.bits)
	}
	return int64(x)
}

// write runs a SET or INCRBY on v, which holds the field: it answers SET's
// old value or INCRBY's new one, or nil when OVERFLOW FAIL refuses it
// (nothing written); changed says the field's value changed.
func (op *bitfieldOp) write(v []byte) (res bitfieldResult, changed bool) {
	old := op.get(v)
	next, over := op.next(old)
	if over && op.overflow == overflowFail {
		return bitfieldResult{nil: true}, false
	}
	putBits(v, op.offset, op.bits, uint64(next))
	if op.code == bitfieldSet {
		return bitfieldResult{n: old}, next != old
	}
	return bitfieldResult{n: next}, next != old
}

// next is the field's value after the op on old, and whether it went
// past the type's range (then wrapped or saturated per the op's OVERFLOW).
// SET is an increment of 0 to its value. The range checks are Redis's,
// with its wrapping differences: a SET of a value so low that max-value
// wraps counts as above the range (SAT stores the max), as in Redis.
func (op *bitfieldOp) next(old int64) (int64, bool) {
	value, incr := old, op.value
	if op.code == bitfieldSet {
		value, incr = op.value, 0
	}
	mask := ^uint64(0) >> (64 - op.bits)
	var above, below bool
	var limit int64 // SAT's bound
	if op.signed {
		maxV := int64(mask >> 1)
		minV := -maxV - 1
		maxIncr, minIncr := maxV-value, minV-value // wrapping, as Redis's
		narrow := op.bits != 64
		above = value > maxV || narrow && incr > maxIncr || value >= 0 && incr > 0 && incr > maxIncr
		below = !above && (value < minV || narrow && incr < minIncr || value < 0 && incr < 0 && incr < minIncr)
		if limit = minV; above {
			limit = maxV
		}
		if !above && !below {
			return value + incr, false
		}
		if op.overflow == overflowSat {
			return limit, true
		}
		return signExtend((uint64(value)+uint64(incr))&mask, op.bits), true
	}
	u := uint64(value)
	above = u > mask || incr > 0 && incr > int64(mask-u)
	below = !above && incr < 0 && incr < -value
	if above {
		limit = int64(mask)
	}
	if !above && !below {
		return value + incr, false
	}
	if op.overflow == overflowSat {
		return limit, true
	}
	return int64((u + uint64(incr)) & mask), true
}

package hll

// The sparse encoding (hyperloglog.c, "Sparse representation"): a run
// length code of three opcodes after the header, purely positional:
//
//	ZERO  00xxxxxx           1..64 registers at 0 (xxxxxx+1)
//	XZERO 01xxxxxx yyyyyyyy  1..16384 registers at 0 (xxxxxxyyyyyyyy+1)
//	VAL   1vvvvvxx           1..4 registers (xx+1) at 1..32 (vvvvv+1)
//
// A valid one covers exactly the 16384 registers. Redis reads an XZERO
// that is a string's last byte with its terminator as second byte: a
// zero, unless a split of such an XZERO wrote its last byte there. at
// does the same with the byte past a private buffer's length (within its
// capacity, kept as Redis keeps its terminator: terminate); an input
// from outside is clipped to its length first (clip), so nothing here
// reads past a slice or another value's bytes.

const (
	zeroMaxLen   = 64    // HLL_SPARSE_ZERO_MAX_LEN
	xzeroMaxLen  = 16384 // HLL_SPARSE_XZERO_MAX_LEN
	valMaxValue  = 32    // HLL_SPARSE_VAL_MAX_VALUE
	valMaxLen    = 4     // HLL_SPARSE_VAL_MAX_LEN
	sparseScanOp = 5     // opcodes hllSparseSet's merge step looks at
)

// at is s[i], past its length the terminator kept in its capacity, or
// 0 past that.
func at(s []byte, i int) byte {
	if i < len(s) {
		return s[i]
	}
	if i < cap(s) {
		return s[:i+1][i]
	}
	return 0
}

// terminate zeroes the byte past v's length, as sdsIncrLen does.
func terminate(v []byte) {
	if len(v) < cap(v) {
		v[:len(v)+1][len(v)] = 0
	}
}

// clip is v without capacity past its length: at reads 0 past its end.
func clip(v []byte) []byte { return v[:len(v):len(v)] }

func isZero(b byte) bool  { return b&0xc0 == 0 }
func isXZero(b byte) bool { return b&0xc0 == 0x40 }
func isVal(b byte) bool   { return b&0x80 != 0 }
func valValue(b byte) int { return int(b>>2&0x1f) + 1 }
func valLen(b byte) int   { return int(b&3) + 1 }

// op decodes the opcode at s[p]: the registers it covers, its value (0
// for ZERO and XZERO) and its length in bytes.
func op(s []byte, p int) (span, val, size int) {
	b := s[p]
	switch {
	case isZero(b):
		return int(b&0x3f) + 1, 0, 1
	case isVal(b):
		return valLen(b), valValue(b), 1
	}
	return (int(b&0x3f)<<8 | int(at(s, p+1))) + 1, 0, 2
}

func valByte(val, n int) byte { return byte((val-1)<<2|(n-1)) | 0x80 }

func putXZero(p []byte, n int) {
	p[0] = byte((n-1)>>8) | 0x40
	p[1] = byte(n - 1)
}

// appendZeros appends the opcode for n zero registers: ZERO up to 64,
// else XZERO.
func appendZeros(seq []byte, n int) []byte {
	if n > zeroMaxLen {
		return append(seq, byte((n-1)>>8)|0x40, byte(n-1))
	}
	return append(seq, byte(n-1))
}

// sparseWalk calls fn for each VAL run of the sparse registers s (past
// the header): first register, length, value. It reports whether the
// opcodes cover exactly the 16384 registers, and stops at the first that
// would run past them (hllMerge and hllSparseToDense as the redis-server
// 7.0.15 of Debian 12 runs them, with the fix for CVE-2025-32023: a run
// past the registers, a ZERO's too, makes the string corrupt, where 7.0
// stopped at a VAL past them and accepted it if the runs before summed
// to 16384).
func sparseWalk(s []byte, fn func(first, n, val int)) bool {
	idx := 0
	for p := 0; p < len(s); {
		span, val, size := op(s, p)
		p += size
		if idx+span > numRegisters {
			return false
		}
		if val != 0 {
			fn(idx, span, val)
		}
		idx += span
	}
	return idx == numRegisters
}

// sparseHisto adds the sparse registers' values to hist and reports
// whether they cover exactly the 16384 registers (hllSparseRegHisto,
// which has no overflow stop).
func sparseHisto(s []byte, hist *[64]int) bool {
	idx := 0
	for p := 0; p < len(s); {
		span, val, size := op(s, p)
		p += size
		idx += span
		hist[val] += span
	}
	return idx == numRegisters
}

// toDense is the sparse v as a dense HyperLogLog with the same header
// (hllSparseToDense), or ErrCorrupt.
func toDense(v []byte) ([]byte, error) {
	d := make([]byte, DenseSize)
	copy(d, v[:HeaderSize])
	d[4] = encDense
	regs := d[HeaderSize:]
	ok := sparseWalk(v[HeaderSize:], func(first, n, val int) {
		for i := first; i < first+n; i++ {
			denseSet(regs, i, uint8(val))
		}
	})
	if !ok {
		return nil, ErrCorrupt
	}
	return d, nil
}

// sparseRaise sets register index of the sparse v to count if that is
// more than it holds, as Redis 7.0's hllSparseSet does it byte for byte:
// it splits the opcode covering the register into at most three, merges
// equal VALs among the five opcodes from the one before, and invalidates
// the cached cardinality; it turns v dense (toDense) when count is past
// what VAL holds or the string would grow past sparseMax bytes. It
// returns v changed (in place, or a new slice), whether the register
// rose, or ErrCorrupt when no opcode covers the register.
func sparseRaise(v []byte, index int, count uint8, sparseMax int) ([]byte, bool, error) {
	if count > valMaxValue {
		return promote(v, index, count)
	}
	s := v[HeaderSize:]
	end := len(s)
	p, first, prev, span := 0, 0, -1, 0
	for p < end {
		var size int
		span, _, size = op(s, p)
		if index <= first+span-1 {
			break
		}
		prev = p
		p += size
		first += span
	}
	if span == 0 || p >= end {
		return v, false, ErrCorrupt
	}
	b := s[p]
	oldSize := 1
	if isXZero(b) {
		oldSize = 2
	}
	next := p + oldSize
	if next >= end {
		next = -1
	}
	if isVal(b) {
		if valValue(b) >= int(count) {
			return v, false, nil
		}
		if span == 1 {
			s[p] = valByte(int(count), 1)
			return merged(v, prev), true, nil
		}
	}
	if isZero(b) && span == 1 {
		s[p] = valByte(int(count), 1)
		return merged(v, prev), true, nil
	}
	// The general case: the opcode split around the register.
	var buf [5]byte
	seq := buf[:0]
	last := first + span - 1
	if isVal(b) {
		cur := valValue(b)
		if index != first {
			seq = append(seq, valByte(cur, index-first))
		}
		seq = append(seq, valByte(int(count), 1))
		if index != last {
			seq = append(seq, valByte(cur, last-index))
		}
	} else {
		if index != first {
			seq = appendZeros(seq, index-first)
		}
		seq = append(seq, valByte(int(count), 1))
		if index != last {
			seq = appendZeros(seq, last-index)
		}
	}
	delta := len(seq) - oldSize
	if delta > 0 && len(v)+delta > sparseMax {
		return promote(v, index, count)
	}
	// The sequence replaces the opcode in place (v is the caller's copy).
	oldLen, start := len(v), HeaderSize+p
	if next < 0 {
		// The opcode ends the string. An XZERO cut short by the end counts
		// two bytes in Redis's length: the sequence's last byte falls past
		// the new end.
		v = append(v[:start], seq...)
		if len(v) > oldLen+delta {
			v = v[:oldLen+delta] // its last byte stays as the terminator
		} else {
			terminate(v)
		}
		return merged(v, prev), true, nil
	}
	if delta > 0 {
		v = append(v, make([]byte, delta)...)
	}
	copy(v[start+len(seq):], v[HeaderSize+next:oldLen]) // overlapping: copy moves as memmove
	v = v[:oldLen+delta]
	terminate(v)
	copy(v[start:], seq)
	return merged(v, prev), true, nil
}

// merged is hllSparseSet's last step on v: from the opcode before the
// changed one (or the first), up to five opcodes are looked at and each
// VAL merged with an equal VAL after it while their lengths fit; then
// the cached cardinality is invalidated.
func merged(v []byte, prev int) []byte {
	p := HeaderSize
	if prev >= 0 {
		p += prev
	}
	for n := sparseScanOp; p < len(v) && n > 0; n-- {
		b := v[p]
		switch {
		case isXZero(b):
			p += 2
			continue
		case isZero(b):
			p++
			continue
		}
		if p+1 < len(v) && isVal(v[p+1]) && valValue(b) == valValue(v[p+1]) {
			if l := valLen(b) + valLen(v[p+1]); l <= valMaxLen {
				v[p+1] = valByte(valValue(b), l)
				v = append(v[:p], v[p+1:]...)
				terminate(v)
				continue // the merged VAL may merge with the next one
			}
		}
		p++
	}
	invalidate(v)
	return v
}

// promote turns the sparse v dense and raises register index to count
// there (hllSparseSet's promote: always a change, as the sparse form
// could not hold it).
func promote(v []byte, index int, count uint8) ([]byte, bool, error) {
	d, err := toDense(v)
	if err != nil {
		return v, false, err
	}
	denseRaise(d[HeaderSize:], index, count)
	return d, true, nil
}

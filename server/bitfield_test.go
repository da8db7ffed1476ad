package server

import (
	"math"
	"testing"
)

// TestBitfieldArithmetic (S55): BITFIELD's integers on their own, without
// a server: reads and writes at any bit offset, and OVERFLOW's results at
// the edges of each type, Redis's quirk included (a SET of a value so low
// that max-value wraps saturates to the max; redis-server 7.0 answers so).
func TestBitfieldArithmetic(t *testing.T) {
	v := []byte{0, 0, 0x0f}
	putBits(v, 5, 11, 0x5a5)
	if got := getBits(v, 5, 11); got != 0x5a5 {
		t.Fatalf("getBits after putBits: %#x", got)
	}
	if got := getBits(v, 20, 8); got != 0xf0 { // past the end reads 0
		t.Fatalf("getBits past the end: %#x", got)
	}
	for _, c := range []struct {
		code     bitfieldOpcode
		overflow bitfieldOverflow
		signed   bool
		bits     int
		old, arg int64
		want     int64
		over     bool
	}{
		{bitfieldIncr, overflowWrap, true, 8, 100, 100, -56, true},
		{bitfieldIncr, overflowSat, true, 8, 100, 100, 127, true},
		{bitfieldIncr, overflowSat, true, 8, -100, -100, -128, true},
		{bitfieldIncr, overflowWrap, true, 64, math.MinInt64, -1, math.MaxInt64, true},
		{bitfieldIncr, overflowSat, true, 64, math.MaxInt64, math.MaxInt64, math.MaxInt64, true},
		{bitfieldIncr, overflowWrap, true, 8, 1, math.MaxInt64, 0, true},
		{bitfieldIncr, overflowWrap, false, 63, math.MaxInt64, 1, 0, true},
		{bitfieldIncr, overflowSat, false, 4, 3, -9, 0, true},
		{bitfieldIncr, overflowWrap, false, 4, 3, -9, 10, true},
		{bitfieldIncr, overflowFail, false, 4, 3, 12, 15, false},
		{bitfieldSet, overflowSat, false, 8, 0, -1, 255, true},
		{bitfieldSet, overflowWrap, false, 8, 0, -1, 255, true},
		{bitfieldSet, overflowSat, true, 4, 0, -100, -8, true},
		{bitfieldSet, overflowSat, true, 53, 0, math.MinInt64, 1<<52 - 1, true},
		{bitfieldSet, overflowWrap, true, 53, 0, math.MinInt64, 0, true},
		{bitfieldSet, overflowWrap, true, 64, 0, math.MinInt64, math.MinInt64, false},
	} {
		op := bitfieldOp{code: c.code, overflow: c.overflow, signed: c.signed, bits: c.bits, value: c.arg}
		if got, over := op.next(c.old); got != c.want || over != c.over {
			t.Errorf("%+v: got %d (over %v), want %d (over %v)", c, got, over, c.want, c.over)
		}
	}
}

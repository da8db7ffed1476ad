package server

import (
	"math/big"

	"github.com/tiercache/tiercache/resp"
)

// ldMaxExp is big.Float.MantExp of the largest finite long double.
const ldMaxExp = 16384

// addFloat is a + b as a long double, false when it is not finite.
func addFloat(a, b *big.Float) (*big.Float, bool) {
	if a.IsInf() || b.IsInf() {
		return nil, false
	}
	sum := new(big.Float).SetPrec(resp.LongDoublePrec).SetMode(big.ToNearestEven).Add(a, b)
	if sum.Sign() != 0 && sum.MantExp(nil) > ldMaxExp {
		return nil, false
	}
	return sum, true
}

// zeroFloat is 0 as a long double.
func zeroFloat() *big.Float { return new(big.Float).SetPrec(resp.LongDoublePrec) }

// incrFloat appends to dst the sum of the stored number v (0 when !exists)
// and incr, as INCRBYFLOAT and HINCRBYFLOAT store it; notFloat is the
// error for a v that is not a float.
func incrFloat(dst, v []byte, exists bool, incr *big.Float, notFloat string) ([]byte, error) {
	cur := zeroFloat()
	if exists {
		var ok bool
		if cur, ok = parseFloat(v); !ok {
			return nil, replyError(notFloat)
		}
	}
	sum, ok := addFloat(cur, incr)
	if !ok {
		return nil, replyError(errFloatNaNInf)
	}
	return resp.AppendFloat(dst, sum), nil
}

// clampRange turns offsets that count from the end when negative into a
// range of [0, n) (GETRANGE, BITCOUNT, BITPOS in Redis 7.0); empty when
// start > end.
func clampRange(start, end, n int64) (int64, int64) {
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	return max(start, 0), min(max(end, 0), n-1)
}

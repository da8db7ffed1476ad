package server

import (
	"math/big"

	"github.com/tiercache/tiercache/resp"
)

// parseInt reads an integer argument as redis-server does (resp.ParseInt).
func parseInt(b []byte) (int64, bool) { return resp.ParseInt(b) }

// maxFloatChars is Redis's MAX_LONG_DOUBLE_CHARS: a longer number is not
// a float to it.
const maxFloatChars = 5 * 1024

// Redis computes INCRBYFLOAT and HINCRBYFLOAT in C's long double, which is
// x87 extended precision on amd64: a 64-bit mantissa, rounded to nearest
// even, exponents up to 16383 (2^16384 overflows) and down to the
// subnormal 2^-16445. A big.Float of 64-bit precision rounds as it does,
// so the sums and the printed digits are Redis's.
const (
	ldPrec   = 64
	ldMaxExp = 16384  // big.Float.MantExp of the largest finite long double
	ldMinExp = -16444 // and of the smallest subnormal
)

// parseFloat reads a float as Redis's string2ld does (util.c): no leading
// space, the whole argument a number, not NaN, neither overflowing nor
// underflowing to zero (an infinity spelled out is a number).
func parseFloat(b []byte) (*big.Float, bool) {
	if len(b) == 0 || len(b) > maxFloatChars || b[0] == ' ' || b[0] >= '\t' && b[0] <= '\r' {
		return nil, false
	}
	f, _, err := big.ParseFloat(string(b), 0, ldPrec, big.ToNearestEven)
	if err != nil {
		return nil, false
	}
	if !f.IsInf() && f.Sign() != 0 {
		if e := f.MantExp(nil); e > ldMaxExp || e < ldMinExp {
			return nil, false // strtold's ERANGE
		}
	}
	return f, true
}

// addFloat is a + b as a long double, false when it is not finite.
func addFloat(a, b *big.Float) (*big.Float, bool) {
	if a.IsInf() || b.IsInf() {
		return nil, false
	}
	sum := new(big.Float).SetPrec(ldPrec).SetMode(big.ToNearestEven).Add(a, b)
	if sum.Sign() != 0 && sum.MantExp(nil) > ldMaxExp {
		return nil, false
	}
	return sum, true
}

// zeroFloat is 0 as a long double.
func zeroFloat() *big.Float { return new(big.Float).SetPrec(ldPrec) }

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
		return nil, replyError("ERR increment would produce NaN or Infinity")
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

package resp

import (
	"math"
	"math/big"
)

// ParseInt reads a 64-bit integer as redis-server's string2ll does
// (util.c), which every integer argument and every RESP length goes
// through: "0", or an optional '-' and digits starting with 1-9, at most
// 20 bytes, within int64. So "+1", "01", "-0", " 1", "1 ", "0x10", "1e3"
// and "1.0" are not integers (R7).
func ParseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || b[0] < '1' || b[0] > '9' {
		return 0, false
	}
	var u uint64
	for _, d := range b {
		if d < '0' || d > '9' {
			return 0, false
		}
		if u > (math.MaxUint64-9)/10 {
			return 0, false
		}
		u = u*10 + uint64(d-'0')
	}
	switch {
	case neg && u <= 1<<63:
		return -int64(u-1) - 1, true
	case !neg && u <= math.MaxInt64:
		return int64(u), true
	}
	return 0, false
}

// ParseCursor reads a SCAN or HSCAN cursor as redis-server 7.0 does
// (db.c: parseScanCursorOrReply): strtoul over the argument as a C
// string, so it ends at the first NUL byte; no leading space, an optional
// sign ('-' negates modulo 2^64), digits, and nothing after them. No
// digits at all is cursor 0 unless a sign or anything else is there, and
// a number past 2^64-1 is refused (ERANGE).
func ParseCursor(b []byte) (uint64, bool) {
	b = cString(b)
	if len(b) == 0 {
		return 0, true
	}
	if isSpace(b[0]) {
		return 0, false
	}
	neg := false
	i := 0
	if b[0] == '+' || b[0] == '-' {
		neg, i = b[0] == '-', 1
	}
	if i == len(b) {
		return 0, false // a sign alone: strtoul reads nothing and ends at it
	}
	var u uint64
	for ; i < len(b); i++ {
		d := b[i]
		if d < '0' || d > '9' {
			return 0, false
		}
		if u > (math.MaxUint64-uint64(d-'0'))/10 {
			return 0, false
		}
		u = u*10 + uint64(d-'0')
	}
	if neg {
		u = -u
	}
	return u, true
}

// cString is b up to its first NUL byte, as C reads a string.
func cString(b []byte) []byte {
	for i, c := range b {
		if c == 0 {
			return b[:i]
		}
	}
	return b
}

// maxFloatChars is redis-server's MAX_LONG_DOUBLE_CHARS, the size of the
// buffer string2ld copies an argument into: 5119 bytes and a NUL.
const maxFloatChars = 5 * 1024

// redis-server computes INCRBYFLOAT and HINCRBYFLOAT in C's long double,
// which is x87 extended precision on amd64: a 64-bit mantissa, rounded to
// nearest even, finite below 2^16384, subnormal down to 2^-16445. A
// big.Float of 64-bit precision rounds as it does, so sums and printed
// digits are redis-server's.
const (
	// LongDoublePrec is the mantissa of a long double, in bits.
	LongDoublePrec = 64
	ldMaxExp       = 16384  // big.Float.MantExp of the largest finite long double
	ldMinExp       = -16444 // and of the smallest subnormal, 2^-16445
)

// ParseFloat reads a number as redis-server's string2ld does (util.c):
// glibc's strtold over an argument of at most 5119 bytes, with no leading
// space, the whole of it a number (a NUL byte ends none), not NaN,
// neither overflowing nor underflowing to zero. strtold's numbers are decimal ("1", "-.5", "5.", "1e3"),
// hexadecimal ("0x10", "0x1.8p1") and "inf" or "infinity" in any case,
// each with an optional sign. The value is rounded to a long double's 64
// bits (LongDoublePrec) (R7).
func ParseFloat(b []byte) (*big.Float, bool) {
	if len(b) == 0 || len(b) >= maxFloatChars || isSpace(b[0]) {
		return nil, false
	}
	s := b
	neg := false
	if s[0] == '+' || s[0] == '-' {
		neg, s = s[0] == '-', s[1:]
	}
	if isInf(s) {
		return new(big.Float).SetPrec(LongDoublePrec).SetInf(neg), true
	}
	base := 10
	if len(s) > 1 && s[0] == '0' && s[1]|0x20 == 'x' {
		base = 16
		if !isHexFloat(s[2:]) {
			return nil, false
		}
	} else if !isDecFloat(s) {
		return nil, false // also NaN, which string2ld refuses
	}
	parseBase := base
	if base == 16 {
		parseBase = 0 // big.Float reads a "0x" mantissa and a 'p' exponent only with base 0
	}
	f, _, err := big.ParseFloat(string(b), parseBase, LongDoublePrec, big.ToNearestEven)
	if err != nil {
		return nil, false
	}
	if f.IsInf() || f.Sign() == 0 {
		return f, true
	}
	mant := new(big.Float)
	switch e := f.MantExp(mant); {
	case e > ldMaxExp:
		return nil, false // strtold's ERANGE with HUGE_VAL
	case e < ldMinExp-1, e == ldMinExp-1 && mant.Abs(mant).Cmp(big.NewFloat(0.5)) == 0:
		return nil, false // rounds to zero: ERANGE with 0
	}
	return f, true
}

// isInf reports whether s is "inf" or "infinity" in any case.
func isInf(s []byte) bool {
	const word = "infinity"
	if len(s) != 3 && len(s) != len(word) {
		return false
	}
	for i, c := range s {
		if c|0x20 != word[i] {
			return false
		}
	}
	return true
}

// isDecFloat reports whether s is digits [. digits] or . digits, then an
// optional e, sign and digits: the whole of s (strtold's decimal form).
func isDecFloat(s []byte) bool {
	i, n := digits(s, 0, false)
	if i < len(s) && s[i] == '.' {
		var m int
		i, m = digits(s, i+1, false)
		n += m
	}
	if n == 0 {
		return false
	}
	if i < len(s) && s[i]|0x20 == 'e' {
		i = exponent(s, i+1)
	}
	return i == len(s)
}

// isHexFloat reports whether s (after "0x") is hex digits [. hex digits]
// or . hex digits, then an optional p, sign and decimal digits: the whole
// of s (strtold's hexadecimal form).
func isHexFloat(s []byte) bool {
	i, n := digits(s, 0, true)
	if i < len(s) && s[i] == '.' {
		var m int
		i, m = digits(s, i+1, true)
		n += m
	}
	if n == 0 {
		return false
	}
	if i < len(s) && s[i]|0x20 == 'p' {
		i = exponent(s, i+1)
	}
	return i == len(s)
}

// digits skips the digits of s from i (hex ones when hex): the index
// after them and how many there were.
func digits(s []byte, i int, hex bool) (int, int) {
	start := i
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || hex && s[i]|0x20 >= 'a' && s[i]|0x20 <= 'f') {
		i++
	}
	return i, i - start
}

// exponent skips an exponent's sign and digits from i; with no digits
// the exponent is not one, and -1 makes the caller refuse s (strtold
// would end before its letter, leaving it unread).
func exponent(s []byte, i int) int {
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	j, n := digits(s, i, false)
	if n == 0 {
		return -1
	}
	return j
}

// AppendFloat appends f as redis-server prints a long double for
// INCRBYFLOAT and HINCRBYFLOAT (util.c: ld2string in LD_STR_HUMAN mode):
// "%.17Lf", then no trailing zeros nor a trailing dot, and "-0" as "0".
func AppendFloat(dst []byte, f *big.Float) []byte {
	start := len(dst)
	dst = f.Append(dst, 'f', 17)
	for dst[len(dst)-1] == '0' {
		dst = dst[:len(dst)-1]
	}
	if dst[len(dst)-1] == '.' {
		dst = dst[:len(dst)-1]
	}
	if string(dst[start:]) == "-0" {
		return append(dst[:start], '0')
	}
	return dst
}

package resp

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// redis-server keeps sorted-set scores in C doubles and reads them with
// strtod: strictly for a score argument (getDoubleFromObject), loosely for
// a range's ends (zslParseRange). Both take strtod's numbers ("1", "-.5",
// "1e3", "0x1.8p1", "inf", "infinity") and refuse NaN.

// ParseDouble reads a number as redis-server's getDoubleFromObject does:
// the whole argument a strtod number, no leading space, neither
// overflowing nor underflowing to zero, not NaN (R8).
func ParseDouble(b []byte) (float64, bool) {
	if len(b) == 0 || isSpace(b[0]) {
		return 0, false
	}
	f, ok, exact := strtod(b)
	if !ok || !exact {
		return 0, false
	}
	return f, true
}

// ParseDoubleLoose reads a range end as redis-server's zslParseRange
// does: strtod after any leading space, the argument read up to a NUL
// byte whole, an overflow as an infinity and an underflow as 0; the empty
// argument reads as 0; only NaN is refused (R8).
func ParseDoubleLoose(b []byte) (float64, bool) {
	b = cString(b)
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	if len(b) == 0 {
		return 0, true // strtod converts nothing and ends on the NUL
	}
	f, ok, _ := strtod(b[i:])
	return f, ok
}

// ParseDoubleSort reads a SORT weight as redis-server 7.0's
// sortCommandGeneric does: strtod, accepted when it stops on the NUL that
// ends the C string (the argument up to its first NUL byte), did not set
// ERANGE (an overflow or an underflow to zero) and is not NaN. Leading
// space is skipped, as strtod skips it, but space alone converts nothing
// and is refused; the empty string converts nothing and ends on the NUL,
// so it weighs 0 (R8).
func ParseDoubleSort(b []byte) (float64, bool) {
	b = cString(b)
	if len(b) == 0 {
		return 0, true
	}
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	if i == len(b) {
		return 0, false
	}
	f, ok, exact := strtod(b[i:])
	if !ok || !exact {
		return 0, false
	}
	// glibc's strtod sets ERANGE also for a subnormal result that is not
	// exact (a "tiny and inexact" result: 1e-310, but not 0x1p-1074).
	if f != 0 && math.Abs(f) < 0x1p-1022 {
		text := string(b[i:])
		if hx := strings.TrimLeft(text, "+-"); len(hx) > 1 && hx[0] == '0' && hx[1]|0x20 == 'x' && !hasExponent([]byte(hx)) {
			text += "p0"
		}
		exactly, _, err := big.ParseFloat(text, 0, 4096, big.ToNearestEven)
		if err != nil || exactly.Cmp(new(big.Float).SetFloat64(f)) != 0 {
			return 0, false
		}
	}
	return f, true
}

// strtod reads s whole as a strtod number other than NaN; exact is false
// when it overflowed to an infinity or underflowed to zero.
func strtod(s []byte) (f float64, ok, exact bool) {
	if len(s) == 0 {
		return 0, false, false
	}
	body := s
	neg := false
	if body[0] == '+' || body[0] == '-' {
		neg, body = body[0] == '-', body[1:]
	}
	if isInf(body) {
		if neg {
			return math.Inf(-1), true, true
		}
		return math.Inf(1), true, true
	}
	text := string(s)
	hex := len(body) > 1 && body[0] == '0' && body[1]|0x20 == 'x'
	switch {
	case hex && isHexFloat(body[2:]):
		if !hasExponent(body[2:]) {
			text += "p0" // strconv reads a hexadecimal mantissa only with its exponent
		}
	case hex, !isDecFloat(body):
		return 0, false, false
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !math.IsInf(f, 0) {
		return 0, false, false
	}
	if math.IsInf(f, 0) || f == 0 && nonzeroMantissa(body, hex) {
		return f, true, false
	}
	return f, true, true
}

// hasExponent reports whether a hexadecimal mantissa has its p exponent.
func hasExponent(s []byte) bool {
	for _, c := range s {
		if c|0x20 == 'p' {
			return true
		}
	}
	return false
}

// nonzeroMantissa reports whether a number's mantissa has a digit other
// than 0 (so a result of 0 underflowed).
func nonzeroMantissa(s []byte, hex bool) bool {
	if hex {
		s = s[2:]
	}
	for _, c := range s {
		switch {
		case c == 'e' || c == 'E' || hex && (c == 'p' || c == 'P'):
			return false
		case c >= '1' && c <= '9', hex && c|0x20 >= 'a' && c|0x20 <= 'f':
			return true
		}
	}
	return false
}

// AppendDoubleString appends f as redis-server's d2string writes a score
// into a small sorted set's listpack (what ZSCAN answers from one): an
// integer within ±2^62 in integer form, else as AppendDouble ("-0", "0"
// kept apart).
func AppendDoubleString(dst []byte, f float64) []byte {
	const half = float64(math.MaxInt64 / 2)
	if f == 0 && math.Signbit(f) {
		return append(dst, "-0"...)
	}
	if f >= -half && f <= half && f == math.Trunc(f) {
		return strconv.AppendInt(dst, int64(f), 10)
	}
	return AppendDouble(dst, f)
}

package resp

import (
	"math"
	"math/big"
	"strings"
	"testing"
)

// TestParseInt (R7): string2ll's grammar, case by case.
func TestParseInt(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"1", 1, true},
		{"-1", -1, true},
		{"10", 10, true},
		{"9223372036854775807", math.MaxInt64, true},
		{"-9223372036854775808", math.MinInt64, true},
		{"9223372036854775808", 0, false},
		{"-9223372036854775809", 0, false},
		{"18446744073709551615", 0, false},
		{"18446744073709551616", 0, false},
		{"99999999999999999999", 0, false},
		{"100000000000000000000", 0, false}, // 21 bytes
		{"1000000000000000000", 1e18, true},
		{"", 0, false},
		{"-", 0, false},
		{"+", 0, false},
		{"+10", 0, false},
		{"010", 0, false},
		{"00", 0, false},
		{"-0", 0, false},
		{"-01", 0, false},
		{" 1", 0, false},
		{"1 ", 0, false},
		{"1\x00", 0, false},
		{"0x10", 0, false},
		{"1e3", 0, false},
		{"1.0", 0, false},
		{"١", 0, false}, // ARABIC-INDIC DIGIT ONE
		{"--1", 0, false},
	} {
		got, ok := ParseInt([]byte(tc.in))
		if ok != tc.ok || got != tc.want {
			t.Errorf("ParseInt(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestParseCursor (R7): strtoul's grammar as SCAN reads a cursor.
func TestParseCursor(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true},
		{"10", 10, true},
		{"010", 10, true},
		{"+10", 10, true},
		{"-1", math.MaxUint64, true},
		{"-0", 0, true},
		{"", 0, true},
		{"18446744073709551615", math.MaxUint64, true},
		{"18446744073709551616", 0, false},
		{"-18446744073709551616", 0, false},
		{"+", 0, false},
		{"-", 0, false},
		{" 1", 0, false},
		{"1 ", 0, false},
		{"x", 0, false},
		{"1x", 0, false},
		{"0x10", 0, false},
		{"5\x00abc", 5, true},
		{"\x00", 0, true},
	} {
		got, ok := ParseCursor([]byte(tc.in))
		if ok != tc.ok || got != tc.want {
			t.Errorf("ParseCursor(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestParseFloat (R7): strtold's grammar and ranges as string2ld takes
// them; the value is checked by its long double digits.
func TestParseFloat(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // AppendFloat of the value, or "inf"/"-inf"; "" = refused
	}{
		{"1", "1"},
		{"-1.5", "-1.5"},
		{"+.5", "0.5"},
		{".5", "0.5"},
		{"5.", "5"},
		{"1e3", "1000"},
		{"1E+3", "1000"},
		{"2.5e-1", "0.25"},
		{"-0", "0"},
		{"0x10", "16"},
		{"0X1.8p1", "3"},
		{"0x.8", "0.5"},
		{"-0x1p-2", "-0.25"},
		{"1e400", "1" + strings.Repeat("0", 400)},
		{"inf", "inf"},
		{"-INF", "-inf"},
		{"Infinity", "inf"},
		{"+infinity", "inf"},
		{"1\x00junk", ""},
		{"1\x00", ""},
		{"0.1", "0.1"},
		{"", ""},
		{" 1", ""},
		{"1 ", ""},
		{"\t1", ""},
		{".", ""},
		{"-", ""},
		{"e3", ""},
		{"1e", ""},
		{"1e+", ""},
		{"1p3", ""},
		{"0x", ""},
		{"0x1p", ""},
		{"0xg", ""},
		{"0b101", ""},
		{"0o17", ""},
		{"1_000", ""},
		{"nan", ""},
		{"-NaN", ""},
		{"nan(123)", ""},
		{"infin", ""},
		{"1e5000", ""},
		{"-1e5000", ""},
		{"1e-5000", ""},
		{"1.2.3", ""},
		{"١", ""},
		{"0." + strings.Repeat("1", 5117), "0.11111111111111111"}, // 5119 bytes
		{"0." + strings.Repeat("1", 5118), ""},
		{strings.Repeat("9", 4933), ""}, // past 1.19e4932
	} {
		f, ok := ParseFloat([]byte(tc.in))
		got := ""
		switch {
		case !ok:
		case f.IsInf() && f.Sign() > 0:
			got = "inf"
		case f.IsInf():
			got = "-inf"
		default:
			got = string(AppendFloat(nil, f))
		}
		want := tc.want
		if len(want) > 30 && ok {
			// A long number keeps its first 64 bits: compare its size.
			if len(got) != len(want) {
				t.Errorf("ParseFloat(%.20q...) printed %d digits, want %d", tc.in, len(got), len(want))
			}
			continue
		}
		if got != want {
			t.Errorf("ParseFloat(%.40q) = %q, want %q", tc.in, got, want)
		}
	}
}

// TestParseFloatRange (R7): a long double's limits: finite below 2^16384,
// down to the subnormal 2^-16445; what rounds to zero is refused.
func TestParseFloatRange(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"0x1p16383", true},
		{"0x1.fffffffffffffffep16383", true},
		{"0x1p16384", false},
		{"0x1p-16445", true},
		{"0x1.8p-16446", true}, // rounds up to the smallest subnormal
		{"0x1p-16446", false},  // halfway: rounds to even, zero
		{"0x1p-16447", false},
		{"0", true},
		{"0e99999", true},
	} {
		if _, ok := ParseFloat([]byte(tc.in)); ok != tc.ok {
			t.Errorf("ParseFloat(%q) ok = %v, want %v", tc.in, ok, tc.ok)
		}
	}
}

// TestAppendFloat (R7): ld2string's human form: 17 decimals, trailing
// zeros and dot dropped, "-0" as "0".
func TestAppendFloat(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"0.1", "0.1"},
		{"10.5", "10.5"},
		{"3", "3"},
		{"-0", "0"},
		{"1e-20", "0"},
		{"-1e-20", "0"},
	} {
		f, _, err := big.ParseFloat(tc.in, 10, LongDoublePrec, big.ToNearestEven)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(AppendFloat([]byte("x"), f)); got != "x"+tc.want {
			t.Errorf("AppendFloat(%s) = %q, want %q", tc.in, got[1:], tc.want)
		}
	}
}

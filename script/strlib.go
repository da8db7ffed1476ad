package script

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Lua 5.1's string.lower, string.upper and string.format (lstrlib.c
// str_lower, str_upper, str_format) where gopher-lua's differ: its lower
// and upper map Unicode case and replace bytes that are not UTF-8 (a
// binary value came back longer), and its format goes through Go's fmt
// (%c wrote UTF-8, %s of a number Go's shortest form, a wrong argument
// printed "%!d(...)" where Lua raises an error).

// strLower is string.lower: A-Z to a-z, every other byte as it is (the C
// locale's tolower).
func strLower(L *lua.LState) int { return strCase(L, "lower", 'A', 'Z', 'a'-'A') }

// strUpper is string.upper: a-z to A-Z.
func strUpper(L *lua.LState) int { return strCase(L, "upper", 'a', 'z', 'A'-'a') }

func strCase(L *lua.LState, fn string, lo, hi byte, delta int) int {
	s := []byte(checkLString(L, 1, fn))
	for i, c := range s {
		if c >= lo && c <= hi {
			s[i] = byte(int(c) + delta)
		}
	}
	L.Push(lua.LString(s))
	return 1
}

// checkLString is luaL_checklstring: a string, or a number as
// lua_tolstring writes it ("%.14g").
func checkLString(L *lua.LState, n int, fn string) string {
	switch v := L.Get(n).(type) {
	case lua.LString:
		return string(v)
	case lua.LNumber:
		return numberString(float64(v))
	}
	argTypeError(L, n, fn, "string")
	return ""
}

// checkNumber is luaL_checknumber: a number, or a string that reads as
// one (str2d).
func checkNumber(L *lua.LState, n int, fn string) float64 {
	switch v := L.Get(n).(type) {
	case lua.LNumber:
		return float64(v)
	case lua.LString:
		if f, ok := str2d(string(v)); ok {
			return f
		}
	}
	argTypeError(L, n, fn, "number")
	return 0
}

// argTypeError raises luaL_typerror's "bad argument #n to 'fn' (want
// expected, got type)".
func argTypeError(L *lua.LState, n int, fn, want string) {
	got := "no value"
	if n <= L.GetTop() {
		got = L.Get(n).Type().String()
	}
	L.RaiseError("bad argument #%d to '%s' (%s expected, got %s)", n, fn, want, got)
}

// numberString is lua_number2str, "%.14g", with C's spellings of the
// infinities and NaNs.
func numberString(f float64) string {
	switch {
	case math.IsNaN(f) && math.Signbit(f):
		return "-nan"
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', 14, 64)
}

// The flags a conversion may have (lstrlib.c FLAGS); scanformat refuses
// a run of more than five (sizeof(FLAGS) - 1).
const formatFlags = "-+ #0"

// strFormat is string.format: each item formatted as glibc's sprintf
// formats it with the same flags, width (2 digits at most) and precision
// (2 digits at most), and cut at its first NUL as lstrlib.c's strlen cuts
// it; %q quoted as addquoted; %s of 100 bytes or more without a
// precision copied whole.
func strFormat(L *lua.LState) int {
	f := checkLString(L, 1, "format")
	top, arg := L.GetTop(), 1
	var b []byte
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			b = append(b, f[i])
			continue
		}
		i++
		if i < len(f) && f[i] == '%' {
			b = append(b, '%')
			continue
		}
		if arg++; arg > top {
			L.RaiseError("bad argument #%d to 'format' (no value)", arg)
		}
		spec, next := scanFormat(L, f, i)
		i = next
		conv := byte(0)
		if i < len(f) {
			conv = f[i]
		}
		var item []byte
		switch conv {
		case 'c':
			item = pad([]byte{byte(cInt32(checkNumber(L, arg, "format")))}, spec)
		case 'd', 'i':
			v := cInt(checkNumber(L, arg, "format"))
			if v == 0 && spec.hasPrec && spec.prec == 0 { // C: no digits, the sign flag's character
				item = pad([]byte(signOf(spec.flags)), spec)
				break
			}
			item = fmt.Appendf(nil, "%"+spec.flags+spec.width+spec.precision()+"d", v)
		case 'o', 'u', 'x', 'X':
			item = formatUnsigned(cUint(checkNumber(L, arg, "format")), conv, spec)
		case 'e', 'E', 'f', 'g', 'G':
			item = formatFloat(checkNumber(L, arg, "format"), conv, spec)
		case 'q':
			b = appendQuoted(b, checkLString(L, arg, "format"))
			continue
		case 's':
			s := checkLString(L, arg, "format")
			if !spec.hasPrec && len(s) >= 100 {
				b = append(b, s...) // lstrlib.c: no precision and a long string, kept whole
				continue
			}
			if n := strings.IndexByte(s, 0); n >= 0 {
				s = s[:n]
			}
			if spec.hasPrec && spec.prec < len(s) {
				s = s[:spec.prec]
			}
			item = pad([]byte(s), spec)
		default:
			name := ""
			if conv != 0 {
				name = string(conv)
			}
			L.RaiseError("invalid option '%%%s' to 'format'", name)
		}
		if n := bytes.IndexByte(item, 0); n >= 0 {
			item = item[:n]
		}
		b = append(b, item...)
	}
	L.Push(lua.LString(b))
	return 1
}

// formatUnsigned is sprintf's %o, %u, %x or %X of v: Go's fmt without
// the sign flags (C ignores them for an unsigned conversion), with C's
// "0x" counted in a zero-padded width, no "0x" before a zero, and no
// digits for a zero at precision 0 ("0" for %#o).
func formatUnsigned(v uint64, conv byte, s formatSpec) []byte {
	flags := strings.NewReplacer("+", "", " ", "").Replace(s.flags)
	sharp := strings.Contains(flags, "#")
	switch {
	case v == 0 && s.hasPrec && s.prec == 0:
		if sharp && conv == 'o' {
			return pad([]byte("0"), s)
		}
		return pad(nil, s)
	case v == 0 && (conv == 'x' || conv == 'X'):
		flags = strings.ReplaceAll(flags, "#", "")
	}
	width := s.width
	if w, _ := strconv.Atoi(width); sharp && (conv == 'x' || conv == 'X') && v != 0 &&
		strings.Contains(flags, "0") && !strings.Contains(flags, "-") && !s.hasPrec && w > 2 {
		width = strconv.Itoa(w - 2) // Go pads the digits, then adds "0x"
	}
	verb := conv
	if conv == 'u' {
		verb = 'd'
	}
	return fmt.Appendf(nil, "%"+flags+width+s.precision()+string(verb), v)
}

// signOf is the sign a '+' or ' ' flag gives a non-negative number.
func signOf(flags string) string {
	switch {
	case strings.Contains(flags, "+"):
		return "+"
	case strings.Contains(flags, " "):
		return " "
	}
	return ""
}

// formatSpec is one conversion's flags, width and precision.
type formatSpec struct {
	flags, width string
	hasPrec      bool
	prec         int
}

// precision is the spec's ".N" for a Go format, "" without one.
func (s formatSpec) precision() string {
	if !s.hasPrec {
		return ""
	}
	return "." + strconv.Itoa(s.prec)
}

// scanFormat reads the flags, width and precision from f[i:] as
// lstrlib.c scanformat does, returning them and the index of the
// conversion letter.
func scanFormat(L *lua.LState, f string, i int) (formatSpec, int) {
	var s formatSpec
	start := i
	for i < len(f) && strings.IndexByte(formatFlags, f[i]) >= 0 {
		i++
	}
	if i-start > len(formatFlags) {
		L.RaiseError("invalid format (repeated flags)")
	}
	s.flags = f[start:i]
	digits := func() string {
		d := i
		for n := 0; n < 2 && i < len(f) && f[i] >= '0' && f[i] <= '9'; n++ {
			i++
		}
		return f[d:i]
	}
	s.width = digits()
	if i < len(f) && f[i] == '.' {
		i++
		s.hasPrec = true
		s.prec, _ = strconv.Atoi(digits()) // "" (a lone '.') is 0, as in C
	}
	if i < len(f) && f[i] >= '0' && f[i] <= '9' {
		L.RaiseError("invalid format (width or precision too long)")
	}
	return s, i
}

// pad right-justifies b in the spec's width with spaces, or left-justifies
// it with the '-' flag (sprintf's %c and %s).
func pad(b []byte, s formatSpec) []byte {
	w, _ := strconv.Atoi(s.width)
	if len(b) >= w {
		return b
	}
	fill := bytes.Repeat([]byte{' '}, w-len(b))
	if strings.Contains(s.flags, "-") {
		return append(b, fill...)
	}
	return append(fill, b...)
}

// formatFloat is sprintf's %e, %E, %f, %g or %G of f: Go's fmt with C's
// default precision of 6 for %g (Go's is the shortest), and C's "inf" and
// "nan" (upper-case for %E and %G, "-nan" for a NaN with its sign bit)
// padded with spaces.
func formatFloat(f float64, conv byte, s formatSpec) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		word := "inf"
		if math.IsNaN(f) {
			word = "nan"
		}
		if conv == 'E' || conv == 'G' {
			word = strings.ToUpper(word)
		}
		if math.Signbit(f) {
			word = "-" + word
		} else {
			word = signOf(s.flags) + word
		}
		return pad([]byte(word), s)
	}
	prec := s.precision()
	if !s.hasPrec && (conv == 'g' || conv == 'G') {
		prec = ".6"
	}
	return fmt.Appendf(nil, "%"+s.flags+s.width+prec+string(conv), f)
}

// cInt is a double converted to a C long as x86-64 converts it
// (cvttsd2si): truncated, and LONG_MIN when it does not fit or is a NaN.
func cInt(f float64) int64 {
	if math.IsNaN(f) || f >= 1<<63 || f < -(1<<63) {
		return math.MinInt64
	}
	return int64(f)
}

// cInt32 is a double converted to a C int as x86-64 converts it: INT_MIN
// when it does not fit.
func cInt32(f float64) int32 {
	if math.IsNaN(f) || f >= 1<<31 || f < -(1<<31) {
		return math.MinInt32
	}
	return int32(f)
}

// cUint is a double converted to a C unsigned long as gcc converts it on
// x86-64: below 2^63 as cInt (a negative value wraps), from 2^63 as cInt
// of f - 2^63 with the top bit flipped.
func cUint(f float64) uint64 {
	if f >= 1<<63 {
		return uint64(cInt(f-(1<<63))) ^ (1 << 63)
	}
	return uint64(cInt(f))
}

// appendQuoted is lstrlib.c addquoted: s in double quotes, '"', '\\' and
// a line feed escaped with a backslash, "\r" and "\000" for a carriage
// return and a NUL, every other byte as it is.
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\', '\n':
			b = append(b, '\\', c)
		case '\r':
			b = append(b, `\r`...)
		case 0:
			b = append(b, `\000`...)
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

package script

import (
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/tiercache/tiercache/resp"
	lua "github.com/yuin/gopher-lua"
)

// Numbers as Lua 5.1 and Redis read and write them, where gopher-lua's
// differ.

// tonumber is Lua 5.1's tonumber (lbaselib.c luaB_tonumber): in base 10 a
// string is read as luaO_str2d reads it, strtod's syntax with spaces
// around (exponents, hexadecimal, inf and nan; gopher-lua reads a string
// with no '.' as an int64 and answers nil for "1e2" or 2^63); other bases
// are gopher-lua's.
func tonumber(base lua.LGFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		s, ok := L.Get(1).(lua.LString)
		if !ok || L.OptInt(2, 10) != 10 {
			return base(L)
		}
		if n, ok := str2d(string(s)); ok {
			L.Push(lua.LNumber(n))
		} else {
			L.Push(lua.LNil)
		}
		return 1
	}
}

// str2d reads s as Lua 5.1's luaO_str2d does with glibc's strtod: C
// spaces around, a decimal or hexadecimal number (a hexadecimal one may
// have no exponent), infinities and NaNs; a number too large is an
// infinity.
func str2d(s string) (float64, bool) {
	s = strings.Trim(s, " \t\n\v\f\r")
	if s == "" || strings.ContainsAny(s, "_ \t\n\v\f\r") { // Go's digit separators are not C's
		return 0, false
	}
	if (s[0] == '+' || s[0] == '-') && strings.EqualFold(s[1:], "nan") { // ParseFloat takes no sign there
		sign := 1.0
		if s[0] == '-' {
			sign = -1
		}
		return math.Copysign(math.NaN(), sign), true
	}
	digits := strings.TrimLeft(s, "+-")
	if len(digits) > 1 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X') && !strings.ContainsAny(digits, "pP") {
		s += "p0" // strtod's hexadecimal needs no exponent, ParseFloat's does
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return f, true
}

// appendNumberArg appends n as Redis formats a number a script passes to
// redis.call ("%.17g", script_lua.c luaRedisGenericCommand): as resp's
// doubles, but a NaN with its sign bit set as C prints it.
func appendNumberArg(b []byte, n float64) []byte {
	if math.IsNaN(n) && math.Signbit(n) {
		return append(b, "-nan"...)
	}
	return resp.AppendDouble(b, n)
}

// random is math.random and math.randomseed as Lua 5.1's (lmathlib.c
// math_random, math_randomseed) on a generator of the interpreter's own:
// gopher-lua's use math/rand's global source, which rand.Seed no longer
// seeds (Go 1.24), so a seeded script's numbers did not repeat.
type random struct {
	r *rand.Rand
}

func newRandom() *random {
	return &random{r: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))}
}

func (g *random) seed(L *lua.LState) int {
	g.r = rand.New(rand.NewPCG(uint64(L.CheckInt64(1)), 0))
	return 0
}

func (g *random) random(L *lua.LState) int {
	r := g.r.Float64()
	switch L.GetTop() {
	case 0:
		L.Push(lua.LNumber(r))
	case 1:
		u := L.CheckInt(1)
		if u < 1 {
			L.ArgError(1, "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u)) + 1))
	case 2:
		l, u := L.CheckInt(1), L.CheckInt(2)
		if l > u {
			L.ArgError(2, "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u-l+1)) + float64(l)))
	default:
		L.RaiseError("wrong number of arguments")
	}
	return 1
}

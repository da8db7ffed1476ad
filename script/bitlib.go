package script

import (
	"math"
	"math/bits"

	lua "github.com/yuin/gopher-lua"
)

// The bit library Redis loads for scripts: Lua BitOp 1.0 (bit.c, its API
// at bitop.luajit.org/api.html), written here after its documented
// semantics. Every operation works on 32-bit integers and returns a
// signed one as a Lua number.

// bitFunctions are the library's functions by name.
var bitFunctions = map[string]lua.LGFunction{
	"tobit":   func(L *lua.LState) int { return bitReturn(L, bitArg(L, 1, "tobit")) },
	"bnot":    func(L *lua.LState) int { return bitReturn(L, ^bitArg(L, 1, "bnot")) },
	"bswap":   func(L *lua.LState) int { return bitReturn(L, bits.ReverseBytes32(bitArg(L, 1, "bswap"))) },
	"band":    bitFold("band", func(a, b uint32) uint32 { return a & b }),
	"bor":     bitFold("bor", func(a, b uint32) uint32 { return a | b }),
	"bxor":    bitFold("bxor", func(a, b uint32) uint32 { return a ^ b }),
	"lshift":  bitShift("lshift", func(b uint32, n uint) uint32 { return b << n }),
	"rshift":  bitShift("rshift", func(b uint32, n uint) uint32 { return b >> n }),
	"arshift": bitShift("arshift", func(b uint32, n uint) uint32 { return uint32(int32(b) >> n) }),
	"rol":     bitShift("rol", func(b uint32, n uint) uint32 { return bits.RotateLeft32(b, int(n)) }),
	"ror":     bitShift("ror", func(b uint32, n uint) uint32 { return bits.RotateLeft32(b, -int(n)) }),
	"tohex":   bitToHex,
}

// openBit makes the bit table.
func openBit(L *lua.LState) *lua.LTable {
	t := L.CreateTable(0, len(bitFunctions))
	for name, fn := range bitFunctions {
		t.RawSetString(name, L.NewFunction(fn))
	}
	return t
}

// bitArg is bit.c's barg: argument i as a number (lua_tonumber: a string
// that reads as one too), brought to 32 bits as Lua BitOp does it, by
// adding 2^52 + 2^51 and keeping the low 32 bits of the double's
// representation (so a fraction rounds to the nearest integer, a tie to
// the even one, and a number is taken modulo 2^32). Anything else is a
// type error.
func bitArg(L *lua.LState, i int, fn string) uint32 {
	var f float64
	ok := false
	switch v := L.Get(i).(type) {
	case lua.LNumber:
		f, ok = float64(v), true
	case lua.LString:
		f, ok = str2d(string(v))
	}
	b := uint32(math.Float64bits(f + 6755399441055744.0))
	if b == 0 && !ok {
		argTypeError(L, i, fn, "number")
	}
	return b
}

// bitReturn pushes b as a signed 32-bit number.
func bitReturn(L *lua.LState, b uint32) int {
	L.Push(lua.LNumber(int32(b)))
	return 1
}

// bitFold is band, bor or bxor: every argument combined, read from the
// last to the first as bit.c reads them.
func bitFold(fn string, op func(a, b uint32) uint32) lua.LGFunction {
	return func(L *lua.LState) int {
		b := bitArg(L, 1, fn)
		for i := L.GetTop(); i > 1; i-- {
			b = op(b, bitArg(L, i, fn))
		}
		return bitReturn(L, b)
	}
}

// bitShift is a shift or rotation of argument 1 by argument 2 modulo 32.
func bitShift(fn string, op func(b uint32, n uint) uint32) lua.LGFunction {
	return func(L *lua.LState) int {
		b, n := bitArg(L, 1, fn), uint(bitArg(L, 2, fn)&31)
		return bitReturn(L, op(b, n))
	}
}

// bitToHex is bit.tohex(x [, n]): the low n hex digits of x (8 by
// default, at most 8), upper-case for a negative n.
func bitToHex(L *lua.LState) int {
	b := bitArg(L, 1, "tohex")
	n := int32(8)
	if L.GetTop() >= 2 {
		n = int32(bitArg(L, 2, "tohex"))
	}
	digits := "0123456789abcdef"
	if n < 0 {
		n, digits = -n, "0123456789ABCDEF"
	}
	n = max(min(n, 8), 0) // -(-2^31) stays negative: no digits (bit.c would fail)
	buf := make([]byte, n)
	for i := n - 1; i >= 0; i-- {
		buf[i] = digits[b&15]
		b >>= 4
	}
	L.Push(lua.LString(buf))
	return 1
}

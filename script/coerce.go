package script

import (
	lua "github.com/yuin/gopher-lua"
)

// Lua 5.1's library functions read a numeric argument with
// luaL_checknumber, luaL_checkint or luaL_optint, which take a string
// that reads as a number ("2"); gopher-lua's CheckInt and OptInt take
// only numbers, so string.sub(ARGV[1], 1, ARGV[2]) or math.random(ARGV[1])
// failed. The functions below have such arguments converted before they run,
// where they are strings that read as numbers (str2d); other strings are
// left for the function to refuse.

// numericArgs are the functions whose arguments from..to (0: to the last)
// are numbers in Lua 5.1 (lstrlib.c, ltablib.c, lmathlib.c, lbaselib.c).
var numericArgs = []struct {
	lib, name string
	from, to  int
}{
	{lua.StringLibName, "byte", 2, 3},
	{lua.StringLibName, "char", 1, 0},
	{lua.StringLibName, "find", 3, 3},
	{lua.StringLibName, "gsub", 4, 4},
	{lua.StringLibName, "rep", 2, 2},
	{lua.StringLibName, "sub", 2, 3},
	{lua.TabLibName, "concat", 3, 4},
	{lua.TabLibName, "remove", 2, 2},
	{lua.MathLibName, "random", 1, 2},
	{lua.MathLibName, "randomseed", 1, 1},
	{lua.MathLibName, "ldexp", 2, 2},
	{"", "unpack", 2, 3},
	{"", "tonumber", 2, 2},
}

// coerceLibraries wraps the functions of numericArgs, and table.insert
// and select, whose numeric arguments depend on the others, in the tables
// of real (the globals, before they are protected). string.format is
// strlib.go's, which reads its numbers as luaL_checknumber.
func coerceLibraries(L *lua.LState, real *lua.LTable) {
	table := func(lib string) *lua.LTable {
		if lib == "" {
			return real
		}
		return real.RawGetString(lib).(*lua.LTable)
	}
	wrap := func(lib, name string, args func(L *lua.LState) (from, to int)) {
		t := table(lib)
		fn := t.RawGetString(name).(*lua.LFunction).GFunction
		t.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			from, to := args(L)
			if to == 0 || to > L.GetTop() {
				to = L.GetTop()
			}
			for i := from; i <= to; i++ {
				toNumber(L, i)
			}
			return fn(L)
		}))
	}
	for _, f := range numericArgs {
		wrap(f.lib, f.name, func(*lua.LState) (int, int) { return f.from, f.to })
	}
	// table.insert(t, pos, v): pos only when there are three.
	wrap(lua.TabLibName, "insert", func(L *lua.LState) (int, int) {
		if L.GetTop() == 3 {
			return 2, 2
		}
		return 0, -1
	})
	// select(n, ...): n unless it is "#".
	wrap("", "select", func(*lua.LState) (int, int) { return 1, 1 })
}

// toNumber replaces argument i with its number when it is a string that
// reads as one.
func toNumber(L *lua.LState, i int) {
	if s, ok := L.Get(i).(lua.LString); ok {
		if n, ok := str2d(string(s)); ok {
			L.Replace(i, lua.LNumber(n))
		}
	}
}

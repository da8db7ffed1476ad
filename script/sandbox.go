package script

import (
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The globals a script sees, as redis-server 7.0 has them: the base
// functions below (gcinfo and collectgarbage are gc.go's), and the
// libraries string, table, math, coroutine, cjson, bit and redis.
// dofile, loadfile, print, require, module, getfenv, setfenv, newproxy,
// io, os, package and debug are not there. struct and cmsgpack, which
// Redis compiles in, are missing: no maintained Go library gives them for
// gopher-lua.
var baseAllowed = []string{
	"xpcall", "tostring", "setmetatable", "next", "assert", "tonumber",
	"rawequal", "getmetatable", "rawset", "pcall", "type",
	"select", "unpack", "pairs", "rawget", "loadstring", "ipairs",
	"load", "error", "_VERSION",
}

var libraries = []struct {
	name string
	open lua.LGFunction
}{
	{lua.TabLibName, lua.OpenTable},
	{lua.StringLibName, lua.OpenString},
	{lua.MathLibName, lua.OpenMath},
	{lua.CoroutineLibName, lua.OpenCoroutine},
}

// Redis's texts for a script that touches what it may not.
const (
	errReadonly     = "Attempt to modify a readonly table"
	errNoSuchGlobal = "Script attempted to access nonexistent global variable '%s'"
)

// sandbox is one interpreter state built for scripts. Scripts read the
// globals through proxies: _G and every library table are empty tables
// whose metatable reads the real table and refuses writes with Redis 7's
// "Attempt to modify a readonly table" (Redis patches its Lua with
// read-only tables; gopher-lua has none), reading a global that does not
// exist raises Redis's error, and rawset, setmetatable and table.insert
// (the library's only functions that write a table raw) refuse the
// proxies, so they stay empty; getmetatable("") is a proxy too. intact
// checks after each run what a script may change past them (the globals,
// the environment, which metatable strings have); the engine builds a new
// state when one changed.
type sandbox struct {
	L         *lua.LState
	globals   *lua.LTable          // the proxy scripts see as _G and their environment
	real      *lua.LTable          // the globals behind it
	proxies   map[*lua.LTable]bool // the read-only proxies, for rawset, setmetatable and table.insert
	strMeta   *lua.LTable
	strView   *lua.LTable // its read-only proxy, what getmetatable("") answers
	strProxy  *lua.LTable
	redis     *lua.LTable // the real redis table (the engine adds its functions)
	errorFunc *lua.LFunction
	hidden    *lua.LTable // getmetatable of a proxy
	// keys and argv are KEYS and ARGV, refilled by each run while the
	// last run left them as it found them (argTable.reuse).
	keys, argv argTable
	// oks are {ok="OK"} tables, the reply most commands give, handed out
	// again in later runs while unchanged (okReply); okUsed counts those
	// this run has.
	oks    []*lua.LTable
	okUsed int
}

// maxOKs bounds the {ok="OK"} tables kept for later runs.
const maxOKs = 16

// okReply returns a {ok="OK"} table no other Lua value of this run is. A
// table of an earlier run is reused when that run left it as it was made
// (it could not keep it: see argTable); a table of this run never is.
func (sb *sandbox) okReply() *lua.LTable {
	if sb.okUsed < len(sb.oks) {
		t := sb.oks[sb.okUsed]
		if !isOK(t) {
			t = field(sb.L, "ok", luaOK)
			sb.oks[sb.okUsed] = t
		}
		sb.okUsed++
		return t
	}
	t := field(sb.L, "ok", luaOK)
	if len(sb.oks) < maxOKs {
		sb.oks = append(sb.oks, t)
		sb.okUsed++
	}
	return t
}

// isOK reports that t is {ok="OK"}, with no metatable and no other key,
// not even one set and deleted since (tableShape).
func isOK(t *lua.LTable) bool {
	array, keys, ok := tableShape(t)
	return ok && t.Metatable == lua.LNil && array == 0 && keys == 1 && t.RawGetString("ok") == luaOK
}

func newSandbox(api map[string]lua.LGFunction, consts map[string]lua.LValue, maxString int) *sandbox {
	L := lua.NewState(lua.Options{SkipOpenLibs: true, CallStackSize: 1024, RegistrySize: 1024 * 20, RegistryMaxSize: 1024 * 1024})
	sb := &sandbox{L: L, proxies: map[*lua.LTable]bool{}}
	// Open the base library into a scratch table and keep what Redis allows.
	L.Push(L.NewFunction(lua.OpenBase))
	L.Push(lua.LString(lua.BaseLibName))
	L.Call(1, 0)
	opened := L.G.Global
	real := L.NewTable()
	for _, name := range baseAllowed {
		real.RawSetString(name, opened.RawGetString(name))
	}
	for _, lib := range libraries {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
		real.RawSetString(lib.name, opened.RawGetString(lib.name))
	}
	// string.rep bounded: a script must not make the process allocate
	// without limit (Lua 5.1's own refusal text).
	opened.RawGetString(lua.StringLibName).(*lua.LTable).RawSetString("rep", L.NewFunction(func(L *lua.LState) int {
		s, n := L.CheckString(1), L.CheckInt(2)
		if n <= 0 || s == "" {
			L.Push(lua.LString(""))
			return 1
		}
		if n > maxString/len(s) {
			L.RaiseError("resulting string too large")
		}
		L.Push(lua.LString(strings.Repeat(s, n)))
		return 1
	}))
	for name, fn := range map[string]lua.LGFunction{"lower": strLower, "upper": strUpper, "format": strFormat} {
		opened.RawGetString(lua.StringLibName).(*lua.LTable).RawSetString(name, L.NewFunction(fn)) // strlib.go
	}
	real.RawSetString("cjson", newCjson(L.NewUserData()).table(L))
	real.RawSetString("bit", openBit(L)) // bitlib.go
	// table.insert writes raw, as rawset does: it refuses the proxies too.
	tab := opened.RawGetString(lua.TabLibName).(*lua.LTable)
	insert := tab.RawGetString("insert").(*lua.LFunction).GFunction
	tab.RawSetString("insert", L.NewFunction(func(L *lua.LState) int {
		if t, ok := L.Get(1).(*lua.LTable); ok && sb.proxies[t] {
			L.Error(lua.LString(errReadonly), 0)
		}
		return insert(L)
	}))
	sb.redis = L.NewTable()
	for name, fn := range api {
		sb.redis.RawSetString(name, L.NewFunction(fn))
	}
	for name, v := range consts {
		sb.redis.RawSetString(name, v)
	}
	real.RawSetString("redis", sb.redis)
	real.RawSetString("pcall", L.NewFunction(luaPcall))
	real.RawSetString("error", L.NewFunction(luaError))
	real.RawSetString("collectgarbage", L.NewFunction(collectgarbage))
	real.RawSetString("gcinfo", L.NewFunction(gcinfo))
	real.RawSetString("tonumber", L.NewFunction(tonumber(opened.RawGetString("tonumber").(*lua.LFunction).GFunction)))
	rnd, mathLib := newRandom(), real.RawGetString(lua.MathLibName).(*lua.LTable)
	mathLib.RawSetString("random", L.NewFunction(rnd.random))
	mathLib.RawSetString("randomseed", L.NewFunction(rnd.seed))
	coerceLibraries(L, real)
	real.RawSetString("rawset", L.NewFunction(sb.rawset))
	real.RawSetString("setmetatable", L.NewFunction(sb.setmetatable))
	sb.real = real

	// Every library table is seen through a read-only proxy.
	real.ForEach(func(k, v lua.LValue) {
		if t, ok := v.(*lua.LTable); ok {
			real.RawSet(k, sb.protect(t))
		}
	})
	str := real.RawGetString(lua.StringLibName).(*lua.LTable)
	sb.strProxy = str
	sb.strMeta = L.CreateTable(0, 2)
	sb.strMeta.RawSetString("__index", str)
	// getmetatable("") answers a read-only view of it, as Redis 7's is
	// read-only: no script can change the string metatable.
	sb.strView = sb.protect(sb.strMeta)
	sb.strMeta.RawSetString("__metatable", sb.strView)
	L.SetMetatable(lua.LString(""), sb.strMeta)

	missing := L.NewTable()
	missing.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(errNoSuchGlobal, L.Get(2).String())
		return 0
	}))
	L.SetMetatable(real, missing)
	sb.globals = sb.protect(real)
	real.RawSetString("_G", sb.globals)
	L.G.Global = sb.globals
	L.Env = sb.globals
	sb.errorFunc = L.NewFunction(errorHandler)
	return sb
}

// protect returns a read-only proxy of t.
func (sb *sandbox) protect(t *lua.LTable) *lua.LTable {
	L := sb.L
	p := L.NewTable()
	mt := L.CreateTable(0, 3) // a small Go map: its keys are found without hashing
	mt.RawSetString("__index", t)
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(errReadonly)
		return 0
	}))
	if sb.hidden == nil { // what getmetatable answers for a proxy: an empty read-only table
		sb.hidden = L.NewTable()
		hm := L.NewTable()
		hm.RawSetString("__newindex", mt.RawGetString("__newindex"))
		hm.RawSetString("__metatable", sb.hidden)
		L.SetMetatable(sb.hidden, hm)
		sb.proxies[sb.hidden] = true
	}
	mt.RawSetString("__metatable", sb.hidden)
	L.SetMetatable(p, mt)
	sb.proxies[p] = true
	return p
}

// rawset is Lua's rawset, refusing the read-only tables.
func (sb *sandbox) rawset(L *lua.LState) int {
	t := L.CheckTable(1)
	if sb.proxies[t] {
		L.Error(lua.LString(errReadonly), 0) // no position: Redis raises it from the C API
	}
	L.RawSet(t, L.CheckAny(2), L.CheckAny(3))
	return 0
}

// setmetatable is Lua's setmetatable, refusing the read-only tables. Its
// first argument is a table, as Lua 5.1's (lbaselib.c luaB_setmetatable):
// gopher-lua's would set the metatable every nil, boolean, number or
// function shares, which later scripts would see.
func (sb *sandbox) setmetatable(L *lua.LState) int {
	t, ok := L.Get(1).(*lua.LTable)
	if !ok {
		got := "no value"
		if L.GetTop() > 0 {
			got = L.Get(1).Type().String()
		}
		L.RaiseError("bad argument #1 to 'setmetatable' (table expected, got %s)", got)
	}
	if sb.proxies[t] {
		L.Error(lua.LString(errReadonly), 0)
	}
	L.CheckTypes(2, lua.LTNil, lua.LTTable)
	if mt, ok := L.GetMetatable(L.Get(1)).(*lua.LTable); ok && mt.RawGetString("__metatable") != lua.LNil {
		L.RaiseError("cannot change a protected metatable")
	}
	L.SetMetatable(L.Get(1), L.Get(2))
	L.SetTop(1)
	return 1
}

// intact reports that no run changed what every script shares and the
// proxies do not guard: the globals, the environment and the string
// metatable.
func (sb *sandbox) intact() bool {
	L := sb.L
	return L.G.Global == sb.globals && L.Env == sb.globals && L.GetMetatable(lua.LString("")) == sb.strView
}

// argTable is KEYS or ARGV. A run's table is filled in place for the
// next run of as many strings when the script left it a plain list of
// that length (no metatable, nothing past its end, no other key): then it
// is what a new table would be, and no script can hold it past its run
// (the globals and the libraries are read-only, intact checks the rest).
type argTable struct {
	t *lua.LTable
	n int
}

// fill makes t hold ss as a list, the global name of real.
func (a *argTable) fill(L *lua.LState, real *lua.LTable, name string, ss [][]byte) {
	if a.t != nil && a.n == len(ss) && a.reusable() {
		for i, s := range ss {
			if old, ok := a.t.RawGetInt(i + 1).(lua.LString); !ok || string(old) != string(s) {
				a.t.RawSetInt(i+1, lua.LString(s))
			}
		}
		return
	}
	a.t, a.n = L.CreateTable(len(ss), 0), len(ss)
	for i, s := range ss {
		a.t.RawSetInt(i+1, lua.LString(s))
	}
	real.RawSetString(name, a.t)
}

// reusable reports that the table has no metatable, no hash key (not
// even one set and deleted since) and an array part no longer than n:
// the next fill's entries 1..n are all it holds.
func (a *argTable) reusable() bool {
	array, keys, ok := tableShape(a.t)
	return ok && a.t.Metatable == lua.LNil && keys == 0 && array <= a.n
}

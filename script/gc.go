package script

import (
	"runtime"
	"runtime/metrics"

	lua "github.com/yuin/gopher-lua"
)

// collectgarbage and gcinfo as Lua 5.1 answers them (lbaselib.c
// luaB_collectgarbage, luaB_gcinfo): gopher-lua's collectgarbage answers
// nothing whatever the option, and it has no gcinfo. A script's values
// live on the Go heap: "count" and gcinfo give the Go heap's live
// objects (the whole process's, the nearest measure there is), "collect"
// runs a Go collection, and the tuning options do nothing.
func collectgarbage(L *lua.LState) int {
	switch opt := L.OptString(1, "collect"); opt {
	case "collect":
		runtime.GC()
		L.Push(lua.LNumber(0))
	case "count":
		L.Push(lua.LNumber(float64(heapBytes()) / 1024))
	case "step":
		L.Push(lua.LFalse)
	case "stop", "restart":
		L.Push(lua.LNumber(0))
	case "setpause", "setstepmul":
		L.Push(lua.LNumber(200)) // the previous value: Lua 5.1's defaults (luaconf.h LUAI_GCPAUSE, LUAI_GCMUL)
	default:
		L.ArgError(1, "invalid option '"+opt+"'")
	}
	return 1
}

func gcinfo(L *lua.LState) int {
	L.Push(lua.LNumber(heapBytes() / 1024))
	return 1
}

// heapBytes is the Go heap's bytes in objects, read without stopping the
// world (runtime.ReadMemStats would).
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

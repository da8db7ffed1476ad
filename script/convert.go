package script

import (
	"bytes"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/tiercache/tiercache/resp"
)

// The conversions between replies and Lua values, as Redis 7.0 makes
// them (script_lua.c redisProtocolToLuaType_* and luaReplyToRedisReply).

// maxDepth bounds the nesting of a reply a script returns (a table that
// contains itself would never end); past it the reply is Redis's
// "reached lua stack limit".
const maxDepth = 1000

// toLua converts the one RESP reply at the start of b (RESP2 or RESP3, as
// the server wrote it) to a Lua value and returns the bytes after it.
// Status replies become {ok=...}, errors {err=...}, nulls false in RESP2
// and nil in RESP3, maps {map={...}}, sets {set={k=true}}, doubles
// {double=n}, big numbers {big_number=s}, verbatim strings
// {verbatim_string={format=..., string=...}}.
func toLua(L *lua.LState, b []byte) (lua.LValue, []byte) {
	if len(b) < 3 {
		return lua.LNil, nil
	}
	i := bytes.Index(b, []byte("\r\n"))
	if i < 0 {
		return lua.LNil, nil
	}
	line, rest := b[1:i], b[i+2:]
	switch b[0] {
	case '+':
		if string(line) == "OK" {
			return field(L, "ok", luaOK), rest
		}
		return field(L, "ok", lua.LString(line)), rest
	case '-':
		return replyErrTable(L, string(line)), rest
	case ':':
		return lua.LNumber(atoi(line)), rest
	case '$', '=':
		n := int(atoi(line))
		if n < 0 {
			return lua.LFalse, rest
		}
		if n+2 > len(rest) {
			return lua.LNil, nil
		}
		s := rest[:n]
		rest = rest[n+2:]
		if b[0] == '=' && n >= 4 {
			v := L.CreateTable(0, 2)
			v.RawSetString("format", lua.LString(s[:3]))
			v.RawSetString("string", lua.LString(s[4:]))
			return field(L, "verbatim_string", v), rest
		}
		return lua.LString(s), rest
	case '*', '>', '~', '%':
		n := int(atoi(line))
		if n < 0 {
			return lua.LFalse, rest
		}
		var t *lua.LTable // sized: NewTable reserves 32 slots and a map of 32
		switch b[0] {
		case '%', '~':
			t = L.CreateTable(0, n)
		default:
			t = L.CreateTable(n, 0)
		}
		switch b[0] {
		case '%':
			for j := 0; j < n; j++ {
				var k, v lua.LValue
				k, rest = toLua(L, rest)
				v, rest = toLua(L, rest)
				t.RawSet(k, v)
			}
			return field(L, "map", t), rest
		case '~':
			for j := 0; j < n; j++ {
				var k lua.LValue
				k, rest = toLua(L, rest)
				t.RawSet(k, lua.LTrue)
			}
			return field(L, "set", t), rest
		}
		for j := 1; j <= n; j++ {
			var v lua.LValue
			v, rest = toLua(L, rest)
			t.RawSetInt(j, v)
		}
		return t, rest
	case '_':
		return lua.LNil, rest
	case '#':
		return lua.LBool(len(line) == 1 && line[0] == 't'), rest
	case ',':
		return field(L, "double", lua.LNumber(parseDouble(string(line)))), rest
	case '(':
		return field(L, "big_number", lua.LString(line)), rest
	}
	return lua.LNil, nil
}

// luaOK is "OK" in an LValue, made once: each conversion of a string to
// an interface allocates.
var luaOK lua.LValue = lua.LString("OK")

// atoi reads the decimal integer of a RESP header line the server wrote
// (an optional '-', then digits), without the string strconv would need.
func atoi(b []byte) int64 {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	var n int64
	for _, c := range b {
		n = n*10 + int64(c-'0')
	}
	if neg {
		return -n
	}
	return n
}

func parseDouble(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// field is the table {name = v}.
func field(L *lua.LState, name string, v lua.LValue) *lua.LTable {
	t := L.CreateTable(0, 1)
	t.RawSetString(name, v)
	return t
}

// errTable is the error table Redis pushes for an error reply's line
// (luaPushErrorBuff of "-CODE msg"): {err="CODE msg"}, the code ERR when
// the line has no space, CR and LF trimmed from the message.
func errTable(L *lua.LState, line string) *lua.LTable {
	return field(L, "err", lua.LString(errText(line)))
}

// replyErrTable is errTable for a command's error reply, marked
// ignore_error_stats_update as Redis marks it
// (redisProtocolToLuaType_Error): it was counted when the command
// answered it, and is not counted again as the script's reply.
func replyErrTable(L *lua.LState, line string) *lua.LTable {
	t := errTable(L, line)
	t.RawSetString(ignoreStats, lua.LTrue)
	return t
}

const ignoreStats = "ignore_error_stats_update"

// writeError writes a script's error reply, counted unless t is marked
// ignore_error_stats_update.
func writeError(w *resp.Writer, msg string, t *lua.LTable) {
	if t != nil && t.RawGetString(ignoreStats) == lua.LTrue {
		w.ErrorCounted(msg)
		return
	}
	w.Error(msg)
}

func errText(line string) string {
	code, msg, ok := strings.Cut(line, " ")
	if !ok {
		code, msg = "ERR", line
	}
	return code + " " + strings.Trim(msg, "\r\n")
}

// writeReply writes the Lua value v as the script's reply. proto is the
// script's own protocol (redis.setresp): booleans follow it, every other
// type the client's (w).
func writeReply(w *resp.Writer, v lua.LValue, proto, depth int) {
	if depth > maxDepth {
		w.Error("ERR reached lua stack limit")
		return
	}
	switch v := v.(type) {
	case lua.LString:
		w.BulkString(string(v))
	case lua.LBool:
		if proto == 2 {
			if v {
				w.Int(1)
			} else {
				w.Null()
			}
			return
		}
		w.Bool(bool(v))
	case lua.LNumber:
		w.Int(int64(float64(v)))
	case *lua.LTable:
		writeTable(w, v, proto, depth)
	default:
		w.Null()
	}
}

func writeTable(w *resp.Writer, t *lua.LTable, proto, depth int) {
	if e, ok := t.RawGetString("err").(lua.LString); ok {
		writeError(w, string(e), t)
		return
	}
	if s, ok := t.RawGetString("ok").(lua.LString); ok {
		w.Simple(strings.NewReplacer("\r", " ", "\n", " ").Replace(string(s)))
		return
	}
	if d, ok := t.RawGetString("double").(lua.LNumber); ok {
		w.Double(float64(d))
		return
	}
	if s, ok := t.RawGetString("big_number").(lua.LString); ok {
		w.BigNumber(strings.NewReplacer("\r", " ", "\n", " ").Replace(string(s)))
		return
	}
	if vt, ok := t.RawGetString("verbatim_string").(*lua.LTable); ok {
		f, okf := vt.RawGetString("format").(lua.LString)
		s, oks := vt.RawGetString("string").(lua.LString)
		if okf && oks {
			w.Verbatim(string(f), string(s))
			return
		}
	}
	if m, ok := t.RawGetString("map").(*lua.LTable); ok {
		w.Map(pairCount(m))
		for k, v := m.Next(lua.LNil); k != lua.LNil; k, v = m.Next(k) {
			writeReply(w, k, proto, depth+1)
			writeReply(w, v, proto, depth+1)
		}
		return
	}
	if s, ok := t.RawGetString("set").(*lua.LTable); ok {
		w.Set(pairCount(s))
		for k, _ := s.Next(lua.LNil); k != lua.LNil; k, _ = s.Next(k) {
			writeReply(w, k, proto, depth+1)
		}
		return
	}
	n := 0
	for t.RawGetInt(n+1) != lua.LNil {
		n++
	}
	w.Array(n)
	for j := 1; j <= n; j++ {
		writeReply(w, t.RawGetInt(j), proto, depth+1)
	}
}

// pairCount counts t's pairs in the order Next walks them (insertion
// order in gopher-lua; ForEach walks a Go map, in no fixed order).
func pairCount(t *lua.LTable) int {
	n := 0
	for k, _ := t.Next(lua.LNil); k != lua.LNil; k, _ = t.Next(k) {
		n++
	}
	return n
}

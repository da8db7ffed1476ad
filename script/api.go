package script

import (
	"fmt"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"go.uber.org/zap"
)

// The redis table scripts call (script_lua.c luaRegisterRedisAPI), with
// Redis 7.0's argument checks and error texts.

func (e *Engine) api() map[string]lua.LGFunction {
	return map[string]lua.LGFunction{
		"call":               func(L *lua.LState) int { return e.call(L, true) },
		"pcall":              func(L *lua.LState) int { return e.call(L, false) },
		"sha1hex":            sha1hex,
		"acl_check_cmd":      e.aclCheckCmd,
		"error_reply":        errorReply,
		"status_reply":       statusReply,
		"log":                e.log,
		"setresp":            e.setresp,
		"set_repl":           e.setRepl,
		"replicate_commands": func(L *lua.LState) int { L.Push(lua.LTrue); return 1 },
		"breakpoint":         func(L *lua.LState) int { L.Push(lua.LFalse); return 1 },
		"debug":              func(L *lua.LState) int { return 0 },
	}
}

func (e *Engine) consts() map[string]lua.LValue {
	num := 0
	for _, p := range strings.SplitN(e.o.Version, ".", 3) {
		n, _ := strconv.Atoi(p)
		num = num<<8 | n
	}
	return map[string]lua.LValue{
		"LOG_DEBUG": lua.LNumber(0), "LOG_VERBOSE": lua.LNumber(1), "LOG_NOTICE": lua.LNumber(2), "LOG_WARNING": lua.LNumber(3),
		"REPL_NONE": lua.LNumber(0), "REPL_AOF": lua.LNumber(1), "REPL_SLAVE": lua.LNumber(2), "REPL_REPLICA": lua.LNumber(2),
		"REPL_ALL":      lua.LNumber(3),
		"REDIS_VERSION": lua.LString(e.o.Version), "REDIS_VERSION_NUM": lua.LNumber(num),
	}
}

// raise raises Redis's error table for msg (luaPushError + luaError).
func raise(L *lua.LState, msg string) int {
	L.Error(field(L, "err", lua.LString("ERR "+msg)), 0)
	return 0
}

// call is redis.call (raise) and redis.pcall: the arguments must be
// strings or numbers (a number as "%.17g" formats it), the reply becomes
// a Lua value, and an error reply is raised by redis.call and returned
// as {err=...} by redis.pcall.
func (e *Engine) call(L *lua.LState, raiseErr bool) int {
	c := e.cur
	if c == nil {
		return raise(L, "redis.call/pcall can only be called inside a script invocation")
	}
	if msg := e.readArgs(L); msg != "" {
		return e.fail(L, raiseErr, msg)
	}
	reply := c.Command(e.args, e.proto)
	L.SetTop(0)
	var v lua.LValue
	if string(reply) == "+OK\r\n" {
		v = e.sb.okReply()
	} else {
		v, _ = toLua(L, reply)
	}
	if raiseErr && len(reply) > 0 && reply[0] == '-' {
		L.Error(v, 0)
		return 0
	}
	L.Push(v)
	return 1
}

// readArgs reads the arguments of a redis.call into e.args (luaArgsToRedisArgv),
// or returns Redis's refusal: none, or one neither a string nor a number
// (a number as "%.17g" formats it).
func (e *Engine) readArgs(L *lua.LState) string {
	n := L.GetTop()
	if n == 0 {
		return "Please specify at least one argument for this redis lib call"
	}
	e.argBuf, e.args = e.argBuf[:0], e.args[:0]
	ends := e.ends[:0]
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LNumber:
			e.argBuf = appendNumberArg(e.argBuf, float64(v))
		case lua.LString:
			e.argBuf = append(e.argBuf, v...)
		default:
			return "Lua redis lib command arguments must be strings or integers"
		}
		ends = append(ends, len(e.argBuf))
	}
	e.ends = ends
	start := 0
	for _, end := range ends {
		e.args = append(e.args, e.argBuf[start:end:end])
		start = end
	}
	return ""
}

// aclCheckCmd is redis.acl_check_cmd: true for a command the server has
// (no ACL user is ever refused one here), Redis's error for one it has not.
func (e *Engine) aclCheckCmd(L *lua.LState) int {
	c := e.cur
	if c == nil {
		return raise(L, "redis.acl_check_cmd can only be called inside a script invocation")
	}
	if msg := e.readArgs(L); msg != "" {
		return raise(L, msg)
	}
	if c.Known == nil || !c.Known(e.args[0]) {
		return raise(L, "Invalid command passed to redis.acl_check_cmd()")
	}
	L.Push(lua.LTrue)
	return 1
}

// fail pushes (pcall) or raises (call) a plain error.
func (e *Engine) fail(L *lua.LState, raiseErr bool, msg string) int {
	if raiseErr {
		return raise(L, msg)
	}
	L.SetTop(0)
	L.Push(field(L, "err", lua.LString("ERR "+msg)))
	return 1
}

func sha1hex(L *lua.LState) int {
	if L.GetTop() != 1 {
		return raise(L, "wrong number of arguments")
	}
	L.Push(lua.LString(SHA1Hex([]byte(L.ToString(1)))))
	return 1
}

// errorReply is redis.error_reply: "-" is added unless present, and the
// text is split into its code and message as an error reply's is.
func errorReply(L *lua.LState) int {
	s, ok := L.Get(1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(field(L, "err", lua.LString("ERR wrong number or type of arguments")))
		return 1
	}
	L.Push(errTable(L, strings.TrimPrefix(string(s), "-")))
	return 1
}

func statusReply(L *lua.LState) int {
	s, ok := L.Get(1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(field(L, "err", lua.LString("ERR wrong number or type of arguments")))
		return 1
	}
	L.Push(field(L, "ok", s))
	return 1
}

// log is redis.log(level, message...): the arguments joined by spaces,
// logged at the level (debug, verbose and notice as zap's debug and info).
func (e *Engine) log(L *lua.LState) int {
	n := L.GetTop()
	if n < 2 {
		return raise(L, "redis.log() requires two arguments or more.")
	}
	lv, ok := L.Get(1).(lua.LNumber)
	if !ok {
		if s, isStr := L.Get(1).(lua.LString); isStr {
			if f, err := strconv.ParseFloat(strings.TrimSpace(string(s)), 64); err == nil {
				lv, ok = lua.LNumber(f), true
			}
		}
	}
	if !ok {
		return raise(L, "First argument must be a number (log level).")
	}
	level := int(lv)
	if level < 0 || level > 3 {
		return raise(L, "Invalid debug level.")
	}
	var parts []string
	for i := 2; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString, lua.LNumber:
			parts = append(parts, v.String())
		}
	}
	msg := strings.Join(parts, " ")
	log := e.o.Logger.With(zap.String("from", "script"))
	switch level {
	case 0:
		log.Debug(msg)
	case 1, 2:
		log.Info(msg)
	default:
		log.Warn(msg)
	}
	return 0
}

func (e *Engine) setresp(L *lua.LState) int {
	if e.cur == nil {
		return raise(L, "redis.setresp can only be called inside a script invocation")
	}
	if L.GetTop() != 1 {
		return raise(L, "redis.setresp() requires one argument.")
	}
	v := int(L.ToNumber(1))
	if v != 2 && v != 3 {
		return raise(L, "RESP version must be 2 or 3.")
	}
	e.proto = v
	return 0
}

// setRepl is redis.set_repl: checked as Redis checks it; tiercache has no
// replication to steer.
func (e *Engine) setRepl(L *lua.LState) int {
	if e.cur == nil {
		return raise(L, "redis.set_repl can only be called inside a script invocation")
	}
	if L.GetTop() != 1 {
		return raise(L, "redis.set_repl() requires two arguments.")
	}
	if int(L.ToNumber(1))&^3 != 0 {
		return raise(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.")
	}
	return 0
}

// luaPcall is Redis's pcall: as Lua's, but an error table with an err
// field is returned as its text, as Redis 6 scripts expect.
func luaPcall(L *lua.LState) int {
	L.CheckAny(1)
	n := L.GetTop() - 1
	if err := L.PCall(n, lua.MultRet, nil); err != nil {
		obj := lua.LValue(lua.LString(err.Error()))
		if ae, ok := err.(*lua.ApiError); ok {
			obj = ae.Object
		}
		if t, ok := obj.(*lua.LTable); ok {
			if s, ok := t.RawGetString("err").(lua.LString); ok {
				obj = s
			}
		}
		L.SetTop(0)
		L.Push(lua.LFalse)
		L.Push(obj)
		return 2
	}
	L.Insert(lua.LTrue, 1)
	return L.GetTop()
}

// luaError is Lua 5.1's error (lbaselib.c luaB_error): a string or number
// message gets the position of the function level levels up the stack
// (luaL_where: none when that is not a Lua function, as under pcall(error,
// msg), or when there is none); gopher-lua's placed every message at the
// nearest Lua function.
func luaError(L *lua.LState) int {
	v, level := L.Get(1), L.OptInt(2, 1)
	switch m := v.(type) {
	case lua.LString, lua.LNumber:
		if level > 0 {
			if d, ok := L.GetStack(level); ok {
				if _, err := L.GetInfo("Sl", d, lua.LNil); err == nil && d.What != "G" && d.CurrentLine > 0 {
					v = lua.LString(fmt.Sprintf("%s:%d: %s", d.Source, d.CurrentLine, m.String()))
				}
			}
		}
	}
	L.Error(v, 0)
	return 0
}

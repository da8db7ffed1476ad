package script

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
	"go.uber.org/zap"

	"github.com/tiercache/tiercache/resp"
)

// Options configure an Engine.
type Options struct {
	// Logger receives redis.log's lines (at its level) and the engine's
	// own notices. Default zap.NewNop().
	Logger *zap.Logger
	// Version is redis.REDIS_VERSION ("7.2.0"); its number
	// REDIS_VERSION_NUM is derived.
	Version string
	// MaxCacheBytes bounds the bodies of the cached scripts; past it the
	// oldest are dropped (EVALSHA of one answers NOSCRIPT, and clients
	// send EVAL again). Default 64 MiB.
	MaxCacheBytes int64
	// MaxStringBytes bounds a string string.rep builds. Default 512 MiB.
	MaxStringBytes int
}

// EnsureDefaults fills zero fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.Version == "" {
		o.Version = "7.2.0"
	}
	if o.MaxCacheBytes == 0 {
		o.MaxCacheBytes = 64 << 20
	}
	if o.MaxStringBytes == 0 {
		o.MaxStringBytes = 512 << 20
	}
}

// Script is a compiled script of the cache.
type Script struct {
	SHA   string // lower-case hex SHA1 of Body
	Body  []byte
	Flags Flags
	proto *lua.FunctionProto
	// fn is proto's function in the interpreter fnOf, made at its first
	// run there; only Run (one at a time) reads and writes them.
	fn   *lua.LFunction
	fnOf *sandbox
}

// Call is one run of a script: what EVAL passes it and where its reply
// goes.
type Call struct {
	// Ctx ends the run when canceled (SCRIPT KILL): the script stops at
	// its next instruction, even inside pcall.
	Ctx        context.Context
	Keys, Args [][]byte
	// Command runs one redis.call or redis.pcall: the arguments, and the
	// protocol the script reads replies in (redis.setresp); it returns the
	// reply as RESP bytes, valid until the next Command. Refusals (an
	// unknown command, a write in a read-only script) are error replies.
	Command func(args [][]byte, proto int) []byte
	// Known reports that the server has the command named name
	// (redis.acl_check_cmd); nil: none.
	Known func(name []byte) bool
	// W receives the script's reply or error.
	W *resp.Writer
}

// Stats are the engine's counters.
type Stats struct {
	Scripts    int   // in the cache
	CacheBytes int64 // their bodies
	Evicted    uint64
	Runs       uint64
	Rebuilds   uint64 // interpreters rebuilt after a run changed shared state
}

// Engine compiles, caches and runs Lua scripts. Load, Get, Exists and
// Flush may be called from any goroutine; Run from one at a time (the
// server runs scripts holding its transaction lock exclusively).
type Engine struct {
	o       Options
	mu      sync.Mutex
	scripts map[string]*Script
	order   []string // SHA1s in load order, for eviction
	bytes   int64

	sb      *sandbox // the interpreter, owned by Run
	reset   atomic.Bool
	cur     *Call
	proto   int // the running script's redis.setresp
	argBuf  []byte
	args    [][]byte
	ends    []int
	evicted atomic.Uint64
	runs    atomic.Uint64
	rebuilt atomic.Uint64
}

// New returns an Engine; its interpreter is built at the first Run.
func New(o Options) *Engine {
	o.EnsureDefaults()
	return &Engine{o: o, scripts: map[string]*Script{}}
}

// SHA1Hex is the lower-case hex SHA1 of b, a script's name.
func SHA1Hex(b []byte) string {
	s := sha1.Sum(b)
	return hex.EncodeToString(s[:])
}

// Load compiles body and adds it to the cache (once per body). A body
// that does not compile is an error whose text is Redis's reply.
func (e *Engine) Load(body []byte) (*Script, error) {
	sha := SHA1Hex(body)
	if sc := e.Get([]byte(sha)); sc != nil {
		return sc, nil
	}
	flags, skip, err := parseShebang(body)
	if err != nil {
		return nil, err
	}
	// The shebang line is skipped, its line feed kept for line numbers.
	chunk, err := parse.Parse(bytes.NewReader(body[skip:]), chunkName)
	var proto *lua.FunctionProto
	if err == nil {
		proto, err = lua.Compile(chunk, chunkName)
	}
	if err == nil {
		// Lua 5.1 compiles a main chunk as a vararg function that needs
		// no arg table (lparser.c, mainfunc: is_vararg = VARARG_ISVARARG);
		// gopher-lua marks it VarArgNeedsArg, which would build an arg
		// table at every run that no code of the chunk can name.
		proto.IsVarArg &^= lua.VarArgNeedsArg
	}
	if err != nil {
		return nil, &ReplyError{Msg: "ERR Error compiling script (new function): " + compileError(err, body[skip:]), Err: ErrCompile}
	}
	sc := &Script{SHA: sha, Body: bytes.Clone(body), Flags: flags, proto: proto}
	e.mu.Lock()
	defer e.mu.Unlock()
	if old := e.scripts[sha]; old != nil {
		return old, nil
	}
	e.scripts[sha] = sc
	e.order = append(e.order, sha)
	e.bytes += int64(len(body))
	for e.bytes > e.o.MaxCacheBytes && len(e.order) > 1 {
		old := e.order[0]
		e.order = e.order[1:]
		if o := e.scripts[old]; o != nil {
			e.bytes -= int64(len(o.Body))
			delete(e.scripts, old)
			e.evicted.Add(1)
		}
	}
	return sc, nil
}

// chunkName is the name scripts are compiled under: errors read
// "user_script:LINE: ...", as in Redis.
const chunkName = "user_script"

var parseErr = regexp.MustCompile(`^user_script line:(\d+)\(column:\d+\) near '(.*)':\s*(.*?)\s*$`)

// compileError words a parse error of chunk as Lua 5.1 places it:
// "user_script:LINE: what near 'token'", at the end of the chunk "near
// '<eof>'" on its last line (Lua counts a "\r\n" as one line feed).
func compileError(err error, chunk []byte) string {
	var pe *parse.Error
	if errors.As(err, &pe) && pe.Pos.Line == parse.EOF {
		line := 1 + bytes.Count(chunk, []byte("\n"))
		return chunkName + ":" + strconv.Itoa(line) + ": " + strings.TrimSpace(pe.Message) + " near '<eof>'"
	}
	msg := strings.TrimSpace(err.Error())
	if m := parseErr.FindStringSubmatch(msg); m != nil {
		return chunkName + ":" + m[1] + ": " + m[3] + " near '" + m[2] + "'"
	}
	return msg
}

// Get returns the cached script of sha (any case), or nil.
func (e *Engine) Get(sha []byte) *Script {
	if len(sha) != 40 {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if sc := e.scripts[string(sha)]; sc != nil { // no allocation: a map index by a converted slice
		return sc
	}
	return e.scripts[strings.ToLower(string(sha))]
}

// Flush empties the cache and makes the next Run build a new interpreter
// (SCRIPT FLUSH).
func (e *Engine) Flush() {
	e.mu.Lock()
	e.scripts = map[string]*Script{}
	e.order = nil
	e.bytes = 0
	e.mu.Unlock()
	e.reset.Store(true)
}

// Stats returns the engine's counters.
func (e *Engine) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	return Stats{Scripts: len(e.scripts), CacheBytes: e.bytes, Evicted: e.evicted.Load(), Runs: e.runs.Load(), Rebuilds: e.rebuilt.Load()}
}

// Run runs sc with c's keys and arguments and writes its reply (or its
// error, worded as Redis words it) to c.W.
func (e *Engine) Run(sc *Script, c *Call) {
	e.runs.Add(1)
	if e.sb == nil || e.reset.Swap(false) {
		if e.sb != nil {
			e.sb.L.Close()
		}
		e.sb = newSandbox(e.api(), e.consts(), e.o.MaxStringBytes)
	}
	sb := e.sb
	L := sb.L
	sb.keys.fill(L, sb.real, "KEYS", c.Keys)
	sb.argv.fill(L, sb.real, "ARGV", c.Args)
	if sc.fnOf != sb { // made once per interpreter
		sc.fn, sc.fnOf = L.NewFunctionFromProto(sc.proto), sb
	}
	fn := sc.fn
	fn.Env = sb.globals // again: a run may have changed it (setfenv)
	e.cur, e.proto = c, 2
	defer func() { e.cur = nil }()
	if c.Ctx != nil {
		L.SetContext(c.Ctx)
	}
	L.Push(fn)
	err := L.PCall(0, 1, sb.errorFunc)
	if c.Ctx != nil {
		L.RemoveContext()
	}
	if err != nil {
		msg, t := e.runError(sc, c, err)
		writeError(c.W, msg, t)
	} else {
		v := L.Get(-1)
		L.Pop(1)
		writeReply(c.W, v, e.proto, 0)
	}
	L.SetTop(0)
	sb.okUsed = 0
	if !sb.intact() {
		e.rebuilt.Add(1)
		e.o.Logger.Warn("a script changed what scripts share; the interpreter is built anew", zap.String("sha", sc.SHA))
		sb.L.Close()
		e.sb = nil
	}
}

// runError words a failed run as Redis 7.0 does (luaCallFunction): the
// error's text, then " script: SHA, on @user_script:LINE." where the error
// was raised; and the error table raised, if any.
func (e *Engine) runError(sc *Script, c *Call, err error) (string, *lua.LTable) {
	msg := "ERR " + err.Error()
	var source, line string
	var raised *lua.LTable
	if ae, ok := err.(*lua.ApiError); ok {
		if t, ok := ae.Object.(*lua.LTable); ok {
			raised = t
			if s, ok := t.RawGetString("err").(lua.LString); ok {
				msg = string(s)
			}
			if s, ok := t.RawGetString("source").(lua.LString); ok {
				source = string(s)
			}
			if n, ok := t.RawGetString("line").(lua.LNumber); ok {
				line = fmt.Sprint(int64(n))
			}
		} else if s, ok := ae.Object.(lua.LString); ok {
			msg = "ERR " + string(s)
		}
	}
	if c.Ctx != nil && c.Ctx.Err() != nil {
		msg = "ERR Script killed by user with SCRIPT KILL..."
	}
	if source != "" && line != "" {
		msg += " script: " + sc.SHA + ", on " + source + ":" + line + "."
	}
	return msg, raised
}

// errorHandler is Redis's __redis__err__handler: it turns a string error
// into {err="ERR <error>"} and notes where the error was raised (the
// first Lua function from the top: a Go function such as redis.call
// reports its caller).
func errorHandler(L *lua.LState) int {
	errv := L.Get(1)
	t, ok := errv.(*lua.LTable)
	if !ok {
		t = L.NewTable()
		t.RawSetString("err", lua.LString("ERR "+lua.LVAsString(L.ToStringMeta(errv))))
	}
	d, ok := L.GetStack(1)
	if ok {
		L.GetInfo("Sl", d, lua.LNil)
		if d.What == "G" {
			if d2, ok2 := L.GetStack(2); ok2 {
				d = d2
				L.GetInfo("Sl", d, lua.LNil)
			}
		}
		src := "=[C]"
		if d.What != "G" {
			src = "@" + d.Source
		}
		t.RawSetString("source", lua.LString(src))
		t.RawSetString("line", lua.LNumber(d.CurrentLine))
	}
	L.Push(t)
	return 1
}

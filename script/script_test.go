package script

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/tiercache/tiercache/resp"
)

// run runs body with a Command that answers each call with reply(args).
func run(t *testing.T, e *Engine, body string, ctx context.Context, reply func(args [][]byte) string) string {
	t.Helper()
	return runCall(t, e, body, &Call{Ctx: ctx, Command: func(args [][]byte, proto int) []byte { return []byte(reply(args)) }})
}

// runCall runs body as c, and returns its reply.
func runCall(t *testing.T, e *Engine, body string, c *Call) string {
	t.Helper()
	sc, err := e.Load([]byte(body))
	if err != nil {
		return "-" + err.Error()
	}
	var out bytes.Buffer
	c.W = resp.NewWriter(&out, 4096)
	e.Run(sc, c)
	c.W.Flush()
	return out.String()
}

// afterEach runs each of mutations, then check, which must answer want.
func afterEach(t *testing.T, mutations []string, do func(body string) string, check, want string) {
	t.Helper()
	for _, m := range mutations {
		do(m)
		if got := do(check); got != want {
			t.Errorf("after %q: %q, want %q", m, got, want)
		}
	}
}

func TestConversions(t *testing.T) {
	e := New(Options{})
	echo := func(r string) func([][]byte) string { return func([][]byte) string { return r } }
	for _, c := range []struct{ body, reply, want string }{
		{"return redis.call('x')", "+OK\r\n", "+OK\r\n"},
		{"return redis.call('x')", ":7\r\n", ":7\r\n"},
		{"return redis.call('x')", "$-1\r\n", "$-1\r\n"},
		{"return {redis.call('x')}", "*2\r\n$1\r\na\r\n$-1\r\n", "*1\r\n*2\r\n$1\r\na\r\n$-1\r\n"},
		{"return redis.pcall('x')", "-WRONGTYPE bad\r\n", "-WRONGTYPE bad\r\n"},
		{"redis.setresp(3); return redis.call('x')", "%1\r\n$1\r\nk\r\n$1\r\nv\r\n", "*2\r\n$1\r\nk\r\n$1\r\nv\r\n"},
		{"redis.setresp(3); return redis.call('x')", ",1.5\r\n", "$3\r\n1.5\r\n"},
		{"redis.setresp(3); return redis.call('x')", "#t\r\n", ":1\r\n"},
		{"return {map={b=1, a=2}}", "", "*4\r\n$1\r\nb\r\n:1\r\n$1\r\na\r\n:2\r\n"},
		{"return 2.9", "", ":2\r\n"},
		{"return {1, 2, nil, 4}", "", "*2\r\n:1\r\n:2\r\n"},
		{"return redis.status_reply('X')", "", "+X\r\n"},
	} {
		if got := run(t, e, c.body, nil, echo(c.reply)); got != c.want {
			t.Errorf("%q with reply %q: %q, want %q", c.body, c.reply, got, c.want)
		}
	}
}

func TestErrorTexts(t *testing.T) {
	e := New(Options{})
	bad := func([][]byte) string { return "-ERR nope\r\n" }
	for _, c := range []struct{ body, want string }{
		{"\nreturn redis.call('x')", "-ERR nope script: " + SHA1Hex([]byte("\nreturn redis.call('x')")) + ", on @user_script:2.\r\n"},
		{"return redis.pcall('x')", "-ERR nope\r\n"},
		{"local ok, e = pcall(redis.call, 'x'); return e", "$8\r\nERR nope\r\n"},
		{"error('boom')", "-ERR user_script:1: boom script: " + SHA1Hex([]byte("error('boom')")) + ", on @user_script:1.\r\n"},
		// Compile errors keep Lua's "user_script:LINE:" location, at the
		// end of the body too (the wording is gopher-lua's).
		{"return +", "-ERR Error compiling script (new function): user_script:1: syntax error near '+'"},
		{"return 1 +", "-ERR Error compiling script (new function): user_script:1: syntax error near '<eof>'"},
		{"#!lua\nlocal x = 1\nreturn 1 +\n", "-ERR Error compiling script (new function): user_script:4: syntax error near '<eof>'"},
		{"return 'open", "-ERR Error compiling script (new function): user_script:1: unterminated string near '<eof>'"},
	} {
		if got := run(t, e, c.body, nil, bad); got != c.want {
			t.Errorf("%q: %q, want %q", c.body, got, c.want)
		}
	}
}

func TestSandbox(t *testing.T) {
	e := New(Options{})
	none := func([][]byte) string { return "+OK\r\n" }
	run(t, e, "return getmetatable('').__index.upper('x')", nil, none)
	run(t, e, "return redis.call('x')", nil, none)
	if n := e.Stats().Rebuilds; n != 0 {
		t.Fatalf("scripts that change nothing rebuilt the interpreter %d times", n)
	}
	for _, c := range []struct{ body, want string }{
		{"x = 1", "Attempt to modify a readonly table"},
		{"rawset(_G, 'x', 1)", "Attempt to modify a readonly table"},
		{"string.x = 1", "Attempt to modify a readonly table"},
		{"table.insert(_G, 1)", "Attempt to modify a readonly table"},
		{"table.insert(string, 1e9, 1)", "Attempt to modify a readonly table"},
		{"table.insert(getmetatable(redis), 1)", "Attempt to modify a readonly table"},
		{"return os.time()", "nonexistent global variable 'os'"},
		{"return io", "nonexistent global variable 'io'"},
		{"return dofile", "nonexistent global variable 'dofile'"},
		{"return debug", "nonexistent global variable 'debug'"},
		{"setfenv(0, {})", "nonexistent global variable 'setfenv'"},
		{"return getfenv(0)", "nonexistent global variable 'getfenv'"},
	} {
		if got := run(t, e, c.body, nil, none); !strings.Contains(got, c.want) {
			t.Errorf("%q: %q, want it to say %q", c.body, got, c.want)
		}
	}
	// No script can change the environment (setfenv is absent, as in
	// Redis 7.0); were one to, as this command does, the next runs anew.
	run(t, e, "redis.call('x')", nil, func([][]byte) string { e.sb.L.Env = e.sb.L.NewTable(); return "+OK\r\n" })
	if got := run(t, e, "return type(redis)", nil, none); got != "$5\r\ntable\r\n" {
		t.Errorf("after the environment changed, the next script sees type(redis) %q", got)
	}
	if e.Stats().Rebuilds == 0 {
		t.Error("the interpreter was not rebuilt after the environment changed")
	}
	run(t, e, "getmetatable('').kept = 'x'", nil, none)
	if got := run(t, e, "return tostring(getmetatable('').kept)", nil, none); got != "$3\r\nnil\r\n" {
		t.Errorf("a value kept in the string metatable is seen by the next script: %q", got)
	}
}

func TestKill(t *testing.T) {
	e := New(Options{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	got := run(t, e, "while true do pcall(function() end) end", ctx, nil)
	if !strings.HasPrefix(got, "-ERR Script killed by user with SCRIPT KILL... script: ") {
		t.Fatalf("killed script answered %q", got)
	}
}

func TestShebang(t *testing.T) {
	for _, c := range []struct {
		body  string
		flags Flags
		err   string
	}{
		{"return 1", FlagCompat, ""},
		{"#!lua\nreturn 1", 0, ""},
		{"#!lua flags=no-writes,allow-oom\nreturn 1", FlagNoWrites | FlagAllowOOM, ""},
		{"#!lua flags=\nreturn 1", 0, ""},
		{"#!lua", 0, "ERR Invalid script shebang"},
		{"#!py\nreturn 1", 0, "ERR Unexpected engine in script shebang: #!py"},
		{"#!lua flags=x\nreturn 1", 0, "ERR Unexpected flag in script shebang: x"},
		{"#!lua x=1\nreturn 1", 0, "ERR Unknown lua shebang option: x=1"},
	} {
		sc, err := New(Options{}).Load([]byte(c.body))
		switch {
		case c.err != "" && (err == nil || err.Error() != c.err):
			t.Errorf("%q: error %v, want %q", c.body, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.body, err)
		case c.err == "" && sc.Flags != c.flags:
			t.Errorf("%q: flags %b, want %b", c.body, sc.Flags, c.flags)
		}
	}
	sc, _ := New(Options{}).Load([]byte("#!lua\n\nerror('x')"))
	var out bytes.Buffer
	w := resp.NewWriter(&out, 512)
	New(Options{}).Run(sc, &Call{W: w})
	w.Flush()
	if !strings.Contains(out.String(), "user_script:3:") {
		t.Errorf("line numbers after a shebang: %q", out.String())
	}
}

// TestKeysAndArgvAreFresh (SC3): whatever a script does to KEYS and ARGV
// (they are reused between runs of as many keys and arguments), the next
// run sees plain lists of its own keys and arguments.
func TestKeysAndArgvAreFresh(t *testing.T) {
	e := New(Options{})
	keys, args := [][]byte{[]byte("k1"), []byte("k2")}, [][]byte{[]byte("a1")}
	runArgs := func(body string, keys, args [][]byte) string {
		return runCall(t, e, body, &Call{Keys: keys, Args: args})
	}
	check := "local n = 0; for _ in pairs(KEYS) do n = n + 1 end; for _ in pairs(ARGV) do n = n + 1 end; " +
		"return {n, #KEYS, #ARGV, KEYS[1], KEYS[2], ARGV[1], tostring(getmetatable(KEYS)), tostring(getmetatable(ARGV))}"
	want := "*8\r\n:3\r\n:2\r\n:1\r\n$2\r\nk1\r\n$2\r\nk2\r\n$2\r\na1\r\n$3\r\nnil\r\n$3\r\nnil\r\n"
	afterEach(t, []string{
		"KEYS.x = 1; ARGV.y = 2",
		"KEYS[3] = 'k3'; ARGV[2] = 'a2'",
		"KEYS[1] = 'z'; ARGV[1] = nil",
		"table.remove(KEYS); KEYS.x = 1",
		"KEYS[1.5] = 1; ARGV[-1] = 1",
		"KEYS[100000000] = 1",
		"setmetatable(KEYS, {__index = function() return 'm' end})",
		"setmetatable(ARGV, {})",
	}, func(body string) string { return runArgs(body, keys, args) }, check, want)
	if got := runArgs("return {#KEYS, #ARGV}", keys[:1], nil); got != "*2\r\n:1\r\n:0\r\n" {
		t.Errorf("fewer keys: %q", got)
	}
}

// TestOKRepliesAreFresh (SC1): a {ok="OK"} reply is a table of its own
// in its run, and what a script did to one is not seen in the next run
// (they are reused between runs).
func TestOKRepliesAreFresh(t *testing.T) {
	e := New(Options{})
	ok := func([][]byte) string { return "+OK\r\n" }
	check := "local a, b = redis.call('x'), redis.call('x'); local n = 0; for _ in pairs(a) do n = n + 1 end; " +
		"return {a.ok, b.ok, tostring(rawequal(a, b)), n, tostring(getmetatable(a))}"
	want := "*5\r\n$2\r\nOK\r\n$2\r\nOK\r\n$5\r\nfalse\r\n:1\r\n$3\r\nnil\r\n"
	afterEach(t, []string{
		"local r = redis.call('x'); r.ok = 'no'",
		"local r = redis.call('x'); r.x = 1",
		"local r = redis.call('x'); r.ok = nil",
		"local r = redis.call('x'); r[1] = 1",
		"local r = redis.call('x'); setmetatable(r, {__index = function() return 1 end})",
		"for i = 1, 20 do local r = redis.call('x'); r.ok = i end",
	}, func(body string) string { return run(t, e, body, nil, ok) }, check, want)
}

// TestTableShape: the LTable fields tableShape reads exist in this
// gopher-lua, and a table a script filled and emptied again is not
// reused (checking it would walk every key it once had).
func TestTableShape(t *testing.T) {
	tb := &lua.LTable{}
	tb.RawSetString("a", lua.LTrue)
	tb.RawSetString("a", lua.LNil)
	tb.RawSetInt(1, lua.LTrue)
	if array, keys, ok := tableShape(tb); !ok || array != 1 || keys != 1 {
		t.Fatalf("tableShape: array %d, keys %d, ok %v; want 1, 1, true", array, keys, ok)
	}
	e := New(Options{})
	do := func(body string) string {
		return runCall(t, e, body, &Call{Keys: [][]byte{[]byte("k")}, Command: func([][]byte, int) []byte { return []byte("+OK\r\n") }})
	}
	for _, check := range []string{"return tostring(KEYS)", "return tostring(redis.call('x'))"} {
		if first, second := do(check), do(check); first != second {
			t.Fatalf("%q: %s, then %s: not reused between runs that leave it as made", check, first, second)
		}
	}
	for _, c := range []struct{ fill, check string }{
		{"for i = 1, 100 do KEYS['x' .. i] = 1; KEYS['x' .. i] = nil end", "return tostring(KEYS)"},
		{"KEYS[100] = 1; KEYS[100] = nil", "return tostring(KEYS)"},
		{"local r = redis.call('x'); r.x = 1; r.x = nil", "return tostring(redis.call('x'))"},
	} {
		before := do(c.check)
		do(c.fill)
		if after := do(c.check); after == before {
			t.Errorf("after %q the same table %s was reused", c.fill, after)
		}
	}
}

// TestRandomSeed: math.randomseed makes math.random's sequence repeat, as
// in Lua 5.1 (Redis's unit/scripting "Scripting engine PRNG can be seeded
// correctly"); without a new seed the sequence goes on from run to run.
func TestRandomSeed(t *testing.T) {
	e := New(Options{})
	seeded := "math.randomseed(ARGV[1]); return {tostring(math.random()), math.random(10), math.random(5, 7)}"
	call := func(body string, args ...string) string {
		c := &Call{Command: func([][]byte, int) []byte { return nil }}
		for _, a := range args {
			c.Args = append(c.Args, []byte(a))
		}
		return runCall(t, e, body, c)
	}
	a, b, other := call(seeded, "10"), call(seeded, "10"), call(seeded, "20")
	if a != b || a == other {
		t.Fatalf("seed 10: %q then %q; seed 20: %q", a, b, other)
	}
	first, next := call("return tostring(math.random())"), call("return tostring(math.random())")
	if first == next {
		t.Fatalf("two runs drew the same number %q", first)
	}
	for _, c := range []struct{ body, want string }{
		{"return math.random(0)", "interval is empty"},
		{"return math.random(3, 2)", "interval is empty"},
		{"return math.random(1, 2, 3)", "wrong number of arguments"},
	} {
		if got := call(c.body); !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want it to say %q", c.body, got, c.want)
		}
	}
}

// TestStringLibrary checks SC6: string.lower and string.upper change the
// ASCII letters alone and keep every other byte (a binary value keeps its
// length); string.format writes C's bytes (%c one byte, an item cut at a
// NUL, %s of a number "%.14g") and raises Lua 5.1's errors.
func TestStringLibrary(t *testing.T) {
	e := New(Options{})
	none := func([][]byte) string { return "+OK\r\n" }
	for c := 0; c < 256; c++ {
		want := byte(c)
		if c >= 'A' && c <= 'Z' {
			want = byte(c) + 32
		}
		if got := run(t, e, "return string.lower(string.char("+strconv.Itoa(c)+"))", nil, none); got != "$1\r\n"+string([]byte{want})+"\r\n" {
			t.Errorf("string.lower of byte %d: %q", c, got)
		}
		want = byte(c)
		if c >= 'a' && c <= 'z' {
			want = byte(c) - 32
		}
		if got := run(t, e, "return string.upper(string.char("+strconv.Itoa(c)+"))", nil, none); got != "$1\r\n"+string([]byte{want})+"\r\n" {
			t.Errorf("string.upper of byte %d: %q", c, got)
		}
	}
	expectReplies(t, e, map[string]string{
		"return string.format('%c', 200)":         "$1\r\n\xc8\r\n",
		"return string.format('%c|%5c|', 0, 0)":   "$6\r\n|    |\r\n",
		"return string.format('%s', 1/3)":         "$16\r\n0.33333333333333\r\n",
		"return string.format('%s', 'a\\0b')":     "$1\r\na\r\n",
		"return string.format('%x', -1)":          "$16\r\nffffffffffffffff\r\n",
		"return string.format('%g|%f', 0.5, 1/0)": "$7\r\n0.5|inf\r\n",
		"return string.format('%q', 'a\\n\\0')":   "$9\r\n\"a\\\n\\000\"\r\n",
		"return string.format('%d', 'x')":         "-ERR user_script:1: bad argument #2 to 'format' (number expected, got string)",
		"return string.format('%s %s', 1)":        "-ERR user_script:1: bad argument #3 to 'format' (no value)",
		"return string.format('%a', 1)":           "-ERR user_script:1: invalid option '%a' to 'format'",
		"return string.format('%-+ #00d', 1)":     "-ERR user_script:1: invalid format (repeated flags)",
		"return string.format('%123d', 1)":        "-ERR user_script:1: invalid format (width or precision too long)",
		"return string.lower()":                   "-ERR user_script:1: bad argument #1 to 'lower' (string expected, got no value)",
	})
}

// TestBitLibrary checks SC7: Lua BitOp's operations on 32-bit integers,
// signed results, arguments brought to 32 bits (fractions rounded to
// even, modulo 2^32, numeric strings), shift counts modulo 32, tohex, and
// its type errors.
func TestBitLibrary(t *testing.T) {
	e := New(Options{})
	expectReplies(t, e, map[string]string{
		"return bit.tobit(0xffffffff)":                                      ":-1\r\n",
		"return bit.tobit(2^32 + 5)":                                        ":5\r\n",
		"return {bit.tobit(2.5), bit.tobit(3.5), bit.tobit(-1.5)}":          "*3\r\n:2\r\n:4\r\n:-2\r\n",
		"return bit.tobit(' 0x10 ')":                                        ":16\r\n",
		"return bit.band(0xff, 0x0f, 0x3)":                                  ":3\r\n",
		"return bit.bor(1, 2, 4, 8)":                                        ":15\r\n",
		"return bit.bxor(0xff, 0x0f)":                                       ":240\r\n",
		"return bit.bnot(0)":                                                ":-1\r\n",
		"return {bit.lshift(1, 31), bit.lshift(1, 32), bit.rshift(-1, 28)}": "*3\r\n:-2147483648\r\n:1\r\n:15\r\n",
		"return bit.arshift(-256, 4)":                                       ":-16\r\n",
		"return {bit.rol(0x12345678, 4), bit.ror(0x12345678, 4)}":           "*2\r\n:591751041\r\n:-2128394905\r\n",
		"return bit.bswap(0x12345678)":                                      ":2018915346\r\n",
		"return {bit.tohex(255), bit.tohex(255, -2), bit.tohex(1, 20)}":     "*3\r\n$8\r\n000000ff\r\n$2\r\nFF\r\n$8\r\n00000001\r\n",
		"return bit.tohex(1, -2147483648)":                                  "$0\r\n\r\n",
		"return bit.band(1, 'x')":                                           "-ERR user_script:1: bad argument #2 to 'band' (number expected, got string)",
		"return bit.tobit()":                                                "-ERR user_script:1: bad argument #1 to 'tobit' (number expected, got no value)",
		"bit.band = nil":                                                    "-ERR user_script:1: Attempt to modify a readonly table",
	})
}

// expectReplies runs each script body (its redis.call answered +OK) and
// checks that its reply begins with want (an error's text before its
// " script: SHA" suffix).
func expectReplies(t *testing.T, e *Engine, cases map[string]string) {
	t.Helper()
	none := func([][]byte) string { return "+OK\r\n" }
	for body, want := range cases {
		if got := run(t, e, body, nil, none); !strings.HasPrefix(got, want) {
			t.Errorf("%s: %q, want %q", body, got, want)
		}
	}
}

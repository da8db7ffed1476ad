// Package script runs Redis's Lua scripts (EVAL, EVALSHA and their _RO
// forms) on gopher-lua, a pure-Go Lua 5.1: the cache of compiled scripts
// by SHA1, the sandbox they run in, the redis table they call, and the
// conversions between replies and Lua values, each as Redis 7.0's
// script_lua.c and eval.c make them. It knows no command: the server runs
// each redis.call (Call.Command) and reads the reply back, as Redis runs
// them on its Lua client, and runs a script while no other command runs.
//
// # Invariants
//
//   - SC1: a reply converts to Lua and a Lua value to a reply as Redis
//     7.0 converts them, RESP2 and RESP3 (status {ok}, error {err}, nil
//     bulk false or nil, map {map}, set {set}, double {double}, big
//     number, verbatim string; numbers truncated to integers, booleans as
//     1/nil in RESP2); a map a script returns keeps the order its pairs
//     were added; a number passed to redis.call is "%.17g" ("inf",
//     "-nan" as C prints them), tonumber reads a string as Lua 5.1's
//     strtod does ("1e2", 2^63), and the library functions take a string
//     that reads as a number where they take a number (string.sub(s,
//     ARGV[1]), string.format('%x', ARGV[1])) (TestConversions; server
//     TestScriptsMatchRedis, byte for byte against redis-server).
//   - SC2: a failed run answers Redis's text: the error, then " script:
//     SHA, on @user_script:LINE." with the line of the Lua code that
//     raised it (for redis.call, its caller's); error(msg, level) places
//     msg as Lua 5.1's does; redis.call raises a
//     command's error reply, redis.pcall returns it (marked
//     ignore_error_stats_update: passed on as the script's reply it is not
//     counted again), and Lua's pcall of a redis.call returns its text
//     (TestErrorTexts; server TestScriptErrorsCountedOnce).
//   - SC3: the globals, the library tables and the string metatable are
//     read-only: an assignment, rawset, table.insert or setmetatable
//     answers "Attempt to modify a readonly table" (setmetatable takes
//     only a table: no script sets what every nil, boolean, number or
//     function shares), reading a global that
//     does not exist "Script attempted to access nonexistent global
//     variable"; os, io, loadfile, dofile, print, require, module,
//     getfenv, setfenv, newproxy, package and debug are absent, as in
//     redis-server 7.0. Whatever a script changed past that (the
//     environment, the string metatable) would be found after the run and
//     the interpreter built anew, so no script sees another's globals
//     (TestSandbox; server
//     TestScriptSandboxLeaksNothing). KEYS, ARGV and {ok="OK"} replies
//     are tables of earlier runs, reused when left as they were made:
//     a run sees them as new tables (TestKeysAndArgvAreFresh,
//     TestOKRepliesAreFresh, TestTableShape).
//   - SC4: a canceled Call.Ctx (SCRIPT KILL) stops the script at its next
//     instruction, pcall or not, and it answers Redis's "Script killed by
//     user with SCRIPT KILL..." (TestKill).
//   - SC5: #!lua shebang flags are read as Redis reads them, and their
//     errors are its texts; the shebang line is not compiled, its line
//     feed is, so line numbers stay the user's (TestShebang).
//   - SC6: string.lower, string.upper and string.format are Lua 5.1's
//     (lstrlib.c), written here (strlib.go): lower and upper change the
//     ASCII letters and keep every other byte; format writes what glibc's
//     sprintf writes for each item (%c one byte, an item cut at a NUL,
//     unsigned conversions of a negative number wrapped, "inf" and "nan"),
//     a number given for %s or %q as "%.14g", and raises Lua 5.1's errors
//     for a missing or wrong argument and a bad format (TestStringLibrary;
//     server TestScriptsMatchRedis).
//   - SC7: the bit library is Lua BitOp's (bitlib.go): 32-bit operations
//     on arguments brought to 32 bits as bit.c brings them (a fraction
//     rounded to even, a number modulo 2^32, a numeric string read),
//     signed results, shifts by their count modulo 32, tohex's widths and
//     case, and its type errors (TestBitLibrary; server
//     TestScriptsMatchRedis).
//
// # Caveats
//
//   - Lua's own runtime errors are gopher-lua's wording where it differs
//     from Lua 5.1's ("attempt to call a non-function object"), as are
//     compile errors' (Redis's "Error compiling script (new function):
//     user_script:1: ..." prefix and location are kept). tostring of a
//     non-integer number, and a number joined with "..", is Go's shortest
//     form, not "%.14g" (string.format's %s is "%.14g", SC6).
//   - math.random draws from a generator of the interpreter's own:
//     math.randomseed makes its sequence repeat (TestRandomSeed), but the
//     numbers are not redis-server's.
//   - cjson is written here (cjson.go) after lua-cjson 2.1's behaviour,
//     its settings (encode_max_depth and the like) included: as in
//     Redis, what a script sets stays for later scripts until SCRIPT
//     FLUSH. An object's keys come in gopher-lua's order, not Lua 5.1's
//     hash order. struct and cmsgpack are absent: no maintained
//     library gives them for gopher-lua (bit is written here, SC7).
//   - The script cache is bounded by Options.MaxCacheBytes (64 MiB): past
//     it the oldest scripts go, and EVALSHA of one answers NOSCRIPT.
//     Redis 7.0 keeps every script.
//   - string.rep is bounded by Options.MaxStringBytes; a script can still
//     build large tables: busy-reply-threshold and SCRIPT KILL are what
//     stop a runaway one.
package script

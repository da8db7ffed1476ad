package server

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// scriptCases are EVAL calls whose replies redis-server 7.0 and tiercache
// must give byte for byte: the type conversions both ways, redis.call and
// redis.pcall errors with their user_script location, the helpers, the
// read-only and shebang rules, and sandbox escapes.
var scriptCases = [][]string{
	{"EVAL", "return {1,2,3,'a',{ok='x'},false,true,nil,5}", "0"},
	{"EVAL", "return redis.call('set', KEYS[1], ARGV[1])", "1", "k", "v"},
	{"EVAL", "return redis.call('get', KEYS[1])", "1", "k"},
	{"EVAL", "return redis.call('get', 'nokey')", "0"},
	{"EVAL", "return {redis.call('get', 'nokey')}", "0"},
	{"EVAL", "return redis.call('hgetall', 'nokey')", "0"},
	{"EVAL", "redis.call('hset', 'h', 'a', '1', 'b', '2'); return redis.call('hgetall', 'h')", "0"},
	{"EVAL", "redis.setresp(3); return redis.call('hgetall', 'h')", "0"},
	{"EVAL", "redis.setresp(3); return redis.call('get', 'nokey')", "0"},
	{"EVAL", "redis.setresp(3); return {redis.call('get', 'nokey') == nil}", "0"},
	{"EVAL", "redis.setresp(3); return true", "0"},
	{"EVAL", "redis.setresp(3); return false", "0"},
	{"EVAL", "return {double=3.5}", "0"},
	{"EVAL", "return {big_number='123456789012345678901234567890'}", "0"},
	{"EVAL", "return {map={a=1}}", "0"},
	{"EVAL", "return {set={a=true}}", "0"},
	{"EVAL", "return {verbatim_string={format='txt', string='hi'}}", "0"},
	{"EVAL", "return {verbatim_string={format='toolong', string='x'}}", "0"},
	{"EVAL", "return {verbatim_string={format='ab', string='x'}}", "0"},
	{"EVAL", "return {verbatim_string={format='', string='x'}}", "0"},
	{"PING"}, // the connection still in step after them
	{"EVAL", "return redis.call('nosuch')", "0"},
	{"EVAL", "return redis.pcall('nosuch')", "0"},
	{"EVAL", "return redis.call('incr', 'k')", "0"},
	{"EVAL", "local ok, e = pcall(redis.call, 'incr', 'k'); return e", "0"},
	{"EVAL", "return redis.pcall('incr', 'k')", "0"},
	{"EVAL", "local t = redis.pcall('incr', 'k'); return {tostring(t.ignore_error_stats_update), t.err}", "0"},
	{"EVAL", "return redis.call('get')", "0"},
	{"EVAL", "return redis.call('eval', 'return 1', '0')", "0"},
	{"EVAL", "return redis.call()", "0"},
	{"EVAL", "return redis.call({})", "0"},
	{"EVAL", "return redis.call('set', 'n', 3.5)", "0"},
	{"EVAL", "return redis.call('get', 'n')", "0"},
	{"EVAL", "return 3.99", "0"},
	{"EVAL", "return -3.99", "0"},
	{"EVAL", "return 'x' .. 1", "0"},
	// numbers read from strings as Lua 5.1's tonumber reads them (strtod)
	{"EVAL", "return tonumber('1e2')", "0"},
	{"EVAL", "return tostring(tonumber('1.0000000000000001e+20') == 1e20)", "0"},
	{"EVAL", "return tostring(tonumber('9223372036854775808') == 2^63)", "0"},
	{"EVAL", "return {tonumber(' 1.5e1 '), tonumber('0x10'), tonumber('.5e1'), tonumber('5.')}", "0"},
	{"EVAL", "return {tonumber('1e') == nil, tonumber('0x') == nil, tonumber('') == nil, tonumber('1 2') == nil, tonumber('1_0') == nil}", "0"},
	{"EVAL", "return {tonumber('ff', 16), tonumber('10', 2), tonumber('1e2', 10), tonumber(7)}", "0"},
	// library functions take strings that read as numbers where they take
	// numbers (luaL_checkint): ARGV's values are strings
	{"EVAL", "return {string.sub('hello', ARGV[1], ARGV[2]), string.rep('x', ARGV[2]), string.char(ARGV[3]), string.byte('abc', ARGV[1])}", "0", "2", "3", "65"},
	{"EVAL", "return {table.concat({1,2,3}, ',', ARGV[1], ARGV[2]), table.remove({1,2,3}, ARGV[1]), unpack({1,2,3}, ARGV[2])}", "0", "2", "3"},
	{"EVAL", "local t = {1,2}; table.insert(t, ARGV[1], 0); table.insert(t, ARGV[1]); return t", "0", "1"},
	{"EVAL", "return {string.find('hello', 'l', ARGV[1]), string.gsub('aaa', 'a', 'b', ARGV[2]), select(ARGV[2], 'a', 'b'), select('#', 1, 2)}", "0", "4", "2"},
	{"EVAL", "math.randomseed(ARGV[1]); return {math.random(ARGV[1]), math.ldexp(1, ARGV[1]), tonumber('10', ARGV[2])}", "0", "1", "2"},
	{"EVAL", "return string.format('%5.1f|%x|%c|%d|%s|%q|%%|%-3d|', ARGV[1], ARGV[2], ARGV[3], ARGV[1], ARGV[1], ARGV[1], ARGV[1])", "0", "5", "255", "65"},
	// string.lower, string.upper and string.format as Lua 5.1's lstrlib.c
	// (script SC6): bytes, C's sprintf, "%.14g", the errors
	{"EVAL", "return string.lower('\\192\\255\\128ABCabc\\233')", "0"},
	{"EVAL", "return string.upper('\\192\\255\\128ABCabc\\233z')", "0"},
	{"EVAL", "return string.lower(1/3)", "0"},
	{"EVAL", "return string.upper()", "0"},
	{"EVAL", "return string.lower({})", "0"},
	{"EVAL", "return string.format('%c', 200)", "0"},
	{"EVAL", "return string.format('%c', 0)", "0"},
	{"EVAL", "return string.format('%5c|', 0)", "0"},
	{"EVAL", "return string.format('%-5c|', 65)", "0"},
	{"EVAL", "return string.format('%05c|', 65)", "0"},
	{"EVAL", "return string.format('%c%c%c', 76, 117, 97)", "0"},
	{"EVAL", "return string.format('%d', 3.99)", "0"},
	{"EVAL", "return string.format('%d', -3.99)", "0"},
	{"EVAL", "return string.format('%d', 2^63)", "0"},
	{"EVAL", "return string.format('%d', -2^63)", "0"},
	{"EVAL", "return string.format('%d', 2^70)", "0"},
	{"EVAL", "return string.format('%d', 0/0)", "0"},
	{"EVAL", "return string.format('%5d|%-5d|%05d|%+d|% d|%+ d', 1, 2, 3, 4, 5, 6)", "0"},
	{"EVAL", "return string.format('%.3d|%5.3d|%-8.3d|%.0d|', 7, 8, 9, 0)", "0"},
	{"EVAL", "return string.format('%i', '42')", "0"},
	{"EVAL", "return string.format('%d', ' 0x10 ')", "0"},
	{"EVAL", "return string.format('%d', 'x')", "0"},
	{"EVAL", "return string.format('%d', true)", "0"},
	{"EVAL", "return string.format('%d', nil)", "0"},
	{"EVAL", "return string.format('%d')", "0"},
	{"EVAL", "return string.format('%s %s', 1)", "0"},
	{"EVAL", "return string.format('%x|%X|%o|%u', 255, 255, 8, 42)", "0"},
	{"EVAL", "return string.format('%#x|%#X|%#o|%#x|%#o', 255, 255, 8, 0, 0)", "0"},
	{"EVAL", "return string.format('%x|%u|%o', -1, -1, -1)", "0"},
	{"EVAL", "return string.format('%x', 2^64)", "0"},
	{"EVAL", "return string.format('%x', 2^63)", "0"},
	{"EVAL", "return string.format('%x', 2^63+2^20)", "0"},
	{"EVAL", "return string.format('%+x|% x|%08x|%-8x|', 10, 10, 10, 10)", "0"},
	{"EVAL", "return string.format('%.4x', 10)", "0"},
	{"EVAL", "return string.format('%e|%E|%f|%g|%G', 12345.6789, 12345.6789, 12345.6789, 12345.6789, 0.000012345)", "0"},
	{"EVAL", "return string.format('%g|%g|%g|%g|%g', 100000, 1000000, 1e-4, 1e-5, 0.5)", "0"},
	{"EVAL", "return string.format('%.3g|%.0g|%.0f|%#.0f|%#g|%#.3g', 3.14159, 3.14159, 2.5, 2.5, 1.5, 1)", "0"},
	{"EVAL", "return string.format('%10.3f|%-10.3f|%010.3f|%+.2e|% .2f', 3.14159, 3.14159, -3.14159, 12345, 1)", "0"},
	{"EVAL", "return string.format('%f|%f|%f|%e|%g|%G', 1/0, -1/0, 0/0, 1/0, -1/0, 1/0)", "0"},
	{"EVAL", "return string.format('%5f|%-6f|%05f|%+f|% f', 1/0, 1/0, 1/0, 1/0, 1/0)", "0"},
	{"EVAL", "return string.format('%f', -(0/0))", "0"},
	{"EVAL", "return string.format('%.20f', 0.1)", "0"},
	{"EVAL", "return string.format('%.99f', 1)", "0"},
	{"EVAL", "return string.format('%100f', 1)", "0"},
	{"EVAL", "return string.format('%5.2s|%-5s|%5s|%.0s|%.1s', 'abc', 'ab', 'ab', 'abc', 'abc')", "0"},
	{"EVAL", "return string.format('%05s|', 'ab')", "0"},
	{"EVAL", "return string.format('%s', 1/3)", "0"},
	{"EVAL", "return string.format('%s', 1e15)", "0"},
	{"EVAL", "return string.format('%s', 2^63)", "0"},
	{"EVAL", "return string.format('%s', -0)", "0"},
	{"EVAL", "return string.format('%s', 1/0)", "0"},
	{"EVAL", "return string.format('%s', 'a\\0b')", "0"},
	{"EVAL", "return string.format('%s|', string.rep('x', 100))", "0"},
	{"EVAL", "return string.format('%.5s|', string.rep('x', 100))", "0"},
	{"EVAL", "return string.format('%5s|', string.rep('x', 100) .. '\\0y')", "0"},
	{"EVAL", "return string.format('%s', true)", "0"},
	{"EVAL", "return string.format('%s', {})", "0"},
	{"EVAL", "return string.format('%s', nil)", "0"},
	{"EVAL", "return string.format('%q', 'a\\nb\\0c\"d\\\\e\\rf\\255')", "0"},
	{"EVAL", "return string.format('%q', 1/3)", "0"},
	{"EVAL", "return string.format('%q', 5)", "0"},
	{"EVAL", "return string.format('%10q', 'x')", "0"},
	{"EVAL", "return string.format('%a', 1)", "0"},
	{"EVAL", "return string.format('%z', 1)", "0"},
	{"EVAL", "return string.format('%', 1)", "0"},
	{"EVAL", "return string.format('abc%', 1)", "0"},
	{"EVAL", "return string.format('%-+ #0d', 1)", "0"},
	{"EVAL", "return string.format('%-+ #00d', 1)", "0"},
	{"EVAL", "return string.format('%123d', 1)", "0"},
	{"EVAL", "return string.format('%1.123d', 1)", "0"},
	{"EVAL", "return string.format('%99.99f', 1)", "0"},
	{"EVAL", "return string.format('%.f|%5.d|', 2.5, 3)", "0"},
	{"EVAL", "return string.format('%%|%%%d', 5)", "0"},
	{"EVAL", "return string.format()", "0"},
	{"EVAL", "return string.format(5)", "0"},
	{"EVAL", "return string.format(12.5)", "0"},
	{"EVAL", "return ('%d:%s'):format(7, 'x')", "0"},
	{"EVAL", "return string.format('%s', 12345678901234567)", "0"},
	{"EVAL", "return string.format('%d', 12345678901234567)", "0"},
	{"EVAL", "return string.format('%.14g', 0.1)", "0"},
	{"EVAL", "return string.format('%5.3s|%-5.3s|', 'a\\0bcd', 'abcdef')", "0"},
	{"EVAL", "return string.format('%c', 256+65)", "0"},
	{"EVAL", "return string.format('%c', -1)", "0"},
	{"EVAL", "return string.format('%s %d', 'x', '0x1p4')", "0"},
	{"EVAL", "return string.format('%d', '1e400')", "0"},
	{"EVAL", "return string.format('%f', '  12  ')", "0"},
	{"EVAL", "return string.format('%d|%f|%s|%x', ARGV[1], ARGV[2], ARGV[3], ARGV[4])", "0", "1e3", "-7.5", "abc", " 0x10 "},
	{"EVAL", "return string.format('%#010x|%#08X|%#10x|%-#10x|%#010x|%#3x|%#04x', 255, 255, 255, 255, 0, 255, 255)", "0"},
	{"EVAL", "return string.format('%+.0d|% .0d|%.0d|%5.0d|%-+5.0d|', 0, 0, 0, 0, 0)", "0"},
	{"EVAL", "return string.format('%#.0o|%.0o|%.0x|%#.0x|%.0u|%5.0x|', 0, 0, 0, 0, 0, 0)", "0"},
	{"EVAL", "return string.format('%c|%c|%c', 2^32+65, 2^31, -2^31+66)", "0"},
	{"EVAL", "return string.format('%#08o|%#o|%#.3o|%#x', 8, 0, 8, 0)", "0"},
	{"EVAL", "return string.format('%+5f|% f|%-+8g|', 0/0, 1/0, -1/0)", "0"},
	{"EVAL", "return string.format('%010d|%-010d|%+010d|% 010d', -42, -42, 42, 42)", "0"},
	{"EVAL", "return string.format('%#5.3x|%#.3x|%#010.3x', 255, 255, 255)", "0"},
	// the bit library, Lua BitOp's (script SC7)
	{"EVAL", "return {bit.tobit(0xffffffff), bit.tobit(0xffffffff + 1), bit.tobit(2^40 + 1234), bit.tobit(-1), bit.tobit(1.5), bit.tobit(2.5), bit.tobit(-1.5), bit.tobit(3.7)}", "0"},
	{"EVAL", "return {bit.tobit('12'), bit.tobit(' 0x10 ')}", "0"},
	{"EVAL", "return bit.tobit('x')", "0"},
	{"EVAL", "return bit.tobit()", "0"},
	{"EVAL", "return bit.tobit(nil)", "0"},
	{"EVAL", "return bit.tobit({})", "0"},
	{"EVAL", "return bit.tobit('0')", "0"},
	{"EVAL", "return {bit.bnot(0), bit.bnot(-1), bit.bnot(5)}", "0"},
	{"EVAL", "return {bit.band(0xff, 0x0f, 0x3), bit.bor(1, 2, 4, 8), bit.bxor(0xff, 0x0f), bit.band(5), bit.bor(-1, 0)}", "0"},
	{"EVAL", "return bit.band(1, 'x', {})", "0"},
	{"EVAL", "return bit.band()", "0"},
	{"EVAL", "return bit.bor(1, nil)", "0"},
	{"EVAL", "return {bit.lshift(1, 0), bit.lshift(1, 31), bit.lshift(1, 32), bit.lshift(1, 33), bit.lshift(1, -1), bit.rshift(-1, 1), bit.rshift(-1, 31), bit.arshift(-256, 4), bit.arshift(256, 4), bit.arshift(-1, 31)}", "0"},
	{"EVAL", "return {bit.rol(0x12345678, 12), bit.ror(0x12345678, 12), bit.rol(1, 0), bit.ror(1, 32), bit.rol(-1, 7)}", "0"},
	{"EVAL", "return {bit.bswap(0x12345678), bit.bswap(-1), bit.bswap(0x80)}", "0"},
	{"EVAL", "return {bit.tohex(1), bit.tohex(-1), bit.tohex(255, 2), bit.tohex(255, -2), bit.tohex(0x12345678, 4), bit.tohex(1, 20), bit.tohex(1, 0), bit.tohex(-1, -8)}", "0"},
	{"EVAL", "return bit.tohex(1, nil)", "0"},
	{"EVAL", "return bit.tohex()", "0"},
	{"EVAL", "return type(bit)", "0"},
	{"EVAL", "return pcall(function() bit.band = nil end)", "0"},
	{"EVAL", "return bit.lshift(1)", "0"},
	{"EVAL", "return {bit.tobit(2^31), bit.tobit(-2^31), bit.tobit(2^32 - 0.5), bit.tobit(1e300), bit.tobit(1/0), bit.tobit(0/0)}", "0"},
	{"EVAL", "return bit.tohex(65535, '4')", "0"},
	// numbers as arguments: "%.17g", as C prints infinities and NaNs
	{"EVAL", "redis.call('set', 'n', 1/0); return redis.call('get', 'n')", "0"},
	{"EVAL", "redis.call('set', 'n', -1/0); return redis.call('get', 'n')", "0"},
	{"EVAL", "redis.call('set', 'n', -(0/0)); return redis.call('get', 'n')", "0"},
	{"EVAL", "redis.call('set', 'n', 0/0); return redis.call('get', 'n')", "0"},
	{"EVAL", "redis.call('set', 'n', -0.0); return redis.call('get', 'n')", "0"},
	{"EVAL", "redis.call('set', 'n', 1e-5); return redis.call('get', 'n')", "0"},
	{"EVAL", "error('boom')", "0"},
	{"EVAL", "error({err='MYERR custom'})", "0"},
	// error(msg, level) places msg as Lua 5.1's luaL_where(level) does
	{"EVAL", "error(123)", "0"},
	{"EVAL", "error('boom', 2)", "0"},
	{"EVAL", "error('boom', 0)", "0"},
	{"EVAL", "local function f() error('deep', 2) end\nf()", "0"},
	{"EVAL", "local ok, e = pcall(error, 'x'); return {tostring(ok), e}", "0"},
	{"EVAL", "local ok, e = pcall(function() error('x') end); return e", "0"},
	{"EVAL", "local ok, e = pcall(error); return {tostring(ok), tostring(e)}", "0"},
	{"EVAL", "local ok, e = pcall(error, {1}); return {tostring(ok), type(e)}", "0"},
	{"EVAL", "return redis.error_reply('My Error')", "0"},
	{"EVAL", "return redis.error_reply('-MY x')", "0"},
	{"EVAL", "return redis.status_reply('FINE')", "0"},
	{"EVAL", "return {err='boom'}", "0"},
	{"EVAL", "return redis.sha1hex('')", "0"},
	{"EVAL", "return {redis.acl_check_cmd('get', 'x'), redis.acl_check_cmd('SET', 'x', 1), redis.acl_check_cmd('get')}", "0"},
	{"EVAL", "return redis.acl_check_cmd('nosuch')", "0"},
	{"EVAL", "return redis.acl_check_cmd()", "0"},
	{"EVAL", "return redis.acl_check_cmd({})", "0"},
	{"EVAL", "return redis.sha1hex()", "0"},
	{"EVAL", "return redis.setresp(4)", "0"},
	{"EVAL", "redis.log(redis.LOG_WARNING, 'from a test')", "0"},
	{"EVAL", "return redis.log(9, 'x')", "0"},
	{"EVAL", "return cjson.encode({1,2})", "0"},
	{"EVAL", "return cjson.decode('[1,2]')", "0"},
	// cjson as lua-cjson 2.1 (Redis's): nulls kept as cjson.null, {} an
	// object, %.14g numbers, '/' escaped, shared tables, its error texts
	{"EVAL", "return cjson.decode('[1,null,3]')", "0"},
	{"EVAL", "local t = cjson.decode('{\"a\":null}'); return {t.a == cjson.null, type(cjson.null)}", "0"},
	{"EVAL", "return cjson.encode({cjson.null, cjson.decode('null')})", "0"},
	{"EVAL", "return cjson.encode({})", "0"},
	{"EVAL", "return cjson.encode(cjson.decode('{\"a\":[]}'))", "0"},
	{"EVAL", `return cjson.encode({a='<b>/&"\\\n\0\1\127\200'})`, "0"},
	{"EVAL", "return cjson.encode({1/3, 1e20, 0.1, 100, -0.0, 2^53})", "0"},
	{"EVAL", "return cjson.encode({[1]=1, [3]=3})", "0"},
	{"EVAL", "return cjson.encode({[1]=1, [30]=3})", "0"},
	{"EVAL", "return cjson.encode({[1.5]=1})", "0"},
	{"EVAL", "return cjson.encode({[true]=1})", "0"},
	{"EVAL", "local x = {1}; return cjson.encode({x, x})", "0"},
	{"EVAL", "local x = {}; x[1] = x; return cjson.encode(x)", "0"},
	{"EVAL", "return cjson.encode(function() end)", "0"},
	{"EVAL", "return cjson.encode(1/0)", "0"},
	{"EVAL", "return cjson.encode()", "0"},
	{"EVAL", "return cjson.decode('[1]', 2)", "0"},
	{"EVAL", "return cjson.decode(1)", "0"},
	{"EVAL", "return cjson.decode({})", "0"},
	{"EVAL", `return cjson.decode('"\\u00e9\\ud83d\\ude00\\/\\t"')`, "0"},
	{"EVAL", "return {cjson.decode('1e2'), cjson.decode('-0'), cjson.decode(' true '), cjson.decode('false')}", "0"},
	{"EVAL", "return cjson.decode('bad')", "0"},
	{"EVAL", "return cjson.decode('')", "0"},
	{"EVAL", "return cjson.decode('[1,2')", "0"},
	{"EVAL", "return cjson.decode('[1,]')", "0"},
	{"EVAL", "return cjson.decode('1 2')", "0"},
	{"EVAL", "return cjson.decode('{\"a\":1,}')", "0"},
	{"EVAL", "return cjson.decode('{\"a\" 1}')", "0"},
	{"EVAL", "return cjson.decode('{1:1}')", "0"},
	{"EVAL", "return cjson.decode('\"abc')", "0"},
	{"EVAL", "return cjson.decode('\"\\q\"')", "0"},
	{"EVAL", "return cjson.decode('\"\\u12\"')", "0"},
	{"EVAL", "return cjson.decode('-')", "0"},
	// lua-cjson's settings, kept by the interpreter from run to run
	{"EVAL", "return {cjson._NAME, cjson._VERSION, cjson.encode_max_depth(), cjson.decode_max_depth(), cjson.encode_number_precision(), cjson.encode_keep_buffer(), cjson.decode_invalid_numbers()}", "0"},
	{"EVAL", "return {cjson.encode_invalid_numbers(), cjson.encode_sparse_array()}", "0"},
	{"EVAL", "return cjson.encode_max_depth(0)", "0"},
	{"EVAL", "return cjson.encode_max_depth(5, 6)", "0"},
	{"EVAL", "return cjson.encode_number_precision(15)", "0"},
	{"EVAL", "return cjson.encode_keep_buffer('x')", "0"},
	{"EVAL", "return {cjson.encode_invalid_numbers('null'), cjson.encode({1/0}), cjson.encode_invalid_numbers(true), cjson.encode({1/0, -1/0}), cjson.encode_invalid_numbers(false)}", "0"},
	// (the errors of pcall(cjson.encode, ...) compared without gopher-lua's
	// "user_script:1: ", which Redis's C functions do not get under pcall)
	{"EVAL", "cjson.encode_max_depth(1); local ok, e = pcall(cjson.encode, {{1}}); return {ok, (e:gsub('^user_script:1: ', ''))}", "0"},
	{"EVAL", "local ok, e = pcall(cjson.encode, {{1}}); return {ok, (e:gsub('^user_script:1: ', '')), cjson.encode_max_depth(1000)}", "0"},
	{"EVAL", "cjson.decode_max_depth(1); local ok, e = pcall(cjson.decode, '[[1]]'); cjson.decode_max_depth(1000); return {ok, (e:gsub('^user_script:1: ', ''))}", "0"},
	{"EVAL", "cjson.encode_number_precision(3); local s = cjson.encode({1/3}); cjson.encode_number_precision(14); return s", "0"},
	{"EVAL", "cjson.encode_sparse_array(true); local s = cjson.encode({[1]=1, [30]=3}); cjson.encode_sparse_array(false); return {s, cjson.encode_sparse_array()}", "0"},
	{"EVAL", "cjson.decode_invalid_numbers(false); local a = {pcall(cjson.decode, '0x10')}; local b = {pcall(cjson.decode, '[1, 012]')}; cjson.decode_invalid_numbers(true); return {(a[2]:gsub('^user_script:1: ', '')), (b[2]:gsub('^user_script:1: ', ''))}", "0"},
	{"EVAL", "local j = cjson.new(); j.encode_number_precision(2); return {j.encode({1/3}), cjson.encode({1/3})}", "0"},
	{"EVAL", "return {cjson.decode('+1'), cjson.decode('0x10'), cjson.decode('-inf')}", "0"},
	{"EVAL", "return cjson.decode('1e')", "0"},
	{"EVAL", "return cjson.decode('1-2')", "0"},
	{"EVAL", "return cjson.encode({[1/0]=1})", "0"},
	{"EVAL", "return {cjson.encode({[10]=1}), cjson.encode({x={[0]=1}}), cjson.encode({[2]=1})}", "0"},
	{"EVAL", "return cjson.decode(string.rep('[', 1001) .. string.rep(']', 1001))", "0"},
	{"EVAL", "return #cjson.encode(cjson.decode(string.rep('[', 1000) .. string.rep(']', 1000)))", "0"},
	{"EVAL", "return #KEYS + #ARGV", "2", "a", "b", "c"},
	// sandbox: globals are read-only, no os, io, loadfile, dofile, print
	{"EVAL", "x = 1", "0"},
	{"EVAL", "return y", "0"},
	{"EVAL", "string.foo = 1", "0"},
	{"EVAL", "redis.call = nil", "0"},
	{"EVAL", "rawset(_G, 'a', 1)", "0"},
	{"EVAL", "table.insert(_G, 1)", "0"},
	{"EVAL", "getmetatable('').x = 1", "0"},
	{"EVAL", "return tostring(getmetatable('').__index == string)", "0"},
	{"EVAL", "setmetatable(_G, nil)", "0"},
	{"EVAL", "setmetatable(1, {})", "0"},
	{"EVAL", "setmetatable(nil, {})", "0"},
	{"EVAL", "setmetatable()", "0"},
	{"EVAL", "return type(setmetatable({}, {}))", "0"},
	{"EVAL", "return os", "0"},
	{"EVAL", "return io", "0"},
	{"EVAL", "return loadfile", "0"},
	{"EVAL", "return dofile", "0"},
	{"EVAL", "return print", "0"},
	{"EVAL", "return require", "0"},
	{"EVAL", "return package", "0"},
	{"EVAL", "return debug", "0"},
	{"EVAL", "return type(string.rep)", "0"},
	{"EVAL", "return type(getfenv)", "0"},
	{"EVAL", "return type(setfenv)", "0"},
	{"EVAL", "return type(newproxy)", "0"},
	{"EVAL", "return type(module)", "0"},
	{"EVAL", "return {type(gcinfo()), type(collectgarbage('count')), collectgarbage(), collectgarbage('collect')}", "0"},
	{"EVAL", "return {type(load), type(loadstring), type(rawget), type(rawequal), type(gcinfo), type(coroutine)}", "0"},
	// read-only scripts and shebangs
	{"EVAL_RO", "return redis.call('set','a','b')", "0"},
	{"EVAL_RO", "return redis.call('get','a')", "0"},
	{"EVAL", "#!lua flags=no-writes\nreturn redis.call('set','a','b')", "0"},
	{"EVAL", "#!lua flags=no-writes\nreturn redis.call('publish','c','m')", "0"},
	{"EVAL_RO", "#!lua\nreturn 1", "0"},
	{"EVAL", "#!lua flags=bogus\nreturn 1", "0"},
	{"EVAL", "#!python\nreturn 1", "0"},
	{"EVAL", "#!lua", "0"},
	// arguments
	{"EVAL", "return 1", "-1"},
	{"EVAL", "return 1", "2", "a"},
	{"EVAL", "return 1", "x"},
	{"EVAL"},
	{"EVALSHA", "0123456789012345678901234567890123456789", "0"},
	{"EVALSHA", "short", "0"},
	{"SCRIPT", "LOAD", "return 'loaded'"},
	{"EVALSHA", "b534286061d4b9e4026607613b95c06c06015ae8", "0"},
	{"EVALSHA", "B534286061D4B9E4026607613B95C06C06015AE8", "0"},
	{"EVALSHA_RO", "b534286061d4b9e4026607613b95c06c06015ae8", "0"},
	{"SCRIPT", "EXISTS", "b534286061d4b9e4026607613b95c06c06015ae8", "ffff"},
	{"SCRIPT", "KILL"},
	{"SCRIPT", "FLUSH", "bad"},
	{"SCRIPT", "FLUSH"},
	{"SCRIPT", "EXISTS", "b534286061d4b9e4026607613b95c06c06015ae8"},
	{"SCRIPT", "NOSUCH"},
	{"SCRIPT", "LOAD"},
	// no function is ever loaded: FUNCTION FLUSH and LIST answer as then
	{"FUNCTION", "FLUSH"}, {"FUNCTION", "FLUSH", "ASYNC"}, {"FUNCTION", "FLUSH", "sync"}, {"FUNCTION", "FLUSH", "x"},
	{"FUNCTION", "FLUSH", "SYNC", "x"}, {"FUNCTION", "LIST"}, {"FUNCTION", "LIST", "WITHCODE", "LIBRARYNAME", "l*"},
	{"FUNCTION", "LIST", "LIBRARYNAME"}, {"FUNCTION", "LIST", "NOPE"},
}

// TestScriptsMatchRedis (S31): each case answers as redis-server 7.0
// answers it, byte for byte, in RESP2 and RESP3.
func TestScriptsMatchRedis(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run("RESP"+strconv.Itoa(proto), func(t *testing.T) {
			p := newPeers(t, 1, proto, nil)
			for _, c := range scriptCases {
				p.same(0, c...)
			}
		})
	}
}

// TestScriptSandboxLeaksNothing (S31): what one script does to the
// globals and libraries (through every path that gets past the read-only
// proxies: setfenv, absent as in Redis 7.0, the string metatable, the
// metatables nil, booleans, numbers and functions share) is not seen by
// the next.
func TestScriptSandboxLeaksNothing(t *testing.T) {
	_, path := startServer(t, nil)
	c := dialPeer(t, path)
	for _, escape := range []string{
		"setfenv(0, {x=1})",
		"getmetatable('').__index = {upper = function() return 'pwned' end}",
		"local mt = getmetatable(''); mt.x = 1",
		"pcall(rawset, _G, 'leak', 1)",
		"pcall(table.insert, string, 1, 'leak')",
		"pcall(setmetatable, nil, {__index = function() return 'leak' end})",
		"pcall(setmetatable, true, {__index = function() return 'leak' end})",
		"pcall(setmetatable, 1, {__index = function() return 'leak' end})",
		"pcall(setmetatable, redis.call, {__index = function() return 'leak' end})",
	} {
		c.do("EVAL", escape, "0")
		if got := c.do("EVAL", "return string.upper('ok')", "0"); got != "$2\r\nOK\r\n" {
			t.Errorf("after %q, string.upper('ok') = %q", escape, got)
		}
		if got := c.do("EVAL", "return type(redis.call)", "0"); got != "$8\r\nfunction\r\n" {
			t.Errorf("after %q, type(redis.call) = %q", escape, got)
		}
		// No value but a table has a metatable a script set.
		indexable := "local function f(v) return (pcall(function() return v.x end)) end; return tostring(f(nil) or f(true) or f(1) or f(redis.call))"
		if got := c.do("EVAL", indexable, "0"); got != "$5\r\nfalse\r\n" {
			t.Errorf("after %q, a nil, boolean, number or function can be indexed: %q", escape, got)
		}
	}
}

// TestScriptIsAtomic (S31): no command of another client runs inside a
// script: clients INCR a key while scripts read it, spin, and write it
// back plus one; no increment is lost.
func TestScriptIsAtomic(t *testing.T) {
	_, path := startServer(t, nil)
	const clients, each = 4, 200
	script := "local v = tonumber(redis.call('get', KEYS[1]) or '0'); for i = 1, 2000 do end; return redis.call('set', KEYS[1], v + 1)"
	var wg sync.WaitGroup
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c := dialPeer(t, path)
			for j := 0; j < each; j++ {
				if i%2 == 0 {
					c.do("INCR", "counter")
				} else if r := c.do("EVAL", script, "1", "counter"); r != "+OK\r\n" {
					t.Errorf("EVAL: %q", r)
					return
				}
			}
		}(i)
	}
	wg.Wait()
	c := dialPeer(t, path)
	want := strconv.Itoa(clients * each)
	if got := c.do("GET", "counter"); got != "$"+strconv.Itoa(len(want))+"\r\n"+want+"\r\n" {
		t.Fatalf("counter %q, want %s: an increment was lost inside a script", got, want)
	}
}

// TestBusyScriptAndKill (S31): past busy-reply-threshold other clients get
// BUSY; SCRIPT KILL ends a script that wrote nothing, and answers
// UNKILLABLE for one that wrote; the killed script's caller gets Redis's
// error; the server serves again after.
func TestBusyScriptAndKill(t *testing.T) {
	p := newPeers(t, 3, 2, nil)
	for _, side := range [][]*rawPeer{p.ours, p.peer} {
		side[1].do("CONFIG", "SET", "busy-reply-threshold", "100")
		side[0].send("EVAL", "local i = 0; while true do i = i + 1 end", "0")
	}
	time.Sleep(300 * time.Millisecond)
	p.same(1, "GET", "x")
	// Of SCRIPT, only KILL is allow_busy.
	p.same(1, "SCRIPT", "LOAD", "return 'busy'")
	p.same(1, "SCRIPT", "EXISTS", "0123456789012345678901234567890123456789")
	p.same(1, "SCRIPT", "FLUSH")
	p.same(1, "SCRIPT", "HELP")
	p.same(1, "MULTI")
	p.same(1, "GET", "x")
	p.same(1, "DISCARD")
	// A refused EXEC aborts and leaves MULTI (S77), as Redis's unit/multi
	// "EXEC and script timeout" checks.
	p.same(1, "MULTI")
	p.same(1, "INCR", "x")
	p.same(1, "EXEC")
	p.same(1, "PING", "asdf")
	p.same(1, "EXEC")
	p.same(2, "SCRIPT", "KILL")
	p.sameRead(0, 5*time.Second, "the killed script's reply")
	p.same(1, "SET", "x", "1")
	// A script that wrote cannot be killed.
	for _, side := range [][]*rawPeer{p.ours, p.peer} {
		side[0].send("EVAL", "redis.call('set', 'w', '1'); while true do end", "0")
	}
	time.Sleep(300 * time.Millisecond)
	ours := p.ours[2].do("SCRIPT", "KILL")
	if !strings.HasPrefix(ours, "-UNKILLABLE ") {
		t.Fatalf("SCRIPT KILL of a script that wrote: %q", ours)
	}
}

// TestLateKillMissesNextScript: the runs share one context until a kill
// cancels it, so a SCRIPT KILL that found a script which then ended must
// not cancel the next one: scripting.kill cancels only while the script
// it saw still runs, and a killed context is not used again.
func TestLateKillMissesNextScript(t *testing.T) {
	s, path := startServer(t, nil)
	r := dialRaw(t, path)
	loop := "local i = 0 while i < 200000 do i = i + 1 end return i"
	r.cmd("EVAL", loop, "0")
	if got := r.reply(); got != ":200000" {
		t.Fatalf("first run: %q", got)
	}
	ended := &runningScript{sha: "ended"}
	if s.scr.kill(ended) {
		t.Fatal("kill of a script no longer running cancelled the shared context")
	}
	r.cmd("EVAL", loop, "0")
	if got := r.reply(); got != ":200000" {
		t.Fatalf("run after a late kill: %q", got)
	}
	s.scr.mu.Lock()
	s.scr.cancel() // as a kill of a running script leaves it
	s.scr.mu.Unlock()
	r.cmd("EVAL", loop, "0")
	if got := r.reply(); got != ":200000" {
		t.Fatalf("run after a cancelled context: %q", got)
	}
}

// TestScriptReadsLargeReplies: a script reads a command's reply whole,
// however it was written (in the buffer, held by reference, past the
// buffer), and the next command's reply after it.
func TestScriptReadsLargeReplies(t *testing.T) {
	_, path := startServer(t, nil)
	c := dialPeer(t, path)
	for _, n := range []int{10, 600, 200 << 10} {
		v := strings.Repeat("v", n)
		c.do("SET", "big", v)
		want := fmt.Sprintf("*2\r\n$%d\r\n%s\r\n$2\r\nOK\r\n", n, v)
		if got := c.do("EVAL", "return {redis.call('get', KEYS[1]), redis.call('set', KEYS[1], 'x')['ok']}", "1", "big"); got != want {
			t.Errorf("%d bytes: %.80q..., want %.80q...", n, got, want)
		}
	}
}

// TestBusyAfterAnEarlierRun (S31): the busy-reply-threshold timer is left
// armed by a short script; a long one that starts later still runs its
// own full threshold before other clients get BUSY.
func TestBusyAfterAnEarlierRun(t *testing.T) {
	_, path := startServer(t, nil)
	a, b := dialPeer(t, path), dialPeer(t, path)
	b.do("CONFIG", "SET", "busy-reply-threshold", "300")
	a.do("EVAL", "return 1", "0") // arms the timer for 300 ms from now
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	a.send("EVAL", "local i = 0; while true do i = i + 1 end", "0")
	time.Sleep(150 * time.Millisecond) // past the first run's deadline, not the long one's
	got := b.do("GET", "x")
	if !strings.HasPrefix(got, "-BUSY ") {
		t.Fatalf("GET during the script: %q", got)
	}
	if ran := time.Since(start); ran < 300*time.Millisecond {
		t.Fatalf("BUSY %v into a script with a 300 ms threshold", ran)
	}
	if got := b.do("SCRIPT", "KILL"); got != "+OK\r\n" {
		t.Fatalf("SCRIPT KILL: %q", got)
	}
}

// TestScriptCommandLatencyFromItsRun: the latency observed for a command a
// script calls counts from that script's run, not from the server's start
// or the connection's last script.
func TestScriptCommandLatencyFromItsRun(t *testing.T) {
	var mu sync.Mutex
	var longest time.Duration
	_, path := startServer(t, func(o *Options) {
		o.ObserveLatency = func(cmd string) func(time.Duration, int) {
			return func(d time.Duration, _ int) {
				mu.Lock()
				defer mu.Unlock()
				if cmd == "set" && d > longest {
					longest = d
				}
			}
		}
	})
	c := dialPeer(t, path)
	idle := time.Second
	for range 2 {
		time.Sleep(idle)
		c.do("EVAL", "return redis.call('set', KEYS[1], 'v')", "1", "k")
	}
	mu.Lock()
	defer mu.Unlock()
	if longest == 0 || longest >= idle {
		t.Fatalf("a script's SET observed %v (the connection idled %v before each script)", longest, idle)
	}
}

// TestHugeBusyThreshold (S31): a busy-reply-threshold of the largest
// duration (server.busy_script_time) is held within what a script's start
// plus it can reach, so no client is ever answered BUSY under it.
func TestHugeBusyThreshold(t *testing.T) {
	s, path := startServer(t, func(o *Options) { o.BusyScriptTime = math.MaxInt64 })
	if d := s.scr.busyAfter.Load(); d <= 0 || d > busyMaxNanos {
		t.Fatalf("threshold held as %d ns", d)
	}
	a, b := dialPeer(t, path), dialPeer(t, path)
	b.do("SET", "x", "1")
	a.do("EVAL", "return 1", "0")
	a.send("EVAL", "local i = 0 while i < 3000000 do i = i + 1 end return i", "0")
	time.Sleep(50 * time.Millisecond)
	if got := b.do("GET", "x"); got != "$1\r\n1\r\n" {
		t.Fatalf("GET during a script under the largest threshold: %q", got)
	}
}

// TestScriptCountInInfoMemory: number_of_cached_scripts is in INFO
// memory, where Redis 7.0 has it (clients and Redis's own tests read it
// there), and follows SCRIPT LOAD and SCRIPT FLUSH.
func TestScriptCountInInfoMemory(t *testing.T) {
	_, path := startServer(t, nil)
	r := dialRaw(t, path)
	for i := range 3 {
		r.cmd("SCRIPT", "LOAD", fmt.Sprintf("return %d", i))
		r.reply()
	}
	r.cmd("INFO", "memory")
	if l := lineWith(r.reply(), "number_of_cached_scripts:"); l != "number_of_cached_scripts:3" {
		t.Fatalf("INFO memory after 3 SCRIPT LOADs: %q", l)
	}
	r.cmd("SCRIPT", "FLUSH", "ASYNC")
	r.reply()
	r.cmd("INFO", "memory")
	if l := lineWith(r.reply(), "number_of_cached_scripts:"); l != "number_of_cached_scripts:0" {
		t.Fatalf("INFO memory after SCRIPT FLUSH: %q", l)
	}
}

// TestScriptErrorsCountedOnce: an error a script's command answered is
// counted in INFO errorstats once, where the command answered it, whether
// the script raises it, returns it or catches it, as redis-server 7.0
// counts it (ignore_error_stats_update); a script's own error once.
func TestScriptErrorsCountedOnce(t *testing.T) {
	p := newPeers(t, 1, 2, nil)
	p.same(0, "SET", "str", "abc")
	counts := func(c *rawPeer) string {
		var out []string
		for _, l := range strings.Split(c.do("INFO", "errorstats"), "\r\n") {
			if strings.HasPrefix(l, "errorstat_ERR:") || strings.HasPrefix(l, "errorstat_WRONGTYPE:") {
				out = append(out, l)
			}
		}
		return strings.Join(out, " ")
	}
	for _, script := range []string{
		"return redis.call('incr', 'str')",
		"return redis.pcall('incr', 'str')",
		"local ok = pcall(redis.call, 'incr', 'str'); return 1",
		"redis.pcall('incr', 'str'); return 1",
		"return redis.call('incr', 'a', 'b')",
		"return redis.pcall('nosuch')",
		"return redis.call('lpush', 'str', 'x')",
		"return redis.error_reply('ERR mine')",
		"error('boom')",
		"return redis.call()",
	} {
		ob, pb := counts(p.ours[0]), counts(p.peer[0])
		p.same(0, "EVAL", script, "0")
		oa, pa := counts(p.ours[0]), counts(p.peer[0])
		if !sameDelta(ob, oa, pb, pa) {
			t.Errorf("%s: tiercache %q -> %q, redis-server %q -> %q", script, ob, oa, pb, pa)
		}
	}
}

// sameDelta reports that the errorstat counts of "errorstat_X:count=N ..."
// lines rose by as much from b1 to a1 as from b2 to a2.
func sameDelta(b1, a1, b2, a2 string) bool {
	parse := func(s string) map[string]int {
		m := map[string]int{}
		for _, f := range strings.Fields(s) {
			k, v, _ := strings.Cut(f, ":count=")
			m[k], _ = strconv.Atoi(v)
		}
		return m
	}
	x1, y1, x2, y2 := parse(b1), parse(a1), parse(b2), parse(a2)
	for _, k := range []string{"errorstat_ERR", "errorstat_WRONGTYPE"} {
		if y1[k]-x1[k] != y2[k]-x2[k] {
			return false
		}
	}
	return true
}

// TestClusterScriptsMatchRedis (CL2): in cluster mode a script's commands
// keep to one slot as in Redis Cluster: a command of several slots, or a
// key of another slot than the script's first (unless
// allow-cross-slot-keys), is refused inside the script with Redis's
// error, and a no-cluster script does not run.
func TestClusterScriptsMatchRedis(t *testing.T) {
	peer, pPort, pBus := startRedisCluster(t)
	// Listening on every address: the address announced is the one each
	// client reached, 127.0.0.1 for the Unix socket's.
	_, sock, port := startClusterServer(t, func(o *Options) { o.TCPAddr = "0.0.0.0:0" })
	p := &peerPair{t: t, ours: dialRaw(t, sock), peer: peer}
	// CLUSTER's topology from a script (its connection has no socket of
	// its own: the address is its client's), in RESP2 and RESP3.
	pID, oID := myID(t, peer), myID(t, p.ours)
	for _, proto := range []string{"2", "3"} {
		p.do("HELLO", proto)
		for _, sub := range []string{"SLOTS", "SHARDS", "NODES", "MYID", "INFO", "LINKS", "KEYSLOT"} {
			args := []string{"EVAL", "redis.setresp(" + proto + "); return redis.call('cluster', '" + sub + "', unpack(ARGV))", "0"}
			if sub == "KEYSLOT" {
				args = append(args, "{b}x")
			}
			o, r := p.do(args...)
			if proto == "3" && sub == "SHARDS" {
				// A RESP3 map comes back in the order of the script
				// engine's Lua table, not Redis's Lua's: the same
				// fields in another order (RESP2 above has them in order).
				if no, nr := clusterNorm(o, oID, port, "0"), clusterNorm(r, pID, pPort, pBus); !strings.HasPrefix(no, "*[%[$slots") || len(no) != len(nr) {
					t.Errorf("RESP3 %q: tiercache %q, redis-server %q", args, o, r)
				}
				continue
			}
			if no, nr := clusterNorm(o, oID, port, "0"), clusterNorm(r, pID, pPort, pBus); no != nr {
				t.Errorf("RESP%s %q:\n tiercache    %q\n redis-server %q", proto, args, no, nr)
			}
		}
	}
	p.do("HELLO", "2")
	// b (3300), f (3168); {b}x is b's slot.
	for _, args := range [][]string{
		{"EVAL", "return redis.call('mset', 'b', '1', 'f', '2')", "0"},
		{"EVAL", "return redis.pcall('mget', 'b', 'f')", "0"},
		{"EVAL", "redis.call('set', 'b', '1'); return redis.call('set', 'f', '1')", "0"},
		{"EVAL", "redis.call('set', KEYS[1], '2'); return redis.call('set', 'f', '2')", "1", "b"},
		{"EVAL", "redis.call('set', 'b', '3'); return redis.call('set', '{b}x', '3')", "0"},
		{"EVAL", "return redis.call('get', 'f')", "1", "b"},
		{"EVAL", "#!lua\nredis.call('set', 'b', '4'); return redis.call('set', 'f', '4')", "0"},
		{"EVAL", "#!lua flags=allow-cross-slot-keys\nredis.call('set', 'b', '5'); return redis.call('set', 'f', '5')", "0"},
		{"EVAL", "#!lua flags=allow-cross-slot-keys\nreturn redis.pcall('mget', 'b', 'f')", "0"},
		{"EVAL", "#!lua flags=no-cluster\nreturn 1", "0"},
		{"EVAL_RO", "#!lua flags=no-cluster,no-writes\nreturn 1", "0"},
		{"MGET", "b", "{b}x"}, {"GET", "f"},
	} {
		if ours, peer := p.do(args...); ours != peer {
			t.Errorf("%q: tiercache %q, redis-server %q", args, ours, peer)
		}
	}
}

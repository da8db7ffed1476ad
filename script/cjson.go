package script

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"
)

// cjson is Redis's cjson library (lua-cjson 2.1 as Redis 7.0 builds it,
// deps/lua/src/lua_cjson.c, default settings): a JSON null decodes to
// cjson.null, which encodes as null and is a nil reply; an empty table
// encodes as {}; a table is an array when its keys are the integers 1..n
// (holes null, unless fewer than half are there past 10); numbers are
// "%.14g"; '/' is escaped and bytes past 0x7f are not; 1000 levels of
// nesting at most either way. Its error texts are lua-cjson's.
type cjson struct {
	null *lua.LUserData // cjson.null, lua-cjson's NULL lightuserdata
	cfg  cjsonConfig
}

// cjsonConfig is lua-cjson's json_config_t: what the encode_* and
// decode_* functions set, kept by the interpreter from run to run as
// Redis's is.
type cjsonConfig struct {
	sparseConvert             int // 0 off, 1 on
	sparseRatio, sparseSafe   int
	encodeDepth, decodeDepth  int
	precision                 int
	keepBuffer, decodeInvalid int // 0 off, 1 on
	encodeInvalid             int // 0 off, 1 on, 2 null
}

// newCjson is a cjson with lua-cjson's defaults (lua_cjson.c DEFAULT_*).
func newCjson(null *lua.LUserData) *cjson {
	return &cjson{null: null, cfg: cjsonConfig{sparseRatio: 2, sparseSafe: 10, encodeDepth: 1000, decodeDepth: 1000,
		precision: 14, keepBuffer: 1, decodeInvalid: 1}}
}

func (cj *cjson) table(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	c := &cj.cfg
	fns := map[string]lua.LGFunction{
		"encode": cj.encode,
		"decode": cj.decode,
		"new":    func(L *lua.LState) int { L.Push(newCjson(cj.null).table(L)); return 1 },
		"encode_sparse_array": func(L *lua.LState) int {
			cjsonArgs(L, "encode_sparse_array", 3)
			convert := cjsonEnum(L, "encode_sparse_array", 1, &c.sparseConvert, nil)
			ratio := cjsonInt(L, "encode_sparse_array", 2, &c.sparseRatio, 0)
			safe := cjsonInt(L, "encode_sparse_array", 3, &c.sparseSafe, 0)
			return push(L, convert, ratio, safe)
		},
		"encode_max_depth": func(L *lua.LState) int {
			cjsonArgs(L, "encode_max_depth", 1)
			return push(L, cjsonInt(L, "encode_max_depth", 1, &c.encodeDepth, 1))
		},
		"decode_max_depth": func(L *lua.LState) int {
			cjsonArgs(L, "decode_max_depth", 1)
			return push(L, cjsonInt(L, "decode_max_depth", 1, &c.decodeDepth, 1))
		},
		"encode_number_precision": func(L *lua.LState) int {
			cjsonArgs(L, "encode_number_precision", 1)
			return push(L, cjsonInt(L, "encode_number_precision", 1, &c.precision, 1, 14))
		},
		"encode_keep_buffer": func(L *lua.LState) int {
			cjsonArgs(L, "encode_keep_buffer", 1)
			return push(L, cjsonEnum(L, "encode_keep_buffer", 1, &c.keepBuffer, nil))
		},
		"encode_invalid_numbers": func(L *lua.LState) int {
			cjsonArgs(L, "encode_invalid_numbers", 1)
			return push(L, cjsonEnum(L, "encode_invalid_numbers", 1, &c.encodeInvalid, []string{"off", "on", "null"}))
		},
		"decode_invalid_numbers": func(L *lua.LState) int {
			cjsonArgs(L, "decode_invalid_numbers", 1)
			return push(L, cjsonEnum(L, "decode_invalid_numbers", 1, &c.decodeInvalid, nil))
		},
	}
	for name, fn := range fns {
		t.RawSetString(name, L.NewFunction(fn))
	}
	t.RawSetString("null", cj.null)
	t.RawSetString("_NAME", lua.LString("cjson"))
	t.RawSetString("_VERSION", lua.LString("2.1.0"))
	return t
}

// push pushes vs and returns how many.
func push(L *lua.LState, vs ...lua.LValue) int {
	for _, v := range vs {
		L.Push(v)
	}
	return len(vs)
}

// cjsonArgs refuses more than n arguments (json_arg_init).
func cjsonArgs(L *lua.LState, fn string, n int) {
	if L.GetTop() > n {
		L.RaiseError("bad argument #%d to '%s' (found too many arguments)", n+1, fn)
	}
}

// cjsonInt sets *v from argument i when given, between lo and hi
// (default the largest int32), and returns it (json_integer_option).
func cjsonInt(L *lua.LState, fn string, i int, v *int, lo int, hi ...int) lua.LValue {
	max := math.MaxInt32
	if len(hi) > 0 {
		max = hi[0]
	}
	if a := L.Get(i); a != lua.LNil {
		toNumber(L, i)
		n, ok := L.Get(i).(lua.LNumber)
		if !ok || int(n) < lo || int(n) > max {
			L.RaiseError("bad argument #%d to '%s' (expected integer between %d and %d)", i, fn, lo, max)
		}
		*v = int(n)
	}
	return lua.LNumber(*v)
}

// cjsonEnum sets *v from argument i when given, a boolean or one of
// options (off and on when nil), and returns it: a boolean for off and
// on, else its name (json_enum_option).
func cjsonEnum(L *lua.LState, fn string, i int, v *int, options []string) lua.LValue {
	if options == nil {
		options = []string{"off", "on"}
	}
	switch a := L.Get(i).(type) {
	case *lua.LNilType:
	case lua.LBool:
		*v = 0
		if a {
			*v = 1
		}
	default:
		s := lua.LVAsString(a)
		if _, isStr := a.(lua.LString); !isStr && a.Type() != lua.LTNumber {
			L.RaiseError("bad argument #%d to '%s' (string expected, got %s)", i, fn, a.Type().String())
		}
		k := slices.Index(options, s)
		if k < 0 {
			L.RaiseError("bad argument #%d to '%s' (invalid option '%s')", i, fn, s)
		}
		*v = k
	}
	if *v <= 1 {
		return lua.LBool(*v == 1)
	}
	return lua.LString(options[*v])
}

func (cj *cjson) encode(L *lua.LState) int {
	if L.GetTop() != 1 {
		L.RaiseError("bad argument #1 to 'encode' (expected 1 argument)")
	}
	b, err := cj.appendValue(nil, L.Get(1), 0)
	if err != "" {
		L.RaiseError("%s", err)
	}
	L.Push(lua.LString(b))
	return 1
}

// appendValue appends v's JSON, or returns lua-cjson's error text.
func (cj *cjson) appendValue(b []byte, v lua.LValue, depth int) ([]byte, string) {
	switch v := v.(type) {
	case lua.LString:
		return appendJSONString(b, string(v)), ""
	case lua.LNumber:
		return cj.appendNumber(b, float64(v))
	case lua.LBool:
		return strconv.AppendBool(b, bool(v)), ""
	case *lua.LNilType:
		return append(b, "null"...), ""
	case *lua.LUserData:
		if v == cj.null {
			return append(b, "null"...), ""
		}
	case *lua.LTable:
		return cj.appendTable(b, v, depth+1)
	}
	return b, "Cannot serialise " + v.Type().String() + ": type not supported"
}

func (cj *cjson) appendTable(b []byte, t *lua.LTable, depth int) ([]byte, string) {
	if depth > cj.cfg.encodeDepth {
		return b, "Cannot serialise, excessive nesting (" + strconv.Itoa(depth) + ")"
	}
	n, err := cj.arrayLength(t)
	if err != "" {
		return b, err
	}
	var bad string
	if n > 0 {
		b = append(b, '[')
		for i := 1; i <= n; i++ {
			if i > 1 {
				b = append(b, ',')
			}
			if b, bad = cj.appendValue(b, t.RawGetInt(i), depth); bad != "" {
				return b, bad
			}
		}
		return append(b, ']'), ""
	}
	b = append(b, '{')
	first := true
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		if !first {
			b = append(b, ',')
		}
		first = false
		switch k := k.(type) {
		case lua.LString:
			b = appendJSONString(b, string(k))
		case lua.LNumber:
			b = append(b, '"')
			if b, bad = cj.appendNumber(b, float64(k)); bad != "" {
				return b, bad
			}
			b = append(b, '"')
		default:
			return b, "Cannot serialise " + k.Type().String() + ": table key must be a number or string"
		}
		b = append(b, ':')
		if b, bad = cj.appendValue(b, v, depth); bad != "" {
			return b, bad
		}
	}
	return append(b, '}'), ""
}

// arrayLength is lua-cjson's lua_array_length: the largest key when every
// key is a positive integer (0 for an empty table), -1 when not an array
// or, with encode_sparse_array's convert on, too sparse.
func (cj *cjson) arrayLength(t *lua.LTable) (int, string) {
	max, items := 0, 0
	for k, _ := t.Next(lua.LNil); k != lua.LNil; k, _ = t.Next(k) {
		n, ok := k.(lua.LNumber)
		if !ok || float64(n) < 1 || math.Floor(float64(n)) != float64(n) || math.IsInf(float64(n), 1) {
			return -1, ""
		}
		max = int(math.Min(float64(n), math.MaxInt32))
		items++
	}
	c := &cj.cfg
	if c.sparseRatio > 0 && max > items*c.sparseRatio && max > c.sparseSafe {
		if c.sparseConvert == 0 {
			return -1, "Cannot serialise table: excessively sparse array"
		}
		return -1, ""
	}
	return max, ""
}

// appendNumber is lua-cjson's json_append_number: "%.14g" (or
// encode_number_precision's digits); NaN and the infinities are refused,
// or written as nan and %g prints the infinities, or as null
// (encode_invalid_numbers).
func (cj *cjson) appendNumber(b []byte, f float64) ([]byte, string) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		switch cj.cfg.encodeInvalid {
		case 0:
			return b, "Cannot serialise number: must not be NaN or Inf"
		case 2:
			return append(b, "null"...), ""
		}
		if math.IsNaN(f) {
			return append(b, "nan"...), ""
		}
		return appendNumberArg(b, f), ""
	}
	return strconv.AppendFloat(b, f, 'g', cj.cfg.precision, 64), ""
}

// appendJSONString escapes as lua-cjson's char2escape: '"', '\\' and '/',
// the control characters and 0x7f; other bytes are copied.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\' || c == '/':
			b = append(b, '\\', c)
		case c == '\b':
			b = append(b, `\b`...)
		case c == '\f':
			b = append(b, `\f`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '\r':
			b = append(b, `\r`...)
		case c == '\t':
			b = append(b, `\t`...)
		case c < 0x20 || c == 0x7f:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

func (cj *cjson) decode(L *lua.LState) int {
	if L.GetTop() != 1 {
		L.RaiseError("bad argument #1 to 'decode' (expected 1 argument)")
	}
	var s string
	switch v := L.Get(1).(type) {
	case lua.LString:
		s = string(v)
	case lua.LNumber: // luaL_checklstring: "%.14g"
		s = strconv.FormatFloat(float64(v), 'g', 14, 64)
	default:
		L.RaiseError("bad argument #1 to 'decode' (string expected, got %s)", v.Type().String())
	}
	if len(s) >= 2 && (s[0] == 0 || s[1] == 0) {
		L.RaiseError("JSON parser does not support UTF-16 or UTF-32")
	}
	d := &jsonDecoder{L: L, s: s, null: cj.null, cfg: &cj.cfg}
	v := d.value(d.next())
	if t := d.next(); t.kind != tEnd {
		d.fail("the end", t)
	}
	L.Push(v)
	return 1
}

// The token kinds of lua-cjson, by the names its errors give them.
const (
	tObjBegin = iota
	tObjEnd
	tArrBegin
	tArrEnd
	tString
	tNumber
	tBoolean
	tNull
	tColon
	tComma
	tEnd
	tError
)

var tokenNames = [...]string{"T_OBJ_BEGIN", "T_OBJ_END", "T_ARR_BEGIN", "T_ARR_END", "T_STRING", "T_NUMBER", "T_BOOLEAN", "T_NULL", "T_COLON", "T_COMMA", "T_END"}

type jsonToken struct {
	kind  int
	at    int // byte offset where it starts (for an error, where it was found)
	value lua.LValue
	err   string // tError's text
}

// jsonDecoder is lua-cjson's recursive descent parser over s.
type jsonDecoder struct {
	L     *lua.LState
	s     string
	pos   int
	depth int
	null  *lua.LUserData
	cfg   *cjsonConfig
}

// fail raises lua-cjson's json_throw_parse_error.
func (d *jsonDecoder) fail(expected string, t jsonToken) {
	found := t.err
	if t.kind != tError {
		found = tokenNames[t.kind]
	}
	d.L.RaiseError("Expected %s but found %s at character %d", expected, found, t.at+1)
}

func (d *jsonDecoder) value(t jsonToken) lua.LValue {
	switch t.kind {
	case tString, tNumber, tBoolean:
		return t.value
	case tNull:
		return d.null
	case tObjBegin:
		return d.object()
	case tArrBegin:
		return d.array()
	}
	d.fail("value", t)
	return nil
}

func (d *jsonDecoder) descend() {
	if d.depth++; d.depth > d.cfg.decodeDepth {
		d.L.RaiseError("Found too many nested data structures (%d) at character %d", d.depth, d.pos)
	}
}

func (d *jsonDecoder) object() lua.LValue {
	d.descend()
	t := d.L.NewTable()
	tok := d.next()
	if tok.kind == tObjEnd {
		d.depth--
		return t
	}
	for {
		if tok.kind != tString {
			d.fail("object key string", tok)
		}
		key := tok.value
		if tok = d.next(); tok.kind != tColon {
			d.fail("colon", tok)
		}
		t.RawSet(key, d.value(d.next()))
		if !d.more(tObjEnd, "comma or object end") {
			return t
		}
		tok = d.next()
	}
}

func (d *jsonDecoder) array() lua.LValue {
	d.descend()
	t := d.L.NewTable()
	tok := d.next()
	if tok.kind == tArrEnd {
		d.depth--
		return t
	}
	for i := 1; ; i++ {
		t.RawSetInt(i, d.value(tok))
		if !d.more(tArrEnd, "comma or array end") {
			return t
		}
		tok = d.next()
	}
}

// more reads what follows an element: a comma (true), or the end of its
// object or array (false, one level up).
func (d *jsonDecoder) more(end int, expected string) bool {
	tok := d.next()
	if tok.kind == end {
		d.depth--
		return false
	}
	if tok.kind != tComma {
		d.fail(expected, tok)
	}
	return true
}

// next reads the next token (lua-cjson's json_next_token).
func (d *jsonDecoder) next() jsonToken {
	s := d.s
	for d.pos < len(s) && (s[d.pos] == ' ' || s[d.pos] == '\t' || s[d.pos] == '\n' || s[d.pos] == '\r') {
		d.pos++
	}
	at := d.pos
	if at == len(s) {
		return jsonToken{kind: tEnd, at: at}
	}
	if k := strings.IndexByte("{}[]:,", s[at]); k >= 0 {
		d.pos++
		return jsonToken{kind: [...]int{tObjBegin, tObjEnd, tArrBegin, tArrEnd, tColon, tComma}[k], at: at}
	}
	switch c := s[at]; {
	case c == '"':
		return d.str()
	case c == '-' || c == '+' || '0' <= c && c <= '9' || d.cfg.decodeInvalid == 1 && nonJSONNumber(s[at:]):
		if d.cfg.decodeInvalid == 0 && nonJSONNumber(s[at:]) {
			return jsonToken{kind: tError, at: at, err: "invalid number"}
		}
		n := strtodPrefix(s[at:])
		f, ok := str2d(s[at : at+n])
		if n == 0 || !ok {
			return jsonToken{kind: tError, at: at, err: "invalid number"}
		}
		d.pos = at + n
		return jsonToken{kind: tNumber, at: at, value: lua.LNumber(f)}
	case strings.HasPrefix(s[at:], "true"):
		d.pos += 4
		return jsonToken{kind: tBoolean, at: at, value: lua.LTrue}
	case strings.HasPrefix(s[at:], "false"):
		d.pos += 5
		return jsonToken{kind: tBoolean, at: at, value: lua.LFalse}
	case strings.HasPrefix(s[at:], "null"):
		d.pos += 4
		return jsonToken{kind: tNull, at: at}
	}
	return jsonToken{kind: tError, at: at, err: "invalid token"}
}

// str reads a string token (json_next_string_token): the escapes of
// JSON, \u with surrogate pairs to UTF-8; other bytes are copied.
func (d *jsonDecoder) str() jsonToken {
	s, at := d.s, d.pos
	var b []byte
	for i := at + 1; ; i++ {
		if i >= len(s) || s[i] == 0 {
			return jsonToken{kind: tError, at: i, err: "unexpected end of string"}
		}
		switch c := s[i]; c {
		case '"':
			d.pos = i + 1
			return jsonToken{kind: tString, at: at, value: lua.LString(b)}
		case '\\':
			if i+1 >= len(s) {
				return jsonToken{kind: tError, at: i, err: "invalid escape code"}
			}
			i++
			switch e := s[i]; e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, n := unicodeEscape(s[i-1:])
				if n == 0 {
					return jsonToken{kind: tError, at: i - 1, err: "invalid unicode escape code"}
				}
				b = utf8.AppendRune(b, r)
				i += n - 2
			default:
				return jsonToken{kind: tError, at: i - 1, err: "invalid escape code"}
			}
		default:
			b = append(b, c)
		}
	}
}

// unicodeEscape reads "\uXXXX" (a surrogate pair as two) at the start of
// s: the code point and the bytes read, 0 when invalid
// (json_append_unicode_escape).
func unicodeEscape(s string) (rune, int) {
	hex4 := func(s string) rune {
		if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
			return -1
		}
		v, err := strconv.ParseUint(s[2:6], 16, 16)
		if err != nil {
			return -1
		}
		return rune(v)
	}
	r := hex4(s)
	switch {
	case r < 0 || 0xDC00 <= r && r <= 0xDFFF:
		return 0, 0
	case r < 0xD800 || r > 0xDBFF:
		return r, 6
	}
	lo := hex4(s[6:])
	if lo < 0xDC00 || lo > 0xDFFF {
		return 0, 0
	}
	return 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00), 12
}

// nonJSONNumber reports that s starts with a number JSON does not have
// (lua-cjson's json_is_invalid_number): hexadecimal, a leading zero, inf
// or nan.
func nonJSONNumber(s string) bool {
	s = strings.TrimPrefix(s, "-")
	switch {
	case s == "":
		return false
	case s[0] == '0':
		return len(s) > 1 && (s[1]|0x20 == 'x' || isDigit(s[1]))
	case s[0] <= '9':
		return false
	}
	return hasFoldPrefix(s, "inf") || hasFoldPrefix(s, "nan")
}

// strtodPrefix is the length of the longest prefix of s that strtod
// reads (lua-cjson reads a number token so): a sign, then inf, infinity
// or nan, or hexadecimal digits with a '.' and a p exponent, or decimal
// digits with a '.' and an e exponent; 0 for none.
func strtodPrefix(s string) int {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	switch {
	case hasFoldPrefix(s[i:], "infinity"):
		return i + 8
	case hasFoldPrefix(s[i:], "inf"), hasFoldPrefix(s[i:], "nan"):
		return i + 3
	}
	digit, exp := isDigit, byte('e')
	if len(s) > i+1 && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') {
		j, n := mantissa(s, i+2, isHexDigit)
		if n == 0 {
			return i + 1 // "0"
		}
		i, digit, exp = j, isDigit, 'p'
	} else {
		j, n := mantissa(s, i, isDigit)
		if n == 0 {
			return 0
		}
		i = j
	}
	if i < len(s) && (s[i]|0x20) == exp {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if k := digits(s, j, digit); k > j {
			i = k
		}
	}
	return i
}

// mantissa reads digits, a '.', digits from i: where they end and how
// many digits there were.
func mantissa(s string, i int, digit func(byte) bool) (int, int) {
	j := digits(s, i, digit)
	n := j - i
	if j < len(s) && s[j] == '.' {
		k := digits(s, j+1, digit)
		n += k - j - 1
		j = k
	}
	return j, n
}

func digits(s string, i int, digit func(byte) bool) int {
	for i < len(s) && digit(s[i]) {
		i++
	}
	return i
}

func isDigit(c byte) bool    { return '0' <= c && c <= '9' }
func isHexDigit(c byte) bool { return isDigit(c) || 'a' <= c|0x20 && c|0x20 <= 'f' }

func hasFoldPrefix(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

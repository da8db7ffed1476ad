package server

import (
	"math"
	"math/big"
	"strings"
	"time"

	"github.com/tiercache/tiercache/resp"
	"github.com/tiercache/tiercache/tier"
)

// The grammar of command arguments, in one place: numbers as redis-server
// reads them (resp R7, TestNumbersMatchRedis), times, counts and option
// words. A function with a conn answers the error itself when ok is false;
// the texts are replies.go's.

// parseInt reads an integer argument as redis-server does (string2ll).
func parseInt(b []byte) (int64, bool) { return resp.ParseInt(b) }

// parseFloat reads a float argument as redis-server does (string2ld: a
// long double).
func parseFloat(b []byte) (*big.Float, bool) { return resp.ParseFloat(b) }

// intArg reads an integer argument, answering errNotInt.
func (c *conn) intArg(b []byte) (int64, bool) {
	n, ok := parseInt(b)
	if !ok {
		c.w.Error(errNotInt)
	}
	return n, ok
}

// int32Arg reads an argument redis-server reads as a C int
// (getIntFromObjectOrReply: SELECT's and COPY's database).
func (c *conn) int32Arg(b []byte) (n int64, ok bool) {
	if n, ok = c.intArg(b); ok && (n < math.MinInt32 || n > math.MaxInt32) {
		c.w.Error(errIntRange(math.MinInt32, math.MaxInt32))
		return n, false
	}
	return n, ok
}

// cursorArg reads SCAN's and HSCAN's cursor (strtoul, resp.ParseCursor).
func (c *conn) cursorArg(b []byte) (uint64, bool) {
	n, ok := resp.ParseCursor(b)
	if !ok {
		c.w.Error(errInvalidCursor)
	}
	return n, ok
}

// word is b upper-cased, for comparing an option word.
func word(b []byte) string { return strings.ToUpper(string(b)) }

// msDuration is ms milliseconds (>= 0), saturated at the largest Duration.
func msDuration(ms int64) time.Duration {
	if ms > math.MaxInt64/int64(time.Millisecond) {
		return math.MaxInt64
	}
	return time.Duration(ms) * time.Millisecond
}

// expiryAt is a relative expiry of ms milliseconds (≥ 0) as the tier takes
// it: a Duration while one holds it (292 years), else the absolute time
// from now (the tier keeps every time to int64 milliseconds,
// backend.ExpiryAt).
func expiryAt(ms int64) (ttl time.Duration, at time.Time) {
	if ms <= math.MaxInt64/int64(time.Millisecond) {
		return time.Duration(ms) * time.Millisecond, time.Time{}
	}
	return 0, time.UnixMilli(time.Now().UnixMilli() + ms)
}

// expiryArg parses the number after SET's, SETEX's or GETEX's EX, PX, EXAT
// or PXAT (opt, upper case) as redis-server 7.0 does
// (getExpireMillisecondsOrReply): a positive integer whose milliseconds
// fit an int64, and for EX and PX still fit once added to now. It returns
// a relative ttl for EX and PX (expiryAt), an absolute time for EXAT and
// PXAT: every time Redis accepts, exactly.
func (c *conn) expiryArg(opt string, arg []byte) (ttl time.Duration, at time.Time, ok bool) {
	n, ok := c.intArg(arg)
	if !ok {
		return 0, time.Time{}, false
	}
	sec, rel := opt == "EX" || opt == "EXAT", opt == "EX" || opt == "PX"
	ms := n
	if sec && n <= math.MaxInt64/1000 {
		ms = n * 1000
	}
	if n <= 0 || sec && n > math.MaxInt64/1000 || rel && ms > math.MaxInt64-time.Now().UnixMilli() {
		c.w.Error(errExpireTime(c.cmd.name))
		return 0, time.Time{}, false
	}
	if rel {
		ttl, at = expiryAt(ms)
		return ttl, at, true
	}
	return 0, time.UnixMilli(ms), true
}

// isExpiryOpt reports whether opt (upper case) is EX, PX, EXAT or PXAT.
func isExpiryOpt(opt string) bool {
	return opt == "EX" || opt == "PX" || opt == "EXAT" || opt == "PXAT"
}

// setArgs parses SET's options: [NX|XX] [GET] [EX s|PX ms|EXAT ts|PXAT
// ms-ts|KEEPTTL], as redis-server 7.0 (parseExtendedStringArgumentsOrReply):
// an option may be repeated, the last expiry given wins, and only that
// one is checked, once every option was read (so a later syntax error
// is answered first).
func (c *conn) setArgs(args [][]byte) (o tier.SetOptions, get, ok bool) {
	var exp string // the expiry option given, upper case
	var expArg []byte
	for i := 0; i < len(args); i++ {
		switch opt := word(args[i]); {
		case opt == "NX" && !o.XX:
			o.NX = true
		case opt == "XX" && !o.NX:
			o.XX = true
		case opt == "GET":
			get = true
		case opt == "KEEPTTL" && exp == "":
			o.KeepTTL = true
		case isExpiryOpt(opt) && !o.KeepTTL && (exp == "" || exp == opt) && i+1 < len(args):
			i++
			exp, expArg = opt, args[i]
		default:
			c.w.Error(errSyntax)
			return o, false, false
		}
	}
	if exp != "" {
		if o.TTL, o.ExpireAt, ok = c.expiryArg(exp, expArg); !ok {
			return o, false, false
		}
	}
	return o, get, true
}

// getExArgs parses GETEX's options: [EX s|PX ms|EXAT ts|PXAT ms-ts|PERSIST]
// as setArgs does (repeats allowed, the last expiry checked at the end);
// set reports that one was given.
func (c *conn) getExArgs(args [][]byte) (x tier.Expiry, set, ok bool) {
	var exp string
	var expArg []byte
	for i := 0; i < len(args); i++ {
		switch opt := word(args[i]); {
		case opt == "PERSIST" && exp == "":
			x.Persist, set = true, true
		case isExpiryOpt(opt) && !x.Persist && (exp == "" || exp == opt) && i+1 < len(args):
			i++
			exp, expArg, set = opt, args[i], true
		default:
			c.w.Error(errSyntax)
			return x, false, false
		}
	}
	if exp != "" {
		if x.TTL, x.At, ok = c.expiryArg(exp, expArg); !ok {
			return x, false, false
		}
	}
	return x, set, true
}

// expireArgs parses the time and options of EXPIRE, PEXPIRE (unit
// time.Millisecond), EXPIREAT and PEXPIREAT (abs) as redis-server 7.0 does
// (expireGenericCommand): the NX, XX, GT and LT options first, then the
// time, refused when its milliseconds overflow (added to now for the
// relative forms); a non-positive time is 0 (which also keeps a huge
// negative one from overflowing). It returns a relative ttl (expiryAt) or
// an absolute time (at, not zero): every time Redis accepts, exactly.
func (c *conn) expireArgs(args [][]byte, unit time.Duration, abs bool) (ttl time.Duration, at time.Time, cond tier.ExpireCond, ok bool) {
	if cond, ok = c.expireCond(args[1:]); !ok {
		return 0, time.Time{}, 0, false
	}
	n, ok := c.intArg(args[0])
	if !ok {
		return 0, time.Time{}, 0, false
	}
	ms := n
	if unit == time.Second {
		if n > math.MaxInt64/1000 || n < math.MinInt64/1000 {
			c.w.Error(errExpireTime(c.cmd.name))
			return 0, time.Time{}, 0, false
		}
		ms = n * 1000
	}
	if !abs && ms > math.MaxInt64-time.Now().UnixMilli() {
		c.w.Error(errExpireTime(c.cmd.name))
		return 0, time.Time{}, 0, false
	}
	ms = max(ms, 0)
	if abs {
		return 0, time.UnixMilli(ms), cond, true
	}
	ttl, at = expiryAt(ms)
	return ttl, at, cond, true
}

// expireCond parses the NX, XX, GT and LT options of the EXPIRE commands.
func (c *conn) expireCond(opts [][]byte) (cond tier.ExpireCond, ok bool) {
	for _, a := range opts {
		switch word(a) {
		case "NX":
			cond |= tier.ExpireNX
		case "XX":
			cond |= tier.ExpireXX
		case "GT":
			cond |= tier.ExpireGT
		case "LT":
			cond |= tier.ExpireLT
		default:
			c.w.Error(errUnsupportedOption(a))
			return 0, false
		}
	}
	if cond&tier.ExpireNX != 0 && cond&(tier.ExpireXX|tier.ExpireGT|tier.ExpireLT) != 0 {
		c.w.Error(errNXAndXXGTLT)
		return 0, false
	}
	if cond&tier.ExpireGT != 0 && cond&tier.ExpireLT != 0 {
		c.w.Error(errGTAndLT)
		return 0, false
	}
	return cond, true
}

// parseTimeout reads a blocking command's timeout in seconds (a float; 0
// waits forever) as redis-server 7.0 does (getTimeoutFromObjectOrReply):
// a long double, whose milliseconds are rounded up and read as a long
// long (a value past its range reads as negative, as x86 converts it).
// It returns the error to answer, "" when ok.
func parseTimeout(b []byte) (time.Duration, string) {
	f, ok := parseFloat(b)
	if !ok {
		return 0, errTimeoutNotFloat
	}
	ms := int64(math.MinInt64)
	if !f.IsInf() {
		x := new(big.Float).SetPrec(resp.LongDoublePrec).Mul(f, big.NewFloat(1000))
		if i, acc := x.Int(nil); i.IsInt64() {
			ms = i.Int64()
			if acc == big.Below { // Int truncates towards zero: ceil is one more for a positive fraction
				ms++
			}
		}
	}
	if ms < 0 {
		return 0, errTimeoutNegative
	}
	if ms > math.MaxInt64-time.Now().UnixMilli() {
		return 0, errTimeoutRange
	}
	return msDuration(ms), ""
}

// parseTimeoutMs reads WAIT's timeout, integer milliseconds (0 waits
// forever), as redis-server does (getTimeoutFromObjectOrReply with
// UNIT_MILLISECONDS), past the clock's range refused as 7.2 refuses it,
// as parseTimeout does. It returns the error to answer, "" when ok.
func parseTimeoutMs(b []byte) (time.Duration, string) {
	ms, ok := parseInt(b)
	switch {
	case !ok:
		return 0, errTimeoutNotInt
	case ms < 0:
		return 0, errTimeoutNegative
	case ms > math.MaxInt64-time.Now().UnixMilli():
		return 0, errTimeoutRange
	}
	return msDuration(ms), ""
}

// mpopArgs parses numkeys key... END [COUNT count] from args[at] (the
// numkeys), END one of ends (ZMPOP's MIN|MAX, LMPOP's LEFT|RIGHT; second
// reports the second), with Redis 7.0's errors in its order
// (zmpopGenericCommand, lmpopGenericCommand: a numkeys past the arguments
// is a syntax error). count is 1 when not given.
func (c *conn) mpopArgs(args [][]byte, at int, ends [2]string) (keys [][]byte, second bool, count int64, ok bool) {
	n, ok := parseInt(args[at])
	if !ok || n < 1 {
		c.w.Error(errNumKeysPositive)
		return nil, false, 0, false
	}
	if n > int64(len(args)-at-2) { // no room for END after the keys
		c.w.Error(errSyntax)
		return nil, false, 0, false
	}
	where := at + int(n) + 1
	switch word(args[where]) {
	case ends[0]:
	case ends[1]:
		second = true
	default:
		c.w.Error(errSyntax)
		return nil, false, 0, false
	}
	count = -1
	for j := where + 1; j < len(args); j++ {
		if count != -1 || word(args[j]) != "COUNT" || j+1 >= len(args) {
			c.w.Error(errSyntax)
			return nil, false, 0, false
		}
		j++
		if count, ok = parseInt(args[j]); !ok || count < 1 {
			c.w.Error(errCountPositive)
			return nil, false, 0, false
		}
	}
	return args[at+1 : where], second, max(count, 1), true
}

// flushArgs parses FLUSHALL's and FLUSHDB's [ASYNC|SYNC].
func (c *conn) flushArgs(args [][]byte) (async, ok bool) {
	switch {
	case len(args) > 1:
	case len(args) == 0:
		return false, true
	case word(args[0]) == "ASYNC":
		return true, true
	case word(args[0]) == "SYNC":
		return false, true
	}
	c.w.Error(errSyntax)
	return false, false
}

// copyArgs parses COPY's [DB n] [REPLACE]; only database 0 exists.
func (c *conn) copyArgs(args [][]byte) (replace, ok bool) {
	for i := 0; i < len(args); i++ {
		switch opt := word(args[i]); {
		case opt == "REPLACE":
			replace = true
		case opt == "DB" && i+1 < len(args):
			i++
			db, ok := c.int32Arg(args[i])
			if !ok {
				return false, false
			}
			if db != 0 {
				c.w.Error(errDBIndex)
				return false, false
			}
		default:
			c.w.Error(errSyntax)
			return false, false
		}
	}
	return replace, true
}

// scanOpts are SCAN's and HSCAN's options.
type scanOpts struct {
	count   int
	pattern string
	kind    tier.Kind // TYPE's kind, when typed
	typed   bool
}

// scanTypes are the type names SCAN's TYPE option knows (Redis 7), and
// the kind each selects; the types tiercache does not store select nothing.
var scanTypes = map[string]tier.Kind{"string": kindString, "list": kindList, "hash": kindHash,
	"set": kindSet, "zset": kindZSet, "stream": kindNone}

// scanArgs parses [MATCH pattern] [COUNT count] (and [TYPE type] when
// withType).
func (c *conn) scanArgs(args [][]byte, withType bool) (o scanOpts, ok bool) {
	o = scanOpts{count: 10, pattern: "*"}
	for i := 0; i < len(args); i += 2 {
		if i+1 >= len(args) {
			c.w.Error(errSyntax)
			return o, false
		}
		v := string(args[i+1])
		switch word(args[i]) {
		case "MATCH":
			o.pattern = v
		case "COUNT":
			n, ok := c.intArg(args[i+1])
			if !ok {
				return o, false
			}
			if n < 1 {
				c.w.Error(errSyntax)
				return o, false
			}
			o.count = int(n)
		case "TYPE":
			if !withType {
				c.w.Error(errSyntax)
				return o, false
			}
			k, ok := scanTypes[strings.ToLower(v)]
			if !ok {
				c.w.Error(errUnknownType(v))
				return o, false
			}
			o.kind, o.typed = k, true
		default:
			c.w.Error(errSyntax)
			return o, false
		}
	}
	return o, true
}

// whereArg parses LEFT or RIGHT (true for LEFT).
func whereArg(b []byte) (left, ok bool) {
	switch word(b) {
	case "LEFT":
		return true, true
	case "RIGHT":
		return false, true
	}
	return false, false
}

// wheresArgs parses LMOVE's and BLMOVE's two directions.
func (c *conn) wheresArgs(from, to []byte) (fromLeft, toLeft, ok bool) {
	fromLeft, ok1 := whereArg(from)
	toLeft, ok2 := whereArg(to)
	if !ok1 || !ok2 {
		c.w.Error(errSyntax)
	}
	return fromLeft, toLeft, ok1 && ok2
}

// rangeArgs parses two integers: LRANGE's and LTRIM's start and stop,
// GETRANGE's and BITCOUNT's start and end.
func (c *conn) rangeArgs(a, b []byte) (start, stop int64, ok bool) {
	start, ok1 := parseInt(a)
	stop, ok2 := parseInt(b)
	if !ok1 || !ok2 {
		c.w.Error(errNotInt)
	}
	return start, stop, ok1 && ok2
}

// countArg parses LPOP's and RPOP's count: an integer of at least 0.
func (c *conn) countArg(b []byte) (int64, bool) {
	n, ok := parseInt(b)
	if !ok || n < 0 {
		c.w.Error(errMustBePositive)
		return 0, false
	}
	return n, true
}

// lposArgs parses LPOS's [RANK rank] [COUNT num] [MAXLEN len]: rank 1,
// count -1 (none) and maxlen 0 (all) by default.
func (c *conn) lposArgs(args [][]byte) (rank, count, maxlen int64, ok bool) {
	rank, count = 1, -1
	for j := 0; j < len(args); j += 2 {
		if j+1 >= len(args) {
			c.w.Error(errSyntax)
			return 0, 0, 0, false
		}
		v, isInt := parseInt(args[j+1])
		switch word(args[j]) {
		case "RANK":
			switch {
			case !isInt:
				c.w.Error(errNotInt)
			case v == 0:
				c.w.Error(errRankZero)
			case v == math.MinInt64:
				// Its negation, the rank from the tail, does not fit: Redis
				// 7.2's lposCommand reads RANK within -LONG_MAX..LONG_MAX
				// (7.0 negated it and answered more than COUNT matches).
				c.w.Error(errIntRange(-math.MaxInt64, math.MaxInt64))
			default:
				rank = v
				continue
			}
		case "COUNT":
			if isInt && v >= 0 {
				count = v
				continue
			}
			c.w.Error(errCountNegative)
		case "MAXLEN":
			if isInt && v >= 0 {
				maxlen = v
				continue
			}
			c.w.Error(errMaxlenNegative)
		default:
			c.w.Error(errSyntax)
		}
		return 0, 0, 0, false
	}
	return rank, count, maxlen, true
}

// bitOffsetArg parses SETBIT's and GETBIT's offset: at most the bits of
// the largest value (max_value), as Redis bounds it by proto-max-bulk-len.
func (c *conn) bitOffsetArg(b []byte) (int64, bool) {
	off, ok := parseInt(b)
	return c.bitOffsetIn(off, ok)
}

// bitOffsetIn checks a parsed bit offset as bitOffsetArg does (BITFIELD's
// #n offsets too, once multiplied: Redis's getBitOffsetFromArgument).
func (c *conn) bitOffsetIn(off int64, ok bool) (int64, bool) {
	if !ok || off < 0 || off>>3 >= int64(c.s.opts.MaxValueBytes) {
		c.w.Error(errBitOffset)
		return 0, false
	}
	return off, true
}

// unitArg parses the BYTE|BIT of BITCOUNT and BITPOS at args[i] (BYTE
// when absent).
func (c *conn) unitArg(args [][]byte, i int) (isBit, ok bool) {
	if i >= len(args) {
		return false, true
	}
	switch word(args[i]) {
	case "BIT":
		return true, true
	case "BYTE":
		return false, true
	}
	c.w.Error(errSyntax)
	return false, false
}

// randCountArgs parses HRANDFIELD's count [WITHVALUES] (args after the
// key, at least one).
func (c *conn) randCountArgs(args [][]byte) (count int64, withValues, ok bool) {
	if count, ok = c.randCountArg(args[0]); !ok {
		return 0, false, false
	}
	if len(args) > 2 || len(args) == 2 && word(args[1]) != "WITHVALUES" {
		c.w.Error(errSyntax)
		return 0, false, false
	}
	// Redis 7.0 bounds the count so that the reply's length cannot
	// overflow (t_hash.c: hrandfieldCommand).
	if withValues = len(args) == 2; withValues && (count < -math.MaxInt64/2 || count > math.MaxInt64/2) {
		c.w.Error(errValueRange)
		return 0, false, false
	}
	return count, withValues, true
}

package server

import (
	"strings"
	"time"

	"github.com/tiercache/tiercache/value/hash"
)

// The grammar of the hash field expiry commands: Redis 7.4's HEXPIRE
// family, HTTL family and HPERSIST (t_hash.c hexpireGenericCommand,
// httlGenericCommand, hpersistCommand), and Redis 8's HGETDEL, HGETEX
// and HSETEX. Each returns the error reply to give ("" when the arguments
// are good); the command answers it after its key's type check where
// Redis checks the type first (every one but HSETEX).

// fieldsAt reads "FIELDS numfields field ..." with FIELDS at args[at], to
// the end of args; countErr is the command's reply to a count below 1.
func fieldsAt(cmd string, args [][]byte, at int, countErr string) ([][]byte, string) {
	if at >= len(args) || !strings.EqualFold(string(args[at]), "FIELDS") {
		return nil, errFieldsMissing
	}
	if at+1 >= len(args) {
		return nil, errWrongArgs(cmd)
	}
	n, ok := parseInt(args[at+1])
	if !ok || n < 1 {
		return nil, countErr
	}
	if n != int64(len(args)-at-2) {
		return nil, errNumFieldsMismatch
	}
	return args[at+2:], ""
}

// fieldExpiry reads a field expiry argument as Redis's HFE commands do
// (hexpireGenericCommand, parseExpireTime): an integer, not negative, in
// seconds (unit time.Second) or milliseconds, added to base (now for the
// relative forms, 0 for the absolute ones) in milliseconds, at most
// hash.MaxExpiry. It returns unix milliseconds.
func fieldExpiry(cmd string, arg []byte, unit time.Duration, base int64) (int64, string) {
	n, ok := parseInt(arg)
	switch {
	case !ok:
		return 0, errNotInt
	case n < 0:
		return 0, errExpireNegative
	}
	if unit == time.Second {
		if n > hash.MaxExpiry/1000 {
			return 0, errExpireTime(cmd)
		}
		n *= 1000
	}
	if n > hash.MaxExpiry-base {
		return 0, errExpireTime(cmd)
	}
	return n + base, ""
}

// fieldExpiryOpt reads the time after HGETEX's or HSETEX's EX, PX, EXAT
// or PXAT (opt, upper case).
func (c *conn) fieldExpiryOpt(opt string, arg []byte) (int64, string) {
	unit, base := time.Millisecond, int64(0)
	if opt == "EX" || opt == "EXAT" {
		unit = time.Second
	}
	if opt == "EX" || opt == "PX" {
		base = c.s.nowMs()
	}
	return fieldExpiry(c.cmd.name, arg, unit, base)
}

// hexpireArgs parses HEXPIRE key time [NX|XX|GT|LT] FIELDS numfields
// field ... (and HPEXPIRE, HEXPIREAT, HPEXPIREAT: unit, abs).
func (c *conn) hexpireArgs(args [][]byte, unit time.Duration, abs bool) (at int64, cond hash.Cond, fields [][]byte, e string) {
	base := c.s.nowMs()
	if abs {
		base = 0
	}
	if at, e = fieldExpiry(c.cmd.name, args[2], unit, base); e != "" {
		return
	}
	switch strings.ToUpper(string(args[3])) {
	case "NX":
		cond = hash.CondNX
	case "XX":
		cond = hash.CondXX
	case "GT":
		cond = hash.CondGT
	case "LT":
		cond = hash.CondLT
	}
	fieldsPos := 3
	if cond != hash.CondNone {
		fieldsPos = 4
	}
	fields, e = fieldsAt(c.cmd.name, args, fieldsPos, errNumFieldsGreater)
	return
}

// hgetexOpts is what HGETEX's option asks: set an expiry (at), persist, or
// neither; del is HGETDEL.
type hgetexOpts struct {
	set, persist, del bool
	at                int64
}

// hgetexArgs parses HGETEX key [EX s|PX ms|EXAT ts|PXAT ms-ts|PERSIST]
// FIELDS numfields field ...: the option, if any, is args[2] (Redis 8's
// hgetexCommand reads no other place), FIELDS follows it.
func (c *conn) hgetexArgs(args [][]byte) (o hgetexOpts, fields [][]byte, e string) {
	fieldsPos := 2
	switch opt := strings.ToUpper(string(args[2])); opt {
	case "EX", "PX", "EXAT", "PXAT":
		if o.at, e = c.fieldExpiryOpt(opt, args[3]); e != "" {
			return
		}
		o.set, fieldsPos = true, 4
	case "PERSIST":
		o.persist, fieldsPos = true, 3
	}
	fields, e = fieldsAt(c.cmd.name, args, fieldsPos, errNumFieldsPositive)
	return
}

// hsetexOpts is what HSETEX's options ask.
type hsetexOpts struct {
	fnx, fxx bool
	set      bool  // an expiry was given: at
	keepTTL  bool  // KEEPTTL
	at       int64 // unix ms
}

// hsetexArgs parses HSETEX key [FNX|FXX] [EX s|PX ms|EXAT ts|PXAT
// ms-ts|KEEPTTL] FIELDS numfields field value ... as Redis 8's
// hsetexParseArgs does: options in any order up to FIELDS, each checked as
// it is read; the pairs must be exactly what numfields says.
func (c *conn) hsetexArgs(args [][]byte) (o hsetexOpts, pairs [][]byte, e string) {
	name := c.cmd.name
	for i := 2; i < len(args); i++ {
		switch opt := strings.ToUpper(string(args[i])); opt {
		case "FIELDS":
			if i >= len(args)-3 {
				return o, nil, errWrongArgs(name)
			}
			n, ok := parseInt(args[i+1])
			if !ok || n < 1 || n > 1<<31-1 {
				return o, nil, errInvalidNumFields
			}
			rest := len(args) - i - 2
			if rest%2 != 0 || n != int64(rest/2) {
				return o, nil, errWrongArgs(name)
			}
			return o, args[i+2:], ""
		case "EX", "PX", "EXAT", "PXAT":
			if o.set || o.keepTTL {
				return o, nil, errSetexOneExpiry
			}
			if i >= len(args)-1 {
				return o, nil, errMissingExpire
			}
			i++
			if o.at, e = c.fieldExpiryOpt(opt, args[i]); e != "" {
				return o, nil, e
			}
			o.set = true
		case "KEEPTTL":
			if o.set || o.keepTTL {
				return o, nil, errSetexOneExpiry
			}
			o.keepTTL = true
		case "FXX", "FNX":
			if o.fxx || o.fnx {
				return o, nil, errSetexOneCond
			}
			o.fxx, o.fnx = opt == "FXX", opt == "FNX"
		default:
			return o, nil, errUnknownArgument(args[i])
		}
	}
	return o, nil, errSyntax // no FIELDS: Redis asserts it cannot happen
}

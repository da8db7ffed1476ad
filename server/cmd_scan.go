package server

import (
	"math"
	"strconv"
	"strings"

	"github.com/tiercache/tiercache/resp"
	"github.com/tiercache/tiercache/tier"
)

// scanTypes are the type names SCAN's TYPE option knows (Redis 7), and
// the kind each selects; the types tiercache does not store select nothing.
var scanTypes = map[string]tier.Kind{"string": kindString, "list": kindList, "hash": kindHash,
	"set": kindNone, "zset": kindNone, "stream": kindNone}

// kindNone is a kind no value has.
const kindNone = tier.Kind(0xff)

// cmdScan: SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]. The reply
// is the next cursor ("0" when done) and a batch of keys; COUNT is a hint.
func (c *conn) cmdScan(args [][]byte) {
	cursor, ok := resp.ParseCursor(args[1])
	if !ok {
		c.w.Error("ERR invalid cursor")
		return
	}
	o, ok := c.scanOptions(args[2:], true)
	if !ok {
		return
	}
	count, pattern, kind, typed := o.count, o.pattern, o.kind, o.typed
	// The type is checked where the key is found, under the directory's
	// lock, so the cursor guarantees hold for a filtered scan too.
	var match func(string, tier.Kind) bool
	switch {
	case typed && pattern != "*":
		match = func(k string, kd tier.Kind) bool { return kd == kind && globMatch(pattern, k) }
	case typed:
		match = func(_ string, kd tier.Kind) bool { return kd == kind }
	case pattern != "*":
		match = func(k string, _ tier.Kind) bool { return globMatch(pattern, k) }
	}
	next, keys := c.s.cache.Scan(cursor, count, match)
	c.w.Array(2)
	c.w.BulkString(strconv.FormatUint(next, 10))
	c.w.Array(len(keys))
	for _, k := range keys {
		c.w.Bulk(k)
	}
}

// scanOpts are SCAN's and HSCAN's options.
type scanOpts struct {
	count   int
	pattern string
	kind    tier.Kind // TYPE's kind, when typed
	typed   bool
}

// scanOptions parses [MATCH pattern] [COUNT count] (and [TYPE type] when
// withType), answering the error itself when ok is false.
func (c *conn) scanOptions(args [][]byte, withType bool) (o scanOpts, ok bool) {
	o = scanOpts{count: 10, pattern: "*"}
	for i := 0; i < len(args); i += 2 {
		if i+1 >= len(args) {
			c.w.Error("ERR syntax error")
			return o, false
		}
		v := string(args[i+1])
		switch strings.ToLower(string(args[i])) {
		case "match":
			o.pattern = v
		case "count":
			n, ok := parseInt(args[i+1])
			if !ok {
				c.w.Error(errNotInt)
				return o, false
			}
			if n < 1 {
				c.w.Error("ERR syntax error")
				return o, false
			}
			o.count = int(n)
		case "type":
			if !withType {
				c.w.Error("ERR syntax error")
				return o, false
			}
			k, ok := scanTypes[strings.ToLower(v)]
			if !ok {
				c.w.Error("ERR unknown type name '" + v + "'")
				return o, false
			}
			o.kind, o.typed = k, true
		default:
			c.w.Error("ERR syntax error")
			return o, false
		}
	}
	return o, true
}

// cmdKeys: KEYS pattern, every matching key at once (O(keys), as in Redis;
// SCAN is the incremental way).
func (c *conn) cmdKeys(args [][]byte) {
	pattern := string(args[1])
	var match func(string, tier.Kind) bool
	if pattern != "*" {
		match = func(k string, _ tier.Kind) bool { return globMatch(pattern, k) }
	}
	var all [][]byte
	for cursor := uint64(0); ; {
		next, keys := c.s.cache.Scan(cursor, math.MaxInt, match)
		all = append(all, keys...)
		if next == 0 {
			break
		}
		cursor = next
	}
	c.w.Array(len(all))
	for _, k := range all {
		c.w.Bulk(k)
	}
}

package server

import (
	"math"
	"strconv"

	"github.com/tiercache/tiercache/tier"
)

// kindNone is a kind no value has.
const kindNone = tier.Kind(0xff)

// cmdScan: SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]. The reply
// is the next cursor ("0" when done) and a batch of keys; COUNT is a hint.
func (c *conn) cmdScan(args [][]byte) {
	cursor, ok := c.cursorArg(args[1])
	if !ok {
		return
	}
	o, ok := c.scanArgs(args[2:], true)
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

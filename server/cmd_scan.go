package server

import (
	"math"
	"strconv"
	"strings"
)

// scanTypes are the type names SCAN's TYPE option knows (Redis 7); every
// value here is a string, so the others select nothing.
var scanTypes = map[string]bool{"string": true, "list": true, "set": true, "zset": true, "hash": true, "stream": true}

// cmdScan: SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]. The reply
// is the next cursor ("0" when done) and a batch of keys; COUNT is a hint.
func (c *conn) cmdScan(args [][]byte) {
	cursor, err := strconv.ParseUint(string(args[1]), 10, 64)
	if err != nil {
		c.w.Error("ERR invalid cursor")
		return
	}
	count, pattern, none := 10, "*", false
	for i := 2; i < len(args); i += 2 {
		if i+1 >= len(args) {
			c.w.Error("ERR syntax error")
			return
		}
		v := string(args[i+1])
		switch strings.ToLower(string(args[i])) {
		case "match":
			pattern = v
		case "count":
			n, err := strconv.Atoi(v)
			if err != nil {
				c.w.Error(errNotInt)
				return
			}
			if n < 1 {
				c.w.Error("ERR syntax error")
				return
			}
			count = n
		case "type":
			t := strings.ToLower(v)
			if !scanTypes[t] {
				c.w.Error("ERR unknown type name '" + v + "'")
				return
			}
			none = t != "string"
		default:
			c.w.Error("ERR syntax error")
			return
		}
	}
	var match func(string) bool
	switch {
	case none:
		match = func(string) bool { return false } // the cursor still moves on
	case pattern != "*":
		match = func(k string) bool { return globMatch(pattern, k) }
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
	var match func(string) bool
	if pattern != "*" {
		match = func(k string) bool { return globMatch(pattern, k) }
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

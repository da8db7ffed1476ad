package server

import (
	"slices"
	"strconv"

	"github.com/tiercache/tiercache/value/hash"
)

// cmdHScan: HSCAN key cursor [MATCH pattern] [COUNT count] → the next
// cursor and field, value, ... A small hash comes back whole with cursor
// 0. A larger one is walked in the order of a hash of its fields: the
// cursor is the hash the next call starts from, so a field present for the
// whole scan is returned exactly once whatever is added or removed (fields
// of one hash value are never split between calls); MATCH filters the
// fields a call visited, as in Redis. Expired fields are not there.
func (c *conn) cmdHScan(args [][]byte) {
	cursor, ok := c.cursorArg(args[2])
	if !ok {
		return
	}
	exists, ok := c.readHash(args[1], func(h *hash.Hash, now int64) {
		o, ok := c.scanArgs(args[3:], false) // after the key, as Redis
		if !ok {
			return
		}
		fields := h.LiveFields(c.agg.fields[:0], now)
		defer c.keepFields(fields)
		var next uint64
		if cursor != 0 || len(fields) > max(hash.ScanWhole, o.count) {
			fields, next = hash.ScanStep(fields, cursor, o.count)
		}
		if o.pattern != "*" {
			fields = slices.DeleteFunc(fields, func(f hash.Field) bool { return !globMatch(o.pattern, string(f.Name)) })
		}
		c.w.Array(2)
		c.w.BulkString(strconv.FormatUint(next, 10))
		c.w.Array(2 * len(fields))
		for _, f := range fields {
			c.w.Bulk(f.Name)
			c.w.Bulk(f.Value)
		}
	})
	if ok && !exists { // a missing key: an empty scan, before the options are read (as Redis)
		c.w.Array(2)
		c.w.BulkString("0")
		c.w.Array(0)
	}
}

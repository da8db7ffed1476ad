package server

import (
	"hash/fnv"
	"slices"
	"strconv"
)

// hashScanWhole is the field count up to which HSCAN answers a whole hash
// in one call with cursor 0, as Redis does for a listpack hash (its
// hash-max-listpack-entries default, 128), or whenever COUNT covers it.
const hashScanWhole = 128

// fieldHash orders a large hash's fields for HSCAN's cursor.
func fieldHash(f []byte) uint64 {
	h := fnv.New64a()
	h.Write(f)
	return h.Sum64()
}

// cmdHScan: HSCAN key cursor [MATCH pattern] [COUNT count] → the next
// cursor and field, value, ... A small hash comes back whole with cursor
// 0. A larger one is walked in the order of a hash of its fields: the
// cursor is the hash the next call starts from, so a field present for the
// whole scan is returned exactly once whatever is added or removed (fields
// of one hash value are never split between calls); MATCH filters the
// fields a call visited, as in Redis.
func (c *conn) cmdHScan(args [][]byte) {
	cursor, err := strconv.ParseUint(string(args[2]), 10, 64)
	if err != nil {
		c.w.Error("ERR invalid cursor")
		return
	}
	fields, ok := c.hashFields(args[1])
	if !ok {
		return
	}
	if fields == nil { // a missing key: an empty scan, before the options are read (as Redis)
		c.w.Array(2)
		c.w.BulkString("0")
		c.w.Array(0)
		return
	}
	o, ok := c.scanOptions(args[3:], false)
	if !ok {
		return
	}
	var next uint64
	if cursor != 0 || len(fields) > max(hashScanWhole, o.count) {
		fields, next = hashScanStep(fields, cursor, o.count)
	}
	if o.pattern != "*" {
		fields = slices.DeleteFunc(fields, func(f hashField) bool { return !globMatch(o.pattern, string(f.field)) })
	}
	c.w.Array(2)
	c.w.BulkString(strconv.FormatUint(next, 10))
	c.w.Array(2 * len(fields))
	for _, f := range fields {
		c.w.Bulk(f.field)
		c.w.Bulk(f.value)
	}
	clear(fields)
}

// hashScanStep picks the fields whose hash is at least cursor, in hash
// order, count of them (more when the next ones share the last one's
// hash), and the cursor after them (0 when none is left).
func hashScanStep(fields []hashField, cursor uint64, count int) ([]hashField, uint64) {
	type hf struct {
		h uint64
		f hashField
	}
	all := make([]hf, 0, len(fields))
	for _, f := range fields {
		if h := fieldHash(f.field); h >= cursor {
			all = append(all, hf{h, f})
		}
	}
	slices.SortFunc(all, func(a, b hf) int {
		switch {
		case a.h < b.h:
			return -1
		case a.h > b.h:
			return 1
		}
		return 0
	})
	n := min(count, len(all))
	for n < len(all) && n > 0 && all[n].h == all[n-1].h {
		n++
	}
	out := fields[:0]
	for _, x := range all[:n] {
		out = append(out, x.f)
	}
	if n == len(all) {
		return out, 0
	}
	return out, all[n].h
}

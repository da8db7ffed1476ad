package server

import (
	"github.com/tiercache/tiercache/value/zset"
)

// ZMPOP and BZMPOP (Redis 7.0's zmpopGenericCommand): pop up to COUNT
// members from the lowest (MIN) or highest (MAX) scores of the first of
// the keys that holds a sorted set; the reply is the key and the
// [member, score] pairs, a nil array when no key holds one. Both go
// through block (block.go): ZMPOP as a blocking pop that never waits, so
// that looking through the keys and popping is one step under the
// registry's lock, as for BZPOPMIN.

// zmpopArgs parses numkeys key... MIN|MAX [COUNT count] from args[at] (the
// numkeys), with Redis's errors in its order.
func (c *conn) zmpopArgs(args [][]byte, at int) (keys [][]byte, end zpopEnd, count int64, ok bool) {
	n, ok := parseInt(args[at])
	if !ok || n < 1 {
		c.w.Error(errNumKeysPositive)
		return nil, 0, 0, false
	}
	if n > int64(len(args)-at-2) { // no room for MIN|MAX after the keys
		c.w.Error(errSyntax)
		return nil, 0, 0, false
	}
	where := at + int(n) + 1
	switch word(args[where]) {
	case "MIN":
		end = zpopMin
	case "MAX":
		end = zpopMax
	default:
		c.w.Error(errSyntax)
		return nil, 0, 0, false
	}
	count = -1
	for j := where + 1; j < len(args); j++ {
		if count != -1 || word(args[j]) != "COUNT" || j+1 >= len(args) {
			c.w.Error(errSyntax)
			return nil, 0, 0, false
		}
		j++
		if count, ok = parseInt(args[j]); !ok || count < 1 {
			c.w.Error(errCountPositive)
			return nil, 0, 0, false
		}
	}
	return args[at+1 : where], end, max(count, 1), true
}

// cmdZMPop: ZMPOP numkeys key... MIN|MAX [COUNT count].
func (c *conn) cmdZMPop(args [][]byte) {
	if keys, end, count, ok := c.zmpopArgs(args, 1); ok {
		c.block(blockCmd{keys: keys, zpop: end, mpop: count, now: true}, 0)
	}
}

// cmdBZMPop: BZMPOP timeout numkeys key... MIN|MAX [COUNT count], as ZMPOP
// once a key has a member (the timeout is read after the rest, as Redis
// does). Unlike BZPOPMIN it may run in a script, where it never waits.
func (c *conn) cmdBZMPop(args [][]byte) {
	keys, end, count, ok := c.zmpopArgs(args, 2)
	if !ok {
		return
	}
	d, msg := parseTimeout(args[1])
	if msg != "" {
		c.w.Error(msg)
		return
	}
	c.block(blockCmd{keys: keys, zpop: end, mpop: count}, d)
}

// zmpopReply answers [key, [[member, score], ...]].
func (c *conn) zmpopReply(key string, popped []zset.Entry) {
	c.w.Array(2)
	c.w.BulkString(key)
	c.w.Array(len(popped))
	for _, e := range popped {
		c.w.Array(2)
		c.w.Bulk(e.Member)
		c.w.Double(e.Score)
	}
}

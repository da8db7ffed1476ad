package server

import (
	"github.com/tiercache/tiercache/value/zset"
)

// ZMPOP and BZMPOP are mpop.go's mpopCmd with MIN|MAX; a served waiter
// pops its members in zpopOne (block_zset.go).

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

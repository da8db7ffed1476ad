package server

import "time"

// LMPOP and BLMPOP (Redis 7.0's lmpopGenericCommand, t_list.c), ZMPOP and
// BZMPOP (zmpopGenericCommand, t_zset.c): pop up to COUNT elements from
// the head (LEFT) or tail (RIGHT) of the first of the keys that holds a
// list, or members from the lowest (MIN) or highest (MAX) scores of the
// first that holds a sorted set; the reply is the key and what was
// popped, in the order popped, a nil array when no key holds one. All four
// go through block (block.go): LMPOP and ZMPOP as blocking pops that
// never wait, so that looking through the keys and popping is one step
// under the registry's lock; BLMPOP waits in the queue BLPOP's waiters
// share, BZMPOP in BZPOPMIN's, each served up to its COUNT. As in 7.0,
// BLMPOP and BZMPOP may run in a script, where they never wait, as in
// EXEC (BLPOP and BZPOPMIN may not run there).

// The END words of LMPOP and ZMPOP: the first pops from the head or the
// lowest score.
var (
	lmpopEnds = [2]string{"LEFT", "RIGHT"}
	zmpopEnds = [2]string{"MIN", "MAX"}
)

// mpopCmd: LMPOP (ends lmpopEnds) or ZMPOP (zmpopEnds) numkeys key... END
// [COUNT count], or with blocking BLMPOP or BZMPOP timeout numkeys ...,
// whose timeout is read after the rest, as Redis's
// blockingPopGenericCommand and blockingGenericZpopCommand do.
func (c *conn) mpopCmd(args [][]byte, blocking bool, ends [2]string) {
	at := 1
	if blocking {
		at = 2
	}
	keys, second, count, ok := c.mpopArgs(args, at, ends)
	if !ok {
		return
	}
	b := blockCmd{keys: keys, mpop: count, now: !blocking}
	switch {
	case ends == lmpopEnds:
		b.left = !second
	case second:
		b.zpop = zpopMax
	default:
		b.zpop = zpopMin
	}
	var d time.Duration
	if blocking {
		var msg string
		if d, msg = parseTimeout(args[1]); msg != "" {
			c.w.Error(msg)
			return
		}
	}
	c.block(b, d)
}

// lmpopReply answers [key, [element, ...]].
func (c *conn) lmpopReply(key string, vals [][]byte) {
	c.w.Array(2)
	c.w.BulkString(key)
	c.bulks(vals)
}

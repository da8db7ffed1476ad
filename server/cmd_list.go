package server

import (
	"github.com/tiercache/tiercache/tier"
	"github.com/tiercache/tiercache/value/list"
)

// The list commands, with Redis 7.0's replies and errors (t_list.c). The
// encoding and the operations are value/list's; the read-modify-writes
// are listOps'.

// listDone ends a list command: it answers err if there is one and lets
// go of buffers a large list grew.
func (c *conn) listDone(err error) bool {
	c.lists.release()
	if err != nil {
		c.cacheError(err)
		return false
	}
	return true
}

// pushCmd: [LR]PUSH[X] key element... → the list's new length.
func (c *conn) pushCmd(args [][]byte, left, onlyExisting bool) {
	c.lists.now = c.now()
	n, err := c.lists.push(args[1], args[2:], left, onlyExisting)
	c.lists.now = 0
	if !c.listDone(err) {
		return
	}
	c.w.Int(int64(n))
	if n == 0 {
		c.noop = true // [LR]PUSHX of an absent key
		return
	}
	c.wakeAfter(args[1])
}

// popCmd: [LR]POP key [count] → an element, or with a count an array of
// up to count elements; nil (a nil array with a count) if the key is absent.
func (c *conn) popCmd(args [][]byte, left bool) {
	if len(args) > 3 {
		c.wrongArity()
		return
	}
	count, hasCount := int64(1), len(args) == 3
	if hasCount {
		var ok bool
		if count, ok = c.countArg(args[2]); !ok {
			return
		}
	}
	c.lists.now = c.now()
	exists, err := c.lists.pop(args[1], left, int(min(count, 1<<40)))
	c.lists.now = 0
	if !c.listDone(err) {
		return
	}
	c.noop = len(c.lists.outs) == 0
	switch {
	case !exists && hasCount:
		c.w.NullArray()
	case !exists:
		c.w.Null()
	case hasCount:
		c.bulks(c.lists.outs)
	default:
		c.w.Bulk(c.lists.outs[0])
	}
}

func (c *conn) bulks(items [][]byte) {
	c.w.Array(len(items))
	for _, it := range items {
		c.w.Bulk(it)
	}
}

// readList runs f on key's list for a read-only command (readLive).
func (c *conn) readList(key []byte, f func(q *list.Quick)) (exists, ok bool) {
	return c.readLive(key, lists, func(v tier.Live) { f(quick(v)) })
}

// cmdLLen: LLEN key → the length, 0 if absent.
func (c *conn) cmdLLen(args [][]byte) {
	if c.listCold(args[1], func(int) (int, int) { return 0, 0 }, func(_ [][]byte, n int) { c.w.Int(int64(n)) }) {
		return
	}
	if exists, ok := c.readList(args[1], func(q *list.Quick) { c.w.Int(int64(q.Len())) }); ok && !exists {
		c.w.Int(0)
	}
}

// cmdLRange: LRANGE key start stop → the elements from start to stop
// (inclusive, negative from the end).
func (c *conn) cmdLRange(args [][]byte) {
	start, stop, ok := c.rangeArgs(args[2], args[3])
	if !ok {
		return
	}
	if c.listCold(args[1], func(n int) (int, int) { return list.Range(start, stop, n) }, func(items [][]byte, _ int) { c.bulks(items) }) {
		return
	}
	exists, ok := c.readList(args[1], func(q *list.Quick) {
		lo, hi := list.Range(start, stop, q.Len())
		c.w.Array(hi - lo)
		q.Range(lo, hi, func(it []byte) bool { c.w.Bulk(it); return true })
	})
	if ok && !exists {
		c.w.Array(0)
	}
}

// cmdLIndex: LINDEX key index → the element, nil if out of range or absent.
func (c *conn) cmdLIndex(args [][]byte) {
	idx, isInt := parseInt(args[2])
	if isInt && c.listCold(args[1], func(n int) (int, int) {
		if idx < 0 {
			idx += int64(n)
		}
		if idx < 0 || idx >= int64(n) {
			return 0, 0
		}
		return int(idx), int(idx) + 1
	}, func(items [][]byte, _ int) {
		if len(items) == 0 {
			c.w.Null()
		} else {
			c.w.Bulk(items[0])
		}
	}) {
		return
	}
	var bad bool
	exists, ok := c.readList(args[1], func(q *list.Quick) {
		i, ok := parseInt(args[2]) // after the key, as Redis
		if bad = !ok; bad {
			return
		}
		if i < 0 {
			i += int64(q.Len())
		}
		if i < 0 || i >= int64(q.Len()) {
			c.w.Null()
			return
		}
		c.w.Bulk(q.Index(int(i)))
	})
	switch {
	case bad:
		c.w.Error(errNotInt)
	case ok && !exists:
		c.w.Null()
	}
}

// cmdLSet: LSET key index element → OK.
func (c *conn) cmdLSet(args [][]byte) {
	exists, err := c.lists.rewrite(args[1], func(items [][]byte) ([][]byte, bool, error) {
		i, ok := parseInt(args[2]) // after the key, as Redis
		if !ok {
			return nil, false, errNotInteger
		}
		if i < 0 {
			i += int64(len(items))
		}
		if i < 0 || i >= int64(len(items)) {
			return nil, false, errIndexRange
		}
		items[i] = args[3]
		return items, true, nil
	})
	if err == nil && !exists {
		err = errNoSuchKey
	}
	if c.listDone(err) {
		c.w.OK()
	}
}

// cmdLInsert: LINSERT key BEFORE|AFTER pivot element → the new length, -1
// if pivot is not there, 0 if the key is absent.
func (c *conn) cmdLInsert(args [][]byte) {
	var after bool
	switch word(args[2]) {
	case "BEFORE":
	case "AFTER":
		after = true
	default:
		c.w.Error(errSyntax)
		return
	}
	length := 0
	exists, err := c.lists.rewrite(args[1], func(items [][]byte) ([][]byte, bool, error) {
		items, length = list.Insert(items, args[3], args[4], after)
		return items, length > 0, nil
	})
	if !c.listDone(err) {
		return
	}
	if !exists {
		length = 0
	}
	c.noop = length <= 0
	c.w.Int(int64(length))
}

// cmdLRem: LREM key count element → how many were removed: the first
// count from the head (count > 0), from the tail (< 0), or all (0).
func (c *conn) cmdLRem(args [][]byte) {
	count, ok := c.intArg(args[2])
	if !ok {
		return
	}
	removed := 0
	_, err := c.lists.rewrite(args[1], func(items [][]byte) ([][]byte, bool, error) {
		items, removed = list.Remove(items, count, args[3])
		return items, removed > 0, nil
	})
	if c.listDone(err) {
		c.noop = removed == 0
		c.w.Int(int64(removed))
	}
}

// cmdLTrim: LTRIM key start stop → OK; the list keeps only that range.
func (c *conn) cmdLTrim(args [][]byte) {
	start, stop, ok := c.rangeArgs(args[2], args[3])
	if !ok {
		return
	}
	exists, err := c.lists.trim(args[1], start, stop)
	c.noop = !exists // Redis signals every LTRIM of a list (ltrimCommand)
	if c.listDone(err) {
		c.w.OK()
	}
}

// cmdLPos: LPOS key element [RANK rank] [COUNT num] [MAXLEN len] → the
// index of the rank-th match (negative: from the tail), or with COUNT an
// array of up to num of them (0: all); MAXLEN bounds the elements compared.
func (c *conn) cmdLPos(args [][]byte) {
	rank, count, maxlen, ok := c.lposArgs(args[3:])
	if !ok {
		return
	}
	var found []int
	exists, ok := c.readList(args[1], func(q *list.Quick) {
		c.lists.items = q.Items(c.lists.items[:0])
		found = list.Positions(nil, c.lists.items, args[2], rank, count, maxlen)
	})
	c.lists.release()
	if !ok {
		return
	}
	if !exists {
		if count >= 0 {
			c.w.Array(0)
		} else {
			c.w.Null()
		}
		return
	}
	if count < 0 {
		if len(found) == 0 {
			c.w.Null()
		} else {
			c.w.Int(int64(found[0]))
		}
		return
	}
	c.w.Array(len(found))
	for _, i := range found {
		c.w.Int(int64(i))
	}
}

// cmdLMove: LMOVE source destination LEFT|RIGHT LEFT|RIGHT → the element
// moved, nil if source is absent.
func (c *conn) cmdLMove(args [][]byte) {
	if from, to, ok := c.wheresArgs(args[3], args[4]); ok {
		c.moveCmd(args[1], args[2], from, to)
	}
}

// cmdRPopLPush: RPOPLPUSH source destination is LMOVE ... RIGHT LEFT.
func (c *conn) cmdRPopLPush(args [][]byte) { c.moveCmd(args[1], args[2], false, true) }

func (c *conn) moveCmd(src, dst []byte, from, to bool) {
	moved, err := c.lists.move(src, dst, from, to)
	if !c.listDone(err) {
		return
	}
	if !moved {
		c.noop = true
		c.w.Null()
		return
	}
	c.w.Bulk(c.lists.outs[0])
	c.wakeAfter(dst)
}

// wakeAfter serves the clients blocked on key after a push onto it: now,
// or inside EXEC once the transaction's commands have all run, as Redis
// serves them after the EXEC.
func (c *conn) wakeAfter(key []byte) {
	if !c.inExec {
		c.s.wake(&c.lists, key)
		return
	}
	if c.s.blk.waiting.Load() > 0 {
		c.wakes = append(c.wakes, append([]byte(nil), key...))
	}
}

// scriptWakes serves the clients blocked on the lists a script on c
// pushed onto (fc, its connection, puts them off as EXEC does: Redis
// serves them once the script ended): at once, their events and
// invalidations after the script's, their results handed over with c's
// (handOff, S90); inside EXEC they join the EXEC's wakes (S99).
func (c *conn) scriptWakes(fc *conn) {
	if len(fc.wakes) == 0 {
		return
	}
	if c.inExec {
		c.wakes = append(c.wakes, fc.wakes...)
		fc.wakes = nil
		return
	}
	fc.execWakes()
	fc.servedEvents()
	fc.flushEvents()
	c.lists.handoffs = append(c.lists.handoffs, fc.lists.handoffs...)
	clear(fc.lists.handoffs)
	fc.lists.handoffs = fc.lists.handoffs[:0]
}

// execWakes serves the wakes an EXEC put off.
func (c *conn) execWakes() {
	wakes := c.wakes
	c.wakes = nil
	for _, k := range wakes {
		c.s.wake(&c.lists, k)
	}
}

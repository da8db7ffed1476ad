package server

import (
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/tiercache/tiercache/value/set"
)

// The set commands (Redis 7.0, t_set.c). A set is one record
// (value/set); a read decodes it, a write decodes, changes and stores it
// in one Cache.Update (typed.go).

// cmdSAdd: SADD key member... → how many were new.
func (c *conn) cmdSAdd(args [][]byte) {
	var added int
	_, err := c.setEdit(args[1], true, func(s *set.Live) (bool, error) {
		added = 0
		if err := c.setAddCheck(s, args[2:]); err != nil {
			return false, err
		}
		for _, m := range args[2:] {
			if s.Add(m) {
				added++
			}
		}
		return added > 0, nil
	})
	c.countReply(added, err)
}

// countReply answers a write's count n; 0 changed nothing (WATCH is not
// touched).
func (c *conn) countReply(n int, err error) {
	if n == 0 && err == nil {
		c.noop = true
	}
	c.numReply(int64(n), err)
}

// cmdSRem: SREM key member... → how many were there; the key goes with
// its last member.
func (c *conn) cmdSRem(args [][]byte) {
	var removed int
	_, err := c.setEdit(args[1], false, func(s *set.Live) (bool, error) {
		removed = 0
		for _, m := range args[2:] {
			if s.Remove(m) {
				removed++
			}
		}
		return removed > 0, nil
	})
	c.countReply(removed, err)
}

// cmdSMembers: SMEMBERS key → every member (a set in RESP3).
func (c *conn) cmdSMembers(args [][]byte) {
	exists, ok := c.readLiveSet(args[1], func(s *set.Live) {
		c.w.Set(s.Len())
		s.Each(func(m []byte) bool { c.w.Bulk(m); return true })
	})
	if ok && !exists {
		c.w.Set(0)
	}
}

// cmdSIsMember: SISMEMBER key member → 1 or 0.
func (c *conn) cmdSIsMember(args [][]byte) {
	var has bool
	if _, ok := c.readLiveSet(args[1], func(s *set.Live) { has = s.Has(args[2]) }); ok {
		c.boolInt(has)
	}
}

// boolInt answers 1 or 0.
func (c *conn) boolInt(b bool) {
	if b {
		c.w.Int(1)
		return
	}
	c.w.Int(0)
}

// cmdSMIsMember: SMISMEMBER key member... → 1 or 0 for each.
func (c *conn) cmdSMIsMember(args [][]byte) {
	exists, ok := c.readLiveSet(args[1], func(s *set.Live) {
		c.w.Array(len(args) - 2)
		for _, m := range args[2:] {
			c.boolInt(s.Has(m))
		}
	})
	if ok && !exists {
		c.w.Array(len(args) - 2)
		for range args[2:] {
			c.boolInt(false)
		}
	}
}

// cmdSCard: SCARD key → the member count.
func (c *conn) cmdSCard(args [][]byte) {
	n := 0
	if _, ok := c.readLiveSet(args[1], func(s *set.Live) { n = s.Len() }); ok {
		c.w.Int(int64(n))
	}
}

// cmdSPop: SPOP key [count]. Without count, one random member removed
// (nil when absent); with count, up to count distinct ones (a set in
// RESP3); the key goes with its last member.
func (c *conn) cmdSPop(args [][]byte) {
	if len(args) > 3 {
		c.w.Error(errSyntax)
		return
	}
	count := int64(-1)
	if len(args) == 3 {
		var ok bool
		if count, ok = c.countArg(args[2]); !ok {
			return
		}
	}
	defer c.typed.release()
	var popped [][]byte
	exists := false
	_, err := c.setEdit(args[1], false, func(s *set.Live) (bool, error) {
		exists = s.Len() > 0
		popped = c.typed.mems[:0]
		n := s.Len()
		k := int(min(count, int64(n)))
		if count < 0 {
			k = min(1, n)
		}
		for range k {
			m := slices.Clone(s.Random()) // the structure changes as it goes
			popped = append(popped, m)
			s.Remove(m)
		}
		return k > 0, nil
	})
	c.typed.mems = popped[:0]
	switch {
	case err != nil:
		c.cacheError(err)
	case count < 0 && !exists:
		c.noop = true
		c.w.Null()
	case count < 0:
		c.w.Bulk(popped[0])
	default:
		c.noop = len(popped) == 0
		c.w.Set(len(popped))
		for _, m := range popped {
			c.w.Bulk(m)
		}
	}
}

// cmdSRandMember: SRANDMEMBER key [count]. Without count, one random
// member (nil when absent); a positive count, that many distinct members
// at most; a negative count, exactly -count that may repeat.
func (c *conn) cmdSRandMember(args [][]byte) {
	if len(args) > 3 {
		c.w.Error(errSyntax)
		return
	}
	var count int64
	if len(args) == 3 {
		var ok bool
		if count, ok = c.randCountArg(args[2]); !ok {
			return
		}
	}
	if len(args) == 2 {
		if exists, ok := c.readLiveSet(args[1], func(s *set.Live) { c.w.Bulk(s.Random()) }); ok && !exists {
			c.w.Null()
		}
		return
	}
	s := &c.typed.set
	defer c.typed.release()
	if _, ok := c.readSet(args[1], s, false); !ok {
		return
	}
	n := s.Len()
	picks := randPicks(n, count)
	if picks == nil && count < -maxRandCount {
		c.w.Error(errRandCountTooLarge(maxRandCount, "members"))
		return
	}
	c.w.Array(len(picks))
	for _, i := range picks {
		c.w.Bulk(s.At(i))
	}
}

// randCountArg reads HRANDFIELD's, SRANDMEMBER's and ZRANDMEMBER's count: an integer
// from -LONG_MAX to LONG_MAX.
func (c *conn) randCountArg(b []byte) (int64, bool) {
	n, ok := parseInt(b)
	switch {
	case !ok:
		c.w.Error(errNotInt)
	case n == -1<<63:
		c.w.Error(errIntRange(-(1<<63 - 1), 1<<63-1))
		return 0, false
	}
	return n, ok
}

// randPicks is the ranks a random pick of count out of n answers: count
// distinct ones (all n when count ≥ n) for a positive count, -count that
// may repeat for a negative one (nil past maxRandCount).
func randPicks(n int, count int64) []int {
	switch {
	case n == 0 || count == 0:
		return []int{}
	case count < 0:
		if count < -maxRandCount {
			return nil
		}
		out := make([]int, -count)
		for i := range out {
			out[i] = rand.IntN(n)
		}
		return out
	}
	out := rand.Perm(n)
	if int64(n) > count {
		out = out[:count]
	}
	return out
}

// cmdSMove: SMOVE source destination member → 1 if moved, 0 if member
// was not in source. It runs exclusively (table.go), so no command sees
// the member in neither set or in both.
func (c *conn) cmdSMove(args [][]byte) {
	src, dst, m := args[1], args[2], args[3]
	defer c.typed.release()
	s := &c.typed.set
	srcExists, ok := c.readSet(src, s, false)
	if !ok {
		return
	}
	if !srcExists {
		c.noop = true
		c.w.Int(0)
		return
	}
	if kind, ok := c.s.cache.KindOf(dst); ok && kind != kindSet {
		c.w.Error(errWrongType)
		return
	}
	if string(src) == string(dst) {
		c.noop = true
		c.boolInt(s.Has(m))
		return
	}
	var removed bool
	c.typed.smoveAdded = false
	_, err := c.setEdit(src, false, func(s *set.Live) (bool, error) {
		removed = s.Remove(m)
		return removed, nil
	})
	if err == nil && removed {
		_, err = c.setEdit(dst, true, func(s *set.Live) (bool, error) {
			if err := c.setAddCheck(s, [][]byte{m}); err != nil {
				return false, err
			}
			c.typed.smoveAdded = s.Add(m)
			return c.typed.smoveAdded, nil
		})
		if err != nil { // dst refused it (a limit): it goes back, nothing changed
			_, _ = c.setEdit(src, true, func(s *set.Live) (bool, error) { return s.Add(m), nil })
			removed = false
		}
	}
	if err != nil {
		c.cacheError(err)
		return
	}
	c.noop = !removed
	if removed && !c.typed.smoveAdded { // dst had the member: unchanged, its WATCHers unaffected (as Redis)
		c.s.touch(touchKeys, [][]byte{nil, src})
		c.touched = true
	}
	c.boolInt(removed)
}

// cmdSScan: SSCAN key cursor [MATCH pattern] [COUNT count] → the next
// cursor and members. A small set comes back whole with cursor 0; a larger
// one is walked in the order of a hash of its members (set.ScanStep), so
// a member present for the whole scan comes back exactly once.
func (c *conn) cmdSScan(args [][]byte) {
	cursor, ok := c.cursorArg(args[2])
	if !ok {
		return
	}
	s := &c.typed.set
	defer c.typed.release()
	exists, ok := c.readSet(args[1], s, false)
	if !ok {
		return
	}
	if !exists {
		c.emptyScan()
		return
	}
	o, ok := c.scanArgs(args[3:], false)
	if !ok {
		return
	}
	members := s.All()
	var next uint64
	if cursor != 0 || len(members) > max(set.ScanWhole, o.count) {
		members, next = set.ScanStep(c.typed.mems[:0], members, func(m []byte) []byte { return m }, cursor, o.count)
		c.typed.mems = members
	}
	if o.pattern != "*" {
		members = slices.DeleteFunc(slices.Clone(members), func(m []byte) bool { return !globMatch(o.pattern, string(m)) })
	}
	c.w.Array(2)
	c.w.BulkString(strconv.FormatUint(next, 10))
	c.w.Array(len(members))
	for _, m := range members {
		c.w.Bulk(m)
	}
}

// emptyScan answers a scan of a missing key: cursor 0, nothing.
func (c *conn) emptyScan() {
	c.w.Array(2)
	c.w.BulkString("0")
	c.w.Array(0)
}

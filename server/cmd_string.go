package server

import (
	"math"
	"strconv"

	"github.com/tiercache/tiercache/tier"
)

// The string commands that read, change and write a value: each is one
// Cache.Update (atomic under concurrent clients, T24), which keeps the
// key's expiry, as Redis keeps it for INCR, APPEND, SETRANGE and SETBIT.

// stringRead reads key's string for a read command; ok false means the
// error reply is written.
func (c *conn) stringRead(key []byte) (v []byte, exists, ok bool) {
	v, exists, ok = c.stringReadInto(c.scratch[:0], key)
	if exists && cap(v) <= maxScratch && cap(v) > cap(c.scratch) {
		c.scratch = v[:0]
	}
	return v, exists, ok
}

// stringReadInto is stringRead appending the value to dst (BITOP reads
// its sources into one buffer).
func (c *conn) stringReadInto(dst, key []byte) (v []byte, exists, ok bool) {
	v, kind, _, exists, _, err := c.s.cache.ViewAny(dst, key)
	switch {
	case err != nil:
		c.cacheError(err)
		return nil, false, false
	case !exists:
		return nil, false, true
	case kind != kindString:
		c.w.Error(errWrongType)
		return nil, false, false
	}
	return v, true, true
}

// stringUpdate changes key's string in one step: edit gets the value (nil
// and false when absent) and returns the new one, or store false to change
// nothing. It may run more than once and must only compute.
func (c *conn) stringUpdate(key []byte, edit func(v []byte, exists bool) (out []byte, store bool, err error)) error {
	return c.s.cache.UpdateAt(key, c.now(), func(cur tier.Current) (tier.Change, error) {
		if cur.Exists && cur.Kind != kindString {
			return tier.Change{}, wrongType
		}
		out, store, err := edit(cur.Value, cur.Exists)
		if err != nil || !store {
			return tier.Change{Op: tier.Keep}, err
		}
		return tier.Change{Op: tier.Store, Value: out, Kind: kindString}, nil
	})
}

// tooLong refuses a string of n bytes over the value limit (S20), before
// it is allocated.
func (c *conn) tooLong(n int64) error {
	if n > int64(c.s.opts.MaxValueBytes) {
		return replyError(errStringTooLong(c.s.opts.MaxValueBytes))
	}
	return nil
}

// grow is v copied into the connection's buffer and zero-padded to size
// bytes (size >= len(v)), for a string edit to change; the buffer is kept
// for the next command.
func (c *conn) grow(v []byte, size int) []byte {
	out := append(c.agg.enc[:0], v...)
	out = append(out, make([]byte, size-len(v))...)
	if cap(out) <= maxAggKeep {
		c.agg.enc = out[:0]
	}
	return out
}

// numReply answers n, or err.
func (c *conn) numReply(n int64, err error) {
	if err != nil {
		c.cacheError(err)
		return
	}
	c.w.Int(n)
}

// boolReply answers 1 or 0 (intReply: 0 changed nothing), or err.
func (c *conn) boolReply(b bool, err error) {
	if err != nil {
		c.cacheError(err)
		return
	}
	c.intReply(b)
}

// incrByCmd: INCRBY key n, DECRBY key n (neg) → the new value.
func (c *conn) incrByCmd(args [][]byte, neg bool) {
	incr, ok := c.intArg(args[2])
	if !ok {
		return
	}
	if neg {
		if incr == math.MinInt64 {
			c.w.Error(errDecrOverflow)
			return
		}
		incr = -incr
	}
	c.incrCmd(args[1], incr)
}

// incrCmd adds incr to key's integer (INCR and DECR add 1 and -1) and
// answers the new value.
func (c *conn) incrCmd(key []byte, incr int64) {
	var result int64
	err := c.stringUpdate(key, func(v []byte, exists bool) ([]byte, bool, error) {
		var cur int64
		if exists {
			var ok bool
			if cur, ok = parseInt(v); !ok {
				return nil, false, errNotInteger
			}
		}
		if incr > 0 && cur > math.MaxInt64-incr || incr < 0 && cur < math.MinInt64-incr {
			return nil, false, replyError(errOverflow)
		}
		result = cur + incr
		return strconv.AppendInt(c.num[:0], result, 10), true, nil
	})
	c.numReply(result, err)
}

// cmdIncrByFloat: INCRBYFLOAT key increment → the new value (resp.AppendFloat).
func (c *conn) cmdIncrByFloat(args [][]byte) {
	var result []byte
	err := c.stringUpdate(args[1], func(v []byte, exists bool) ([]byte, bool, error) {
		incr, ok := parseFloat(args[2]) // after the type check, as Redis
		if !ok {
			return nil, false, replyError(errNotFloat)
		}
		var err error
		if result, err = incrFloat(result[:0], v, exists, incr, errNotFloat); err != nil {
			return nil, false, err
		}
		return result, true, nil
	})
	if err != nil {
		c.cacheError(err)
		return
	}
	c.w.Bulk(result)
}

// cmdAppend: APPEND key value → the new length.
func (c *conn) cmdAppend(args [][]byte) {
	var n int
	err := c.stringUpdate(args[1], func(v []byte, _ bool) ([]byte, bool, error) {
		if err := c.tooLong(int64(len(v)) + int64(len(args[2]))); err != nil {
			return nil, false, err
		}
		out := c.grow(v, len(v)+len(args[2]))
		copy(out[len(v):], args[2])
		n = len(out)
		return out, true, nil
	})
	c.numReply(int64(n), err)
}

// cmdGetRange: GETRANGE|SUBSTR key start end → the bytes from start to
// end, both included; negative offsets count from the end.
func (c *conn) cmdGetRange(args [][]byte) {
	start, end, ok := c.rangeArgs(args[2], args[3])
	if !ok {
		return
	}
	v, _, ok := c.stringRead(args[1])
	if !ok {
		return
	}
	// Redis 7.0 (t_string.c: getrangeCommand).
	n := int64(len(v))
	if start < 0 && end < 0 && start > end {
		c.w.BulkString("")
		return
	}
	start, end = clampRange(start, end, n)
	if start > end || n == 0 {
		c.w.BulkString("")
		return
	}
	c.w.Bulk(v[start : end+1])
}

// cmdSetRange: SETRANGE key offset value → the new length; the string is
// padded with zero bytes up to offset.
func (c *conn) cmdSetRange(args [][]byte) {
	off, ok := c.intArg(args[2])
	if !ok {
		return
	}
	if off < 0 {
		c.w.Error(errOffsetRange)
		return
	}
	val := args[3]
	var n int
	err := c.stringUpdate(args[1], func(v []byte, exists bool) ([]byte, bool, error) {
		n = len(v)
		if len(val) == 0 {
			return nil, false, nil // nothing to write: the key is neither made nor changed
		}
		end := off + int64(len(val))
		if end < off {
			end = math.MaxInt64 // off near MaxInt64 wrapped: too long all the same
		}
		if err := c.tooLong(end); err != nil {
			return nil, false, err
		}
		out := c.grow(v, max(len(v), int(off)+len(val)))
		copy(out[off:], val)
		n = len(out)
		return out, true, nil
	})
	c.noop = len(val) == 0 // the length is answered, nothing changed (setrangeCommand)
	c.numReply(int64(n), err)
}

// cmdGetSet: GETSET key value → the old value (nil if absent); the new
// value has no expiry, as SET ... GET.
func (c *conn) cmdGetSet(args [][]byte) {
	old, had, _, err := c.s.cache.SetGet(c.scratch[:0], args[1], args[2], tier.SetOptions{})
	c.valueReply(old, had, err)
}

// cmdMSetNX: MSETNX key value [key value ...] → 1 if every key was absent
// and all are set, 0 (nothing set) otherwise. See msetnx.
func (c *conn) cmdMSetNX(args [][]byte) {
	if len(args)%2 != 1 {
		c.wrongArity()
		return
	}
	for i := 2; i < len(args); i += 2 {
		if err := c.tooLong(int64(len(args[i]))); err != nil {
			c.cacheError(err)
			return
		}
	}
	set, err := c.s.msetnx(args[1:])
	c.boolReply(set, err)
}

// msetnx sets the pairs kv if none of their keys exists, all or nothing,
// isolated: MSETNX is an exclusive command (it holds the transaction lock
// as EXEC does), so no other command runs between the check and the sets.
// A set that fails all the same (an error from the cache) undoes the keys
// already set, so it never leaves some of its keys set.
func (s *Server) msetnx(kv [][]byte) (bool, error) {
	last := make(map[string]int, len(kv)/2) // a key named twice takes its last value, as in Redis
	keys := make([][]byte, 0, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		if _, ok := last[string(kv[i])]; !ok {
			keys = append(keys, kv[i])
		}
		last[string(kv[i])] = i + 1
	}
	if s.cache.Exists(keys...) > 0 {
		return false, nil
	}
	defer s.cache.AwaitRemote(keys...) // once for every key (tier T38)
	for j, k := range keys {
		stored, err := s.cache.Set(k, kv[last[string(k)]], tier.SetOptions{NX: true, NoRemoteWait: true})
		if err != nil || !stored {
			for _, done := range keys[:j] {
				s.undoSet(done, kv[last[string(done)]])
			}
			return false, err
		}
	}
	return true, nil
}

// undoSet deletes key if it still holds the string value.
func (s *Server) undoSet(key, value []byte) {
	_ = s.cache.Update(key, func(cur tier.Current) (tier.Change, error) {
		if cur.Exists && cur.Kind == kindString && string(cur.Value) == string(value) {
			return tier.Change{Op: tier.Remove}, nil
		}
		return tier.Change{Op: tier.Keep}, nil
	})
}

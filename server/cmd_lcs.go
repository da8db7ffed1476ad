package server

import (
	"math"
	"math/bits"
)

// LCS (Redis 7.0, t_string.c: lcsCommand): the longest common subsequence
// of two strings by the dynamic-programming table of LCS lengths, its
// memory bounded as Redis bounds it (by proto-max-bulk-len, here
// max_value). LCS is exclusive (table.go): both keys are read at one
// moment.

// lcsMatch is one IDX range: a[aStart..aEnd] equals b[bStart..bEnd].
type lcsMatch struct{ aStart, aEnd, bStart, bEnd int64 }

// cmdLCS: LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN] → the
// subsequence, its length (LEN), or its matching ranges (IDX).
func (c *conn) cmdLCS(args [][]byte) {
	a, aString, err := c.lcsRead(args[1], c.scratch[:0])
	if err != nil {
		c.cacheError(err)
		return
	}
	b, bString, err := c.lcsRead(args[2], nil)
	if err != nil {
		c.cacheError(err)
		return
	}
	if !aString || !bString { // both keys are looked at before the options, as Redis
		c.w.Error(errLCSType)
		return
	}
	var getLen, getIdx, withLen bool
	var minLen int64
	for j := 3; j < len(args); j++ {
		switch word(args[j]) {
		case "IDX":
			getIdx = true
		case "LEN":
			getLen = true
		case "WITHMATCHLEN":
			withLen = true
		case "MINMATCHLEN":
			if j == len(args)-1 {
				c.w.Error(errSyntax)
				return
			}
			j++
			var ok bool
			if minLen, ok = c.intArg(args[j]); !ok {
				return
			}
			minLen = max(minLen, 0)
		default:
			c.w.Error(errSyntax)
			return
		}
	}
	if getLen && getIdx {
		c.w.Error(errLCSLenAndIdx)
		return
	}
	if uint64(len(a)) >= math.MaxUint32-1 || uint64(len(b)) >= math.MaxUint32-1 {
		c.w.Error(errLCSTooLong)
		return
	}
	// The table holds (len(a)+1)*(len(b)+1) uint32s: refused past the limit.
	hi, cells := bits.Mul64(uint64(len(a)+1), uint64(len(b)+1))
	if hi != 0 || cells > math.MaxUint64/4 || cells*4 > uint64(c.s.opts.MaxValueBytes) {
		c.w.Error(errLCSMemory)
		return
	}
	t := lcsTable(a, b)
	n := t[len(t)-1]
	switch {
	case getLen:
		c.w.Int(int64(n))
	case getIdx:
		matches := lcsMatches(t, a, b, minLen)
		c.w.Map(2)
		c.w.BulkString("matches")
		c.w.Array(len(matches))
		for _, m := range matches {
			c.w.Array(2 + boolInt(withLen))
			c.w.Array(2)
			c.w.Int(m.aStart)
			c.w.Int(m.aEnd)
			c.w.Array(2)
			c.w.Int(m.bStart)
			c.w.Int(m.bEnd)
			if withLen {
				c.w.Int(m.aEnd - m.aStart + 1)
			}
		}
		c.w.BulkString("len")
		c.w.Int(int64(n))
	default:
		c.w.Bulk(lcsString(t, a, b, int(n)))
	}
}

// lcsRead reads key's value into dst for LCS: a missing key is an empty
// string; isString false for another kind (LCS's own error, not
// WRONGTYPE).
func (c *conn) lcsRead(key, dst []byte) (v []byte, isString bool, err error) {
	v, kind, _, exists, _, err := c.s.cache.ViewAny(dst, key)
	if err != nil || !exists {
		return nil, true, err
	}
	return v, kind == kindString, nil
}

// lcsTable is the table of LCS lengths: cell i*(len(b)+1)+j holds the
// length of the LCS of a[:i] and b[:j]; the last cell is the answer.
func lcsTable(a, b []byte) []uint32 {
	w := len(b) + 1
	t := make([]uint32, (len(a)+1)*w)
	for i := 1; i <= len(a); i++ {
		row, prev := t[i*w:(i+1)*w], t[(i-1)*w:i*w]
		for j := 1; j < w; j++ {
			switch {
			case a[i-1] == b[j-1]:
				row[j] = prev[j-1] + 1
			case prev[j] > row[j-1]:
				row[j] = prev[j]
			default:
				row[j] = row[j-1]
			}
		}
	}
	return t
}

// lcsWalk walks t back from its last cell as Redis does (up when the
// cell above is strictly longer, else left), calling match for each
// common byte, last first, with its positions in a and b.
func lcsWalk(t []uint32, a, b []byte, match func(i, j int)) {
	w := len(b) + 1
	for i, j := len(a), len(b); i > 0 && j > 0; {
		switch {
		case a[i-1] == b[j-1]:
			match(i-1, j-1)
			i, j = i-1, j-1
		case t[(i-1)*w+j] > t[i*w+j-1]:
			i--
		default:
			j--
		}
	}
}

// lcsString is the subsequence of length n that t's walk finds.
func lcsString(t []uint32, a, b []byte, n int) []byte {
	out := make([]byte, n)
	lcsWalk(t, a, b, func(i, _ int) {
		n--
		out[n] = a[i]
	})
	return out
}

// lcsMatches are the walk's runs of bytes adjacent in both strings, last
// first, those shorter than minLen left out: IDX's ranges, in Redis's
// order.
func lcsMatches(t []uint32, a, b []byte, minLen int64) []lcsMatch {
	var out []lcsMatch
	var cur lcsMatch
	open := false
	flush := func() {
		if open && cur.aEnd-cur.aStart+1 >= minLen {
			out = append(out, cur)
		}
		open = false
	}
	lcsWalk(t, a, b, func(i, j int) {
		if open && cur.aStart == int64(i)+1 && cur.bStart == int64(j)+1 {
			cur.aStart, cur.bStart = int64(i), int64(j)
			return
		}
		flush()
		cur, open = lcsMatch{aStart: int64(i), aEnd: int64(i), bStart: int64(j), bEnd: int64(j)}, true
	})
	flush()
	return out
}

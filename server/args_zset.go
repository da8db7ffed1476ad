package server

import (
	"github.com/tiercache/tiercache/resp"
	"github.com/tiercache/tiercache/value/zset"
)

// The sorted-set commands' argument grammar (the rest is args.go's):
// ZADD's options, score and lexicographic ranges, ZRANGE's options and
// the algebra's WEIGHTS and AGGREGATE, as redis-server 7.0 reads them
// (t_zset.c).

// zaddFlags are ZADD's options.
type zaddFlags struct {
	nx, xx, gt, lt, ch, incr bool
}

// zaddArgs parses ZADD's (and ZINCRBY's, incr) options and its score and
// member pairs: the flags and the index of the first score.
func (c *conn) zaddArgs(args [][]byte, incr bool) (f zaddFlags, first int, scores []float64, ok bool) {
	f.incr = incr
	i := 2
loop:
	for ; i < len(args); i++ {
		if c := args[i]; len(c) == 0 || c[0]|0x20 < 'a' || c[0]|0x20 > 'z' {
			break // a score (no flag starts with another byte), not upper-cased
		}
		switch word(args[i]) {
		case "NX":
			f.nx = true
		case "XX":
			f.xx = true
		case "CH":
			f.ch = true
		case "INCR":
			f.incr = true
		case "GT":
			f.gt = true
		case "LT":
			f.lt = true
		default:
			break loop
		}
	}
	n := len(args) - i
	switch {
	case n%2 != 0 || n == 0:
		c.w.Error(errSyntax)
	case f.nx && f.xx:
		c.w.Error(errZAddXXNX)
	case f.gt && f.nx || f.lt && f.nx || f.gt && f.lt:
		c.w.Error(errZAddGTLTNX)
	case f.incr && n > 2:
		c.w.Error(errZAddIncrPair)
	default:
		scores = c.typed.scores[:0]
		for j := i; j < len(args); j += 2 {
			s, ok := resp.ParseDouble(args[j])
			if !ok {
				c.w.Error(errNotFloat)
				return f, 0, nil, false
			}
			scores = append(scores, s)
		}
		c.typed.scores = scores
		return f, i, scores, true
	}
	return f, 0, nil, false
}

// scoreRangeArgs parses a score range's min and max: a number, "(" and a
// number for an exclusive end, read by strtod as zslParseRange reads them.
func scoreRangeArgs(lo, hi []byte) (r zset.ScoreRange, ok bool) {
	end := func(b []byte) (float64, bool, bool) {
		ex := len(b) > 0 && b[0] == '('
		if ex {
			b = b[1:]
		}
		f, ok := resp.ParseDoubleLoose(b)
		return f, ex, ok
	}
	var ok1, ok2 bool
	r.Min, r.MinEx, ok1 = end(lo)
	r.Max, r.MaxEx, ok2 = end(hi)
	return r, ok1 && ok2
}

// lexRangeArgs parses a lexicographic range's min and max: "-", "+",
// "[member" or "(member".
func lexRangeArgs(lo, hi []byte) (r zset.LexRange, ok bool) {
	end := func(b []byte) (zset.LexBound, bool) {
		if len(b) == 0 {
			return zset.LexBound{}, false
		}
		switch b[0] {
		case '+', '-':
			if len(b) > 1 && b[1] != 0 {
				return zset.LexBound{}, false
			}
			if b[0] == '+' {
				return zset.LexBound{Inf: 1, Ex: true}, true
			}
			return zset.LexBound{Inf: -1, Ex: true}, true
		case '(', '[':
			return zset.LexBound{Ex: b[0] == '(', Value: b[1:]}, true
		}
		return zset.LexBound{}, false
	}
	var ok1, ok2 bool
	r.Min, ok1 = end(lo)
	r.Max, ok2 = end(hi)
	return r, ok1 && ok2
}

// zrangeBy is what a ZRANGE's start and stop are.
type zrangeBy uint8

const (
	byAuto zrangeBy = iota
	byRank
	byScore
	byLex
)

// zrangeReq is a parsed ZRANGE (or ZRANGESTORE, ZREVRANGE,
// ZRANGEBYSCORE...).
type zrangeReq struct {
	by            zrangeBy
	rev           bool
	withScores    bool
	offset, limit int64 // limit -1: none
	start, stop   int64
	score         zset.ScoreRange
	lex           zset.LexRange
}

// zrangeArgs parses a range command's arguments after its key (args[0]
// is the key): min max and options, as zrangeGenericCommand does; by and
// rev are fixed by the legacy commands (byAuto and revAuto let the
// options choose).
func (c *conn) zrangeArgs(args [][]byte, store bool, by zrangeBy, rev, revFixed bool) (q zrangeReq, ok bool) {
	q = zrangeReq{by: by, rev: rev, limit: -1}
	for j := 3; j < len(args); j++ {
		left := len(args) - j - 1
		switch w := word(args[j]); {
		case !store && w == "WITHSCORES":
			q.withScores = true
		case w == "LIMIT" && left >= 2:
			o, ok1 := parseInt(args[j+1])
			l, ok2 := parseInt(args[j+2])
			if !ok1 || !ok2 {
				c.w.Error(errNotInt)
				return q, false
			}
			q.offset, q.limit = o, l
			j += 2
		case !revFixed && !q.rev && w == "REV": // once, as each BY below: a second is a syntax error
			q.rev = true
		case q.by == byAuto && w == "BYLEX":
			q.by = byLex
		case q.by == byAuto && w == "BYSCORE":
			q.by = byScore
		default:
			c.w.Error(errSyntax)
			return q, false
		}
	}
	if q.by == byAuto {
		q.by = byRank
	}
	switch {
	case q.limit != -1 && q.by == byRank:
		c.w.Error(errLimitNeedsBy)
		return q, false
	case q.withScores && q.by == byLex:
		c.w.Error(errScoresWithLex)
		return q, false
	}
	lo, hi := args[1], args[2]
	if q.rev && q.by != byRank {
		lo, hi = hi, lo // given as max min
	}
	switch q.by {
	case byRank:
		var ok1, ok2 bool
		q.start, ok1 = parseInt(lo)
		q.stop, ok2 = parseInt(hi)
		if !ok1 || !ok2 {
			c.w.Error(errNotInt)
			return q, false
		}
	case byScore:
		if q.score, ok = scoreRangeArgs(lo, hi); !ok {
			c.w.Error(errMinMaxFloat)
			return q, false
		}
	case byLex:
		if q.lex, ok = lexRangeArgs(lo, hi); !ok {
			c.w.Error(errMinMaxLex)
			return q, false
		}
	}
	return q, true
}

// algebraArgs parses ZUNION's, ZINTER's and ZDIFF's (and their STORE
// forms', ZINTERCARD's) options after the keys: WEIGHTS (not for a
// difference), AGGREGATE, WITHSCORES (not for a STORE) and LIMIT (only
// for ZINTERCARD).
func (c *conn) algebraArgs(opts [][]byte, srcs []zset.Source, op zset.Op, store, card bool) (agg zset.Aggregate, withScores bool, limit int64, ok bool) {
	for j := 0; j < len(opts); {
		left := len(opts) - j
		switch w := word(opts[j]); {
		case op != zset.Diff && !card && left >= len(srcs)+1 && w == "WEIGHTS":
			j++
			for i := range srcs {
				f, ok := resp.ParseDouble(opts[j])
				if !ok {
					c.w.Error(errWeightFloat)
					return 0, false, 0, false
				}
				srcs[i].Weight = f
				j++
			}
		case op != zset.Diff && !card && left >= 2 && w == "AGGREGATE":
			switch word(opts[j+1]) {
			case "SUM":
				agg = zset.Sum
			case "MIN":
				agg = zset.Min
			case "MAX":
				agg = zset.Max
			default:
				c.w.Error(errSyntax)
				return 0, false, 0, false
			}
			j += 2
		case !store && !card && w == "WITHSCORES":
			withScores = true
			j++
		case card && left >= 2 && w == "LIMIT":
			n, ok := parseInt(opts[j+1])
			if !ok || n < 0 {
				c.w.Error(errLimitNegative)
				return 0, false, 0, false
			}
			limit = n
			j += 2
		default:
			c.w.Error(errSyntax)
			return 0, false, 0, false
		}
	}
	return agg, withScores, limit, true
}

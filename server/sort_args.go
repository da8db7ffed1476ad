package server

import (
	"bytes"
	"math"
)

// SORT's and SORT_RO's options, read as Redis 7.0's sortCommandGeneric
// reads them (sort.c): left to right, the last of a repeated option wins,
// an option word compared as strcasecmp compares C strings (up to a NUL).

// sortArgs are one call's options.
type sortArgs struct {
	desc, alpha bool
	// dontsort: a BY pattern without '*' was given (BY nosort): the
	// elements keep their order. It stays set by a later BY with a '*',
	// as Redis's flag does.
	dontsort   bool
	start, cnt int64    // LIMIT offset count; count -1: to the end
	by         []byte   // the BY pattern, nil without
	gets       [][]byte // the GET patterns, in order
	store      []byte   // STORE's destination, nil without
}

// cString is b up to its first NUL byte, as C reads an argument.
func cString(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// sortWord is an option word upper case, as strcasecmp sees it.
func sortWord(b []byte) string { return word(cString(b)) }

// hasStar reports a '*' in a pattern's C string (strchr).
func hasStar(p []byte) bool { return bytes.IndexByte(cString(p), '*') >= 0 }

// parseSortArgs reads args[2:]; ok false: the error reply is written.
// readonly is SORT_RO, which has no STORE.
func (c *conn) parseSortArgs(args [][]byte, readonly bool) (o sortArgs, ok bool) {
	o.cnt = -1
	for j := 2; j < len(args); j++ {
		left := len(args) - j - 1
		switch w := sortWord(args[j]); {
		case w == "ASC":
			o.desc = false
		case w == "DESC":
			o.desc = true
		case w == "ALPHA":
			o.alpha = true
		case w == "LIMIT" && left >= 2:
			var ok1, ok2 bool
			o.start, ok1 = parseInt(args[j+1])
			o.cnt, ok2 = parseInt(args[j+2])
			if !ok1 || !ok2 {
				c.w.Error(errNotInt)
				return o, false
			}
			j += 2
		case w == "STORE" && left >= 1 && !readonly:
			o.store = args[j+1]
			j++
		case w == "BY" && left >= 1:
			o.by = args[j+1]
			if !hasStar(o.by) {
				o.dontsort = true // a constant pattern: nothing to sort by
			} else if c.s.opts.Cluster {
				c.w.Error(errSortByCluster)
				return o, false
			}
			j++
		case w == "GET" && left >= 1:
			if c.s.opts.Cluster {
				c.w.Error(errSortGetCluster)
				return o, false
			}
			o.gets = append(o.gets, args[j+1])
			j++
		default:
			c.w.Error(errSyntax)
			return o, false
		}
	}
	return o, true
}

// span is the range of n sorted elements the output takes, from and to
// inclusive (to < from: none), as Redis clamps LIMIT: a negative offset
// is 0, a negative count runs to the end, an offset past the end takes
// nothing. An end past int64 (Redis's long overflows there) runs to the
// end.
func (o *sortArgs) span(n int) (from, to int) {
	start, end := max(o.start, 0), int64(n)-1
	if o.cnt >= 0 && o.cnt-1 <= math.MaxInt64-start {
		end = start + o.cnt - 1
	}
	if start >= int64(n) {
		start, end = int64(n)-1, int64(n)-2
	}
	end = min(end, int64(n)-1)
	return int(start), int(end)
}

// sortExclusive reports whether SORT args need the transaction lock
// exclusively: they store, or read keys by a BY or GET pattern, which
// must all be read at one moment as Redis's one thread reads them. A
// SORT of one key alone runs beside other commands.
func sortExclusive(args [][]byte) bool {
	// Every argument is looked at as an option word (a pattern that reads
	// STORE makes it exclusive needlessly, never the other way).
	for j := 2; j+1 < len(args); j++ {
		switch sortWord(args[j]) {
		case "STORE":
			return true
		case "BY":
			if hasStar(args[j+1]) {
				return true
			}
		case "GET":
			if !isHashPattern(args[j+1]) {
				return true
			}
		}
	}
	return false
}

// isHashPattern reports GET's pattern "#", the element itself, as
// lookupKeyByPattern tests it (its C string is "#").
func isHashPattern(p []byte) bool { return len(p) >= 1 && p[0] == '#' && (len(p) == 1 || p[1] == 0) }

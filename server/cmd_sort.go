package server

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/tiercache/tiercache/resp"
	"github.com/tiercache/tiercache/value/list"
	"github.com/tiercache/tiercache/value/set"
	"github.com/tiercache/tiercache/value/zset"
)

// SORT and SORT_RO, as Redis 7.0's sortCommandGeneric (sort.c): the
// elements of a list, set or sorted set, sorted by their value or by the
// keys a BY pattern names, numerically (strtod, ties in byte order) or
// with ALPHA as strings, a LIMIT of them, each answered as itself or as
// the values of GET patterns, or stored as a list (STORE).

// sortElem is one element to sort and what it is sorted by.
type sortElem struct {
	val   []byte
	score float64 // numeric: its weight (0 when BY's key is missing)
	by    []byte  // ALPHA with BY: its weight, nil when missing
}

// sortCmd: SORT key [BY pattern] [LIMIT offset count] [GET pattern ...]
// [ASC|DESC] [ALPHA] [STORE destination] → the elements (or GET's
// values, nil for a missing one), or with STORE the number of them
// stored; SORT_RO (readonly) has no STORE.
func (c *conn) sortCmd(args [][]byte, readonly bool) {
	c.noop = true // the sorted key is never changed; a STORE touches its destination itself
	defer func() {
		if cap(c.sortKey) > maxAggKeep {
			c.sortKey = nil
		}
	}()
	o, ok := c.parseSortArgs(args, readonly)
	if !ok {
		return
	}
	elems, isSet, ok := c.sortSource(args[1])
	if !ok {
		return
	}
	if o.dontsort && isSet && (o.store != nil || c.scriptOf != nil) {
		// A set has no order of its own: stored, or read by a script, it
		// is sorted as strings so that the result is deterministic
		// (Redis's comment: across scripting and replication).
		o.dontsort, o.alpha, o.by = false, true, nil
	}
	from, to := o.span(len(elems))
	if o.dontsort && !isSet && o.desc {
		slices.Reverse(elems) // a list's or sorted set's own order, reversed
	}
	if !o.dontsort {
		if !c.sortElems(elems, &o) {
			return
		}
	}
	if to < from {
		elems = nil
	} else {
		elems = elems[from : to+1]
	}
	c.sortOutput(elems, &o)
}

// sortSource reads key's elements: a list's in order, a set's in its
// order, a sorted set's by score; none for an absent key. ok false: the
// error reply (WRONGTYPE) is written.
func (c *conn) sortSource(key []byte) (elems []sortElem, isSet, ok bool) {
	rec, kind, _, exists, _, err := c.s.cache.ViewAny(nil, key)
	if err != nil {
		c.cacheError(err)
		return nil, false, false
	}
	if !exists {
		c.st.misses.Add(1)
		return nil, false, true
	}
	c.st.hits.Add(1)
	self := func(b []byte) []byte { return b }
	switch kind {
	case kindList:
		var items [][]byte
		items, err = list.Items(nil, rec)
		elems = sortElemsOf(items, self)
	case kindSet:
		var m set.Members
		err = m.Load(rec)
		elems, isSet = sortElemsOf(m.All(), self), true
	case kindZSet:
		var z zset.Entries
		err = z.Load(rec)
		elems = sortElemsOf(z.All(), func(e zset.Entry) []byte { return e.Member })
	default:
		c.w.Error(errWrongType)
		return nil, false, false
	}
	if err != nil {
		c.cacheError(err)
		return nil, false, false
	}
	return elems, isSet, true
}

// sortElemsOf is the elements to sort of items, each val(item).
func sortElemsOf[T any](items []T, val func(T) []byte) []sortElem {
	elems := make([]sortElem, len(items))
	for i, it := range items {
		elems[i].val = val(it)
	}
	return elems
}

// sortElems weighs elems and sorts them; false: the error reply is
// written (a weight that is no number without ALPHA, after every weight
// was read, as Redis answers it; or the cache's error).
func (c *conn) sortElems(elems []sortElem, o *sortArgs) bool {
	now := c.now()
	bad := false
	for i := range elems {
		e := &elems[i]
		w := e.val
		if o.by != nil {
			v, err := c.sortLookup(o.by, e.val, now)
			if err != nil {
				c.cacheError(err)
				return false
			}
			if v == nil {
				continue // a missing weight: 0, or nil for ALPHA
			}
			w = v
		}
		if o.alpha {
			if o.by != nil {
				e.by = w
			}
			continue
		}
		f, ok := resp.ParseDoubleSort(w)
		e.score = f
		bad = bad || !ok
	}
	if bad {
		c.w.Error(errSortScore)
		return false
	}
	// Redis's sortCompare: with STORE strings compare as bytes, else by
	// strcoll, which for the C and C.UTF-8 locales is strcmp: up to a NUL.
	str := func(a, b []byte) int { return bytes.Compare(cString(a), cString(b)) }
	if o.store != nil {
		str = bytes.Compare
	}
	var less func(a, b sortElem) int
	switch {
	case !o.alpha:
		less = func(a, b sortElem) int {
			if r := cmp.Compare(a.score, b.score); r != 0 {
				return r
			}
			return bytes.Compare(a.val, b.val)
		}
	case o.by != nil:
		less = func(a, b sortElem) int {
			switch {
			case a.by == nil || b.by == nil:
				return boolInt(b.by == nil) - boolInt(a.by == nil)
			}
			return str(a.by, b.by)
		}
	default:
		less = func(a, b sortElem) int { return str(a.val, b.val) }
	}
	if o.desc {
		asc := less
		less = func(a, b sortElem) int { return -asc(a, b) }
	}
	// Stable: elements that compare equal keep their order, as glibc's
	// qsort (a merge sort) keeps them for redis-server.
	slices.SortStableFunc(elems, less)
	return true
}

// sortOutput answers elems, or the values their GET patterns name, or
// stores them as a list. The output is bounded as a list value is: past
// max_value bytes (as a list's record) it is refused as it is built, so
// that the values GET reads take no more memory than one value may;
// with STORE the list's elements limit holds too (storeCheck).
func (c *conn) sortOutput(elems []sortElem, o *sortArgs) {
	n := len(elems)
	if len(o.gets) > 0 {
		n *= len(o.gets)
	}
	out := make([][]byte, 0, n)
	size := 0
	now := c.now()
	add := func(v []byte) bool {
		size += list.ItemSize(v)
		if list.Size(len(out)+1, size) > c.s.opts.MaxValueBytes {
			c.w.Error(errSortTooBig(c.s.opts.MaxValueBytes))
			return false
		}
		out = append(out, v)
		return true
	}
	for _, e := range elems {
		if len(o.gets) == 0 {
			if !add(e.val) {
				return
			}
			continue
		}
		for _, g := range o.gets {
			v, err := c.sortLookup(g, e.val, now)
			if err != nil {
				c.cacheError(err)
				return
			}
			if !add(v) {
				return
			}
		}
	}
	if o.store == nil {
		c.w.Array(len(out))
		for _, v := range out {
			if v == nil {
				c.w.Null()
			} else {
				c.w.Bulk(v)
			}
		}
		return
	}
	c.storeAs(o.store, sortedList(out), kindList, notifyList, "sortstore")
}

// sortedList is SORT's result as a list value to store (a missing GET
// value stored as the empty string, as Redis stores it).
type sortedList [][]byte

func (l sortedList) Len() int { return len(l) }

func (l sortedList) Size() int {
	body := 0
	for _, v := range l {
		body += list.ItemSize(v)
	}
	return list.Size(len(l), body)
}

func (l sortedList) AppendRecord(dst []byte) []byte { return list.Encode(dst, l) }

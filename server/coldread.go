package server

import (
	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/value/hash"
	"github.com/tiercache/tiercache/value/list"
)

// Reads of a large aggregate only the cold tier holds take the pieces
// they need (tier.ReadPieces, nvmekv K20): HGET, HMGET, HEXISTS, HSTRLEN
// and HLEN read a hash's piece table and the pieces of the fields they
// name; LRANGE, LINDEX and LLEN a list's table and the pieces of the
// range. ColdCut lays the records out for it when they go to cold.

// ColdCut lays out the record of an aggregate of kind flags for the cold
// tier's pieces (coldstore.Config.Cut): a large hash by its fields' hash
// bits, a large list at its elements; any other value is stored whole.
func ColdCut(flags uint32, rec []byte) (out []byte, ends []int, metas []uint32) {
	switch flags & 0xff {
	case uint32(kindHash):
		return hash.Cut(rec)
	case uint32(kindList):
		if ends, metas := list.Cut(rec); ends != nil {
			return rec, ends, metas
		}
	}
	return nil, nil, nil
}

// metasOf is the metas of a piece table.
func metasOf(t []backend.PieceInfo) []uint32 {
	m := make([]uint32, len(t))
	for i, p := range t {
		m[i] = p.Meta
	}
	return m
}

// hashCold answers a read of names of key's hash from its cold pieces
// when only the cold tier holds it: answer gets a lookup of each name
// among the pieces read, and the field count. handled false: nothing was
// answered, the caller reads the hash as usual.
func (c *conn) hashCold(key []byte, names [][]byte, answer func(lookup func(name []byte) ([]byte, bool), n int)) (handled bool) {
	var chosen []int
	done, err := c.s.cache.ReadPieces(key, hashes, func(t []backend.PieceInfo) []int {
		chosen = hash.PiecesFor(metasOf(t), names)
		return chosen
	}, func(pieces [][]byte, t []backend.PieceInfo) error {
		if t == nil { // stored whole
			rec := pieces[0]
			if hash.HasTTL(rec) { // its expired fields are not there
				var err error
				if rec, _, _, err = hash.Live(nil, rec, c.s.nowMs(), false); err != nil {
					return err
				}
			}
			h, err := hash.LoadHash(rec)
			if err != nil {
				return err
			}
			answer(h.Get, h.Len())
			return nil
		}
		var err error
		lookup := func(name []byte) (v []byte, found bool) {
			for j, p := range pieces {
				if e := hash.PieceEach(p, chosen[j] == 0, func(f, val []byte) bool {
					if string(f) == string(name) {
						v, found = val, true
					}
					return !found
				}); e != nil {
					err = e
				}
				if found {
					break
				}
			}
			return v, found
		}
		answer(lookup, hash.Total(metasOf(t)))
		return err
	})
	return c.coldDone(done, err)
}

// listCold answers a read of a range of key's list from its cold pieces
// when only the cold tier holds it: span gives the range [lo, hi) of a
// list of n elements, answer gets its elements and n. handled false:
// nothing was answered, the caller reads the list as usual.
func (c *conn) listCold(key []byte, span func(n int) (lo, hi int), answer func(items [][]byte, n int)) (handled bool) {
	var lo, hi, first int
	var chosen []int
	done, err := c.s.cache.ReadPieces(key, lists, func(t []backend.PieceInfo) []int {
		metas := metasOf(t)
		lo, hi = span(list.Total(metas))
		chosen, first = list.PiecesFor(metas, lo, hi)
		return chosen
	}, func(pieces [][]byte, t []backend.PieceInfo) error {
		items := c.lists.items[:0]
		defer func() { c.lists.items = items[:0] }()
		var err error
		n := 0
		if t == nil { // stored whole
			q, err := list.LoadQuick(pieces[0])
			if err != nil {
				return err
			}
			n = q.Len()
			lo, hi = span(n)
			items = q.Items(items)[lo:hi]
			answer(items, n)
			return nil
		}
		for j, p := range pieces {
			if items, err = list.PieceItems(items, p, chosen[j] == 0); err != nil {
				return err
			}
		}
		n = list.Total(metasOf(t))
		if lo >= hi {
			answer(nil, n)
			return nil
		}
		if hi-first > len(items) {
			return list.ErrCorrupt
		}
		answer(items[lo-first:hi-first], n)
		return nil
	})
	return c.coldDone(done, err)
}

// coldDone ends a read of cold pieces: an error is answered (and handled),
// a read done counts as a hit.
func (c *conn) coldDone(done bool, err error) bool {
	if err != nil {
		c.cacheError(err)
		return true
	}
	if done {
		c.st.hits.Add(1)
	}
	return done
}

package server

import (
	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/value/hash"
	"github.com/tiercache/tiercache/value/list"
)

// Reads of a large aggregate only the cold tier holds take the pieces
// they need (tier.ReadPieces, nvmekv K20): HGET, HMGET, HEXISTS, HSTRLEN,
// HTTL, HPTTL, HEXPIRETIME and HPEXPIRETIME read a hash's piece table and
// the pieces of the fields they name, HLEN the table and the pieces with
// a field expiry; LRANGE, LINDEX and LLEN a list's table and the pieces of the
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

// coldLookup finds a field of a hash read from its cold pieces: its value
// and expiry (0: none); an expired field is not found.
type coldLookup func(name []byte) (v []byte, exp int64, found bool)

// hashCold answers a read of names of key's hash (with count, of its
// field count) from its cold pieces when only the cold tier holds it:
// answer gets a lookup of each name among the pieces read, and with count
// the fields not expired. The pieces chosen are those that may hold the
// names, and with count those with a field expiry (the others' fields
// are counted from the table). handled false: nothing was answered, the
// caller reads the hash as usual. An expired field read here is not
// answered, and the hash is not noted for the sweeper: purging it would
// read it whole (a write, or a read of the whole hash, purges it).
func (c *conn) hashCold(key []byte, names [][]byte, count bool, answer func(get coldLookup, n int)) (handled bool) {
	now := c.s.nowMs()
	var chosen []int
	done, err := c.s.cache.ReadPieces(key, hashes, func(t []backend.PieceInfo) []int {
		metas := metasOf(t)
		chosen = hash.PiecesFor(metas, names)
		if count {
			chosen = hash.Expiring(metas)
		}
		return chosen
	}, func(pieces [][]byte, t []backend.PieceInfo) error {
		if t == nil { // stored whole
			h, err := hash.LoadHash(pieces[0])
			if err != nil {
				return err
			}
			answer(func(name []byte) ([]byte, int64, bool) {
				v, found := h.GetLive(name, now)
				return v, h.Expiry(name), found
			}, h.LenLive(now))
			return nil
		}
		metas := metasOf(t)
		var err error
		each := func(j int, f func(name, v []byte, exp int64) bool) {
			if e := hash.PieceEach(pieces[j], chosen[j] == 0, metas[chosen[j]], f); e != nil {
				err = e
			}
		}
		n := 0
		if count {
			n = hash.Total(metas)
			for j := range pieces {
				each(j, func(_, _ []byte, exp int64) bool {
					if hash.Expired(exp, now) {
						n--
					}
					return true
				})
			}
		}
		answer(func(name []byte) (v []byte, exp int64, found bool) {
			for j := 0; j < len(pieces) && v == nil; j++ {
				each(j, func(f, val []byte, e int64) bool {
					if string(f) == string(name) {
						v, exp = val, e
					}
					return v == nil
				})
			}
			if v == nil || hash.Expired(exp, now) {
				return nil, 0, false
			}
			return v, exp, true
		}, n)
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

package server

import (
	"github.com/tiercache/tiercache/tier"
	"github.com/tiercache/tiercache/value/hash"
	"github.com/tiercache/tiercache/value/list"
	"github.com/tiercache/tiercache/value/set"
	"github.com/tiercache/tiercache/value/zset"
)

// The kinds the server keeps live in the DRAM tiers (tier.Edit,
// tier.Read; docs/DESIGN.md "Data types"): each names its tier.Kind and
// the value package's structure that changes in place, made empty or
// from the kind's record.

// listKind: a list is a list.Quick, a deque of packed nodes.
type listKind struct{}

func (listKind) Kind() tier.Kind { return kindList }
func (listKind) New() tier.Live  { return list.NewQuick() }
func (listKind) Load(rec []byte) (tier.Live, error) {
	return list.LoadQuick(rec)
}

var lists tier.LiveKind = listKind{}

// hashKind: a hash is a hash.Hash, its record while small, a table once
// large.
type hashKind struct{}

func (hashKind) Kind() tier.Kind { return kindHash }
func (hashKind) New() tier.Live  { return hash.NewHash() }
func (hashKind) Load(rec []byte) (tier.Live, error) {
	return hash.LoadHash(rec)
}

var hashes tier.LiveKind = hashKind{}

// setKind: a set is a set.Live, a table of its members.
type setKind struct{}

func (setKind) Kind() tier.Kind { return kindSet }
func (setKind) New() tier.Live  { return set.NewLive() }
func (setKind) Load(rec []byte) (tier.Live, error) {
	return set.LoadLive(rec)
}

var sets tier.LiveKind = setKind{}

// readLive runs f on key's aggregate of kind lk for a read-only command,
// under the cache's read lock (f writes the reply from the structure):
// exists is false if the key is absent; ok is false after an error,
// which it has answered.
func (c *conn) readLive(key []byte, lk tier.LiveKind, f func(v tier.Live)) (exists, ok bool) {
	return c.readLiveAt(key, lk, c.now(), f)
}

// readLiveAt is readLive at the time now (the cache's Now, read for the
// command: tier.Cache.ReadAt).
func (c *conn) readLiveAt(key []byte, lk tier.LiveKind, now int64, f func(v tier.Live)) (exists, ok bool) {
	exists, err := c.s.cache.ReadAt(key, lk, now, func(v tier.Live) error {
		f(v)
		return nil
	})
	if err != nil {
		c.cacheError(err)
		return false, false
	}
	if exists {
		c.st.hits.Add(1)
	} else {
		c.st.misses.Add(1)
	}
	return exists, true
}

// zsetKind: a sorted set is a zset.Sorted, a member index and blocks in
// Redis's order.
type zsetKind struct{}

func (zsetKind) Kind() tier.Kind { return kindZSet }
func (zsetKind) New() tier.Live  { return zset.NewSorted() }
func (zsetKind) Load(rec []byte) (tier.Live, error) {
	return zset.LoadSorted(rec)
}

var zsets tier.LiveKind = zsetKind{}

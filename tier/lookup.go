package tier

import (
	"bytes"

	"github.com/tiercache/tiercache/policy"
)

// readAct is what a read of one key does next; planRead decides it, and
// every read path (Get and View, MGet, the read-modify-write commands,
// Where, drain, the lost-copy checks) executes its decision (T21).
type readAct uint8

const (
	// readMiss: the key is absent, deleted or expired.
	readMiss readAct = iota
	// readServe: a memory copy at the entry's version was found
	// (readPlan.tier says where).
	readServe
	// readCold: only cold can hold the entry's version (its write
	// completed): read it there at readPlan.ver, readPlan.size bytes.
	readCold
	// readAdopt: no entry, but cold may hold a key the directory does not
	// know (a store of an earlier run, or a key trim forgot): look it up
	// and adopt it (T4, T15), unless a cold delete of it is queued.
	readAdopt
	// readRetry: the entry's version is in no tier the reader can see
	// yet: a copy is moving between two of them (T5). Decide again.
	readRetry
	// readValidate: the entry's copy may be stale (invalidations from the
	// remote tier may have been missed since it was written or checked,
	// T42): check it against the remote first.
	readValidate
)

// readPlan is planRead's decision.
type readPlan struct {
	act   readAct
	tier  policy.Tier // readServe: the tier (or transit's destination) the copy was found in
	e     *entry      // the live entry (readServe, readCold, readRetry)
	ver   uint64      // its version
	size  int         // its value's size
	kind  Kind        // its value's kind
	epoch uint64      // readAdopt: the shard's adoptEpoch of the key, checked when adopting
	// filled: readServe of a string from a DRAM record, copied into the
	// slice the reader's into gave (not appended to dst).
	filled bool
}

// planRead decides what a read of key does, with sh's lock held (read or
// write) and now the reader's clock. It is the one place that finds "this
// version" of a key: the entry's DRAM record, then a copy in transit to
// cold (memLookup), then cold. A memory copy is appended to dst, except a
// string's DRAM record when into (not nil) gives a slice of its size: it
// is copied there (p.filled), straight from the record. A DRAM record read
// is marked touched (hot's second chance).
func (c *Cache) planRead(dst, key []byte, lo uint64, sh *shard, now int64, into func(n int) []byte, validate bool) ([]byte, readPlan) {
	e := sh.m[viewString(key)]
	if e == nil {
		if c.coldUnknown.Load() && c.cold != nil {
			return dst, readPlan{act: readAdopt, epoch: sh.adoptEpoch(lo)}
		}
		return dst, readPlan{act: readMiss}
	}
	if !e.live(now) {
		return dst, readPlan{act: readMiss}
	}
	p := readPlan{e: e, ver: e.ver, size: int(e.valueSize()), kind: e.kind}
	if validate && c.rt.suspect(e) {
		p.act = readValidate
		return dst, p
	}
	if e.loc != 0 {
		e.mark(markTouched)
		if into != nil && e.kind == KindString {
			if b := into(int(e.recSize)); b != nil {
				copy(b, c.mem.bytesOf(e))
				p.act, p.tier, p.filled = readServe, e.where.tier(), true
				return dst, p
			}
		}
	}
	if v, t, ok := c.memLookup(dst, key, e); ok {
		p.act, p.tier = readServe, t
		return v, p
	}
	if c.cold != nil && e.coldHas(e.ver) {
		p.act = readCold
		return dst, p
	}
	p.act = readRetry
	return dst, p
}

// memLookup appends the value of e's version from memory to dst: its DRAM
// record (a live structure's serialized form), or its copy in transit to
// cold. The caller holds the key's
// shard lock.
func (c *Cache) memLookup(dst, key []byte, e *entry) ([]byte, policy.Tier, bool) {
	if e.where == memLive {
		return c.liveRecord(dst, e), policy.Hot, true
	}
	if e.loc != 0 {
		return append(dst, c.mem.bytesOf(e)...), e.where.tier(), true
	}
	return c.tr.get(dst, key, e.ver)
}

// memEqual reports whether e's DRAM copy holds exactly v (e's shard lock
// held; e has a DRAM copy): its record, or a live structure's serialized
// form.
func (c *Cache) memEqual(e *entry, v []byte) bool {
	if e.where == memLive {
		return bytes.Equal(c.liveRecord(nil, e), v)
	}
	return bytes.Equal(c.mem.bytesOf(e), v)
}

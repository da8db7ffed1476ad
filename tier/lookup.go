package tier

import "github.com/tiercache/tiercache/policy"

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
	// yet: a copy is moving between two of them (T5). Wait for ristretto's
	// pending work and decide again.
	readRetry
)

// readPlan is planRead's decision.
type readPlan struct {
	act   readAct
	tier  policy.Tier // readServe: the tier (or transit's destination) the copy was found in
	hot   *hotEntry   // readServe from hot with share set: the shared, immutable copy
	e     *entry      // the live entry (readServe, readCold, readRetry)
	ver   uint64      // its version
	size  int         // its value's size
	kind  Kind        // its value's kind
	epoch uint64      // readAdopt: the shard's removal count, checked when adopting
}

// planRead decides what a read of key does, with sh's lock held (read or
// write) and now the reader's clock. It is the one place that finds "this
// version" of a key: the entry's hot copy, then hot through ristretto,
// transit, warm and transit again (memLookup), then cold. A memory copy is
// appended to dst, except a hot copy when share is set: that is returned
// in the plan, not copied.
func (c *Cache) planRead(dst, key []byte, sh *shard, now int64, share bool) ([]byte, readPlan) {
	e := sh.m[viewString(key)]
	if e == nil {
		if c.coldUnknown.Load() && c.cold != nil {
			return dst, readPlan{act: readAdopt, epoch: sh.epoch}
		}
		return dst, readPlan{act: readMiss}
	}
	if !e.live(now) {
		return dst, readPlan{act: readMiss}
	}
	p := readPlan{e: e, ver: e.ver, size: int(e.size), kind: e.kind}
	if he := e.hot.Load(); he != nil && he.ver == e.ver {
		p.act, p.tier = readServe, policy.Hot
		if share {
			p.hot = he
			return dst, p
		}
		return append(dst, he.val...), p
	}
	if v, t, ok := c.memLookup(dst, key, e.ver); ok {
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

// memLookup finds key at version ver in the memory tiers. The order (hot,
// transit, warm, transit) catches a copy moving between any two of them.
// The caller holds the key's shard lock.
func (c *Cache) memLookup(dst, key []byte, ver uint64) ([]byte, policy.Tier, bool) {
	if he, ok := c.hot.get(key, ver); ok {
		return append(dst, he.val...), policy.Hot, true
	}
	if v, t, ok := c.tr.get(dst, key, ver); ok {
		return v, t, true
	}
	if c.warm != nil {
		v, m, ok := c.warm.Get(dst, key)
		if ok && m.Version == ver {
			return v, policy.Warm, true
		}
		dst = v[:len(dst)]
	}
	if v, t, ok := c.tr.get(dst, key, ver); ok {
		return v, t, true
	}
	return dst, policy.None, false
}

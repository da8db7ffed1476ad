package server

import (
	"time"

	"github.com/tiercache/tiercache/value/hash"
)

// The hash field expiry commands: Redis 7.4's HEXPIRE, HPEXPIRE,
// HEXPIREAT, HPEXPIREAT, HTTL, HPTTL, HEXPIRETIME, HPEXPIRETIME and
// HPERSIST, and Redis 8's HGETDEL, HGETEX and HSETEX, on the hash.Hash
// the DRAM tiers keep (its expiries in a side table; its record of hash's
// second version). The writes are one hashEdit each; those that may grow
// the hash (an expiry set) edit a copy, checked against the limits before
// it replaces the hash. The reads answer from the hash (readHash). Their
// keyspace events are notify_events.go's, from what the command did
// (c.agg.hfe).

// hfeDone is what a field expiry write did, for its events.
type hfeDone struct {
	updated, deleted int  // expiries set or removed; fields deleted (a past time, HGETDEL)
	set              bool // HSETEX set its fields
	removed          bool // the hash was left empty and removed
}

// hfeUpdate runs edit as hashEdit does (isolate: in a copy checked
// against the limits), on an empty hash when the key is absent, and notes
// what it did: a hash left empty is removed (done.removed); a change of
// nothing is c.noop.
func (c *conn) hfeUpdate(key []byte, isolate bool, edit func(h *hash.Hash) (bool, error)) error {
	var changed bool
	_, err := c.hashEdit(key, true, isolate, func(h *hash.Hash) (bool, error) {
		c.agg.hfe = hfeDone{}
		ch, err := edit(h)
		changed = ch && err == nil
		c.agg.hfe.removed = changed && h.Len() == 0
		return ch, err
	})
	if err == nil && !changed && c.agg.hfe.updated == 0 {
		c.noop = true
	}
	return err
}

// hexpireCmd: HEXPIRE key seconds [NX|XX|GT|LT] FIELDS numfields field
// ... (HPEXPIRE: unit ms; HEXPIREAT, HPEXPIREAT: abs) → a code per field:
// -2 no such field, 0 condition not met, 1 set, 2 deleted (a time not
// after now).
func (c *conn) hexpireCmd(args [][]byte, unit time.Duration, abs bool) {
	at, cond, names, e := c.hexpireArgs(args, unit, abs)
	now := c.s.nowMs()
	err := c.hfeUpdate(args[1], true, func(h *hash.Hash) (bool, error) {
		c.agg.codes = c.agg.codes[:0]
		if e != "" { // after the type check, as Redis
			return false, replyError(e)
		}
		c.agg.codes = h.Expire(names, at, cond, now, c.agg.codes)
		for _, code := range c.agg.codes {
			switch code {
			case hash.CodeSet:
				c.agg.hfe.updated++
			case hash.CodeDeleted:
				c.agg.hfe.deleted++
			}
		}
		return c.agg.hfe.updated+c.agg.hfe.deleted > 0, nil
	})
	if err != nil {
		c.cacheError(err)
		return
	}
	c.s.hfe.expired.Add(uint64(c.agg.hfe.deleted)) // Redis counts them in expired_subkeys
	c.intsReply(c.agg.codes, len(names))
}

// intsReply answers codes, or n times -2 when the key was absent (the
// edit never ran).
func (c *conn) intsReply(codes []int64, n int) {
	c.w.Array(n)
	if len(codes) != n {
		for range n {
			c.w.Int(hash.CodeNoField)
		}
		return
	}
	for _, code := range codes {
		c.w.Int(code)
	}
}

// cmdHPersist: HPERSIST key FIELDS numfields field ... → per field -2 no
// such field, -1 no expiry, 1 expiry removed.
func (c *conn) cmdHPersist(args [][]byte) {
	names, e := fieldsAt(c.cmd.name, args, 2, errNumFieldsPositive)
	err := c.hfeUpdate(args[1], false, func(h *hash.Hash) (bool, error) {
		c.agg.codes = c.agg.codes[:0]
		if e != "" {
			return false, replyError(e)
		}
		c.agg.codes = h.PersistFields(names, c.agg.codes)
		for _, code := range c.agg.codes {
			if code == hash.CodeSet {
				c.agg.hfe.updated++
			}
		}
		return c.agg.hfe.updated > 0, nil
	})
	if err != nil {
		c.cacheError(err)
		return
	}
	c.intsReply(c.agg.codes, len(names))
}

// httlCmd: HTTL key FIELDS numfields field ... (HPTTL: unit ms;
// HEXPIRETIME, HPEXPIRETIME: at, the time itself) → per field -2 no such
// field, -1 no expiry, else the time left (or the time), seconds rounded
// up as Redis's httlGenericCommand does.
func (c *conn) httlCmd(args [][]byte, unit time.Duration, at bool) {
	names, e := fieldsAt(c.cmd.name, args, 2, errNumFieldsPositive)
	base := int64(0)
	if !at {
		base = c.s.nowMs() // before the reads: a field live for them has time left
	}
	answer := func(get coldLookup) {
		if e != "" { // after the type check, as Redis
			c.w.Error(e)
			return
		}
		c.w.Array(len(names))
		for _, name := range names {
			_, exp, found := get(name)
			switch {
			case !found:
				c.w.Int(hash.CodeNoField)
			case exp == 0:
				c.w.Int(hash.CodeNoTTL)
			case unit == time.Second:
				c.w.Int((exp + 999 - base) / 1000)
			default:
				c.w.Int(exp - base)
			}
		}
	}
	if c.hashCold(args[1], names, false, func(get coldLookup, _ int) { answer(get) }) {
		return
	}
	live := func(h *hash.Hash, now int64) {
		answer(func(name []byte) ([]byte, int64, bool) {
			v, found := h.GetLive(name, now)
			return v, h.Expiry(name), found
		})
	}
	exists, ok := c.readHash(args[1], live)
	if ok && !exists {
		live(hash.NewHash(), c.s.nowMs())
	}
}

// hfeValues keeps the values a command answers past its Update (which
// hands it values valid only during the call): each copied into one
// buffer, nil where the field was absent.
type hfeValues struct {
	buf  []byte
	ends []int // the end of each value in buf, -1 for nil
}

func (v *hfeValues) reset() { v.buf, v.ends = v.buf[:0], v.ends[:0] }

func (v *hfeValues) add(b []byte, found bool) {
	if !found {
		v.ends = append(v.ends, -1)
		return
	}
	v.buf = append(v.buf, b...)
	v.ends = append(v.ends, len(v.buf))
}

// reply writes the values kept, or n nils when none was (the key was
// absent).
func (c *conn) hfeValuesReply(v *hfeValues, n int) {
	c.w.Array(n)
	if len(v.ends) != n {
		for range n {
			c.w.Null()
		}
		return
	}
	start := 0
	for _, end := range v.ends {
		if end < 0 {
			c.w.Null()
			continue
		}
		c.w.Bulk(v.buf[start:end])
		start = end
	}
	if cap(v.buf) > maxAggKeep {
		v.buf = nil
	}
}

// cmdHGetDel: HGETDEL key FIELDS numfields field ... → each field's value
// (nil if absent), the fields deleted; the key goes with its last field.
func (c *conn) cmdHGetDel(args [][]byte) {
	names, e := fieldsAt(c.cmd.name, args, 2, errNumFieldsPositive)
	c.hgetFields(args[1], names, hgetexOpts{del: true}, e)
}

// cmdHGetEx: HGETEX key [EX s|PX ms|EXAT ts|PXAT ms-ts|PERSIST] FIELDS
// numfields field ... → each field's value (nil if absent); the fields
// found get the expiry (deleted when it is not after now) or lose theirs.
func (c *conn) cmdHGetEx(args [][]byte) {
	o, names, e := c.hgetexArgs(args)
	c.hgetFields(args[1], names, o, e)
}

// hgetFields answers the values of names in key's hash and changes the
// fields found as o says (HGETDEL, HGETEX); e is the arguments' error,
// answered after the type check.
func (c *conn) hgetFields(key []byte, names [][]byte, o hgetexOpts, e string) {
	now := c.s.nowMs()
	v := &c.agg.vals
	err := c.hfeUpdate(key, o.set, func(h *hash.Hash) (bool, error) {
		v.reset()
		if e != "" {
			return false, replyError(e)
		}
		stored := false
		for _, name := range names {
			val, found := h.Get(name)
			v.add(val, found)
			if !found {
				continue
			}
			switch {
			case o.persist:
				// Redis counts every field found as updated (its
				// "hpersist" event), though only an expiry removed
				// changes the hash.
				c.agg.hfe.updated++
				stored = stored || h.Expiry(name) != 0
				h.SetExpiry(name, 0)
			case o.del || o.set && o.at <= now:
				h.Delete(name)
				c.agg.hfe.deleted++
				stored = true
			case o.set:
				h.SetExpiry(name, o.at)
				c.agg.hfe.updated++
				stored = true
			}
		}
		return stored, nil
	})
	if err != nil {
		c.cacheError(err)
		return
	}
	if !o.del {
		c.s.hfe.expired.Add(uint64(c.agg.hfe.deleted)) // a past time: Redis counts them expired
	}
	c.hfeValuesReply(v, len(names))
}

// cmdHSetEx: HSETEX key [FNX|FXX] [EX s|PX ms|EXAT ts|PXAT ms-ts|KEEPTTL]
// FIELDS numfields field value ... → 1 when the fields were set, 0 when
// FNX (some field exists) or FXX (some does not) refused.
func (c *conn) cmdHSetEx(args [][]byte) {
	o, pairs, e := c.hsetexArgs(args)
	if e != "" { // before the type check, as Redis's hsetexParseArgs
		c.w.Error(e)
		return
	}
	now := c.s.nowMs()
	var refused bool
	err := c.hfeUpdate(args[1], true, func(h *hash.Hash) (bool, error) {
		refused = false
		if o.fnx || o.fxx {
			for i := 0; i < len(pairs); i += 2 {
				if _, found := h.Get(pairs[i]); found == o.fnx {
					refused = true
					return false, nil
				}
			}
		}
		for i := 0; i < len(pairs); i += 2 {
			if o.keepTTL {
				h.PutKeepTTL(pairs[i], pairs[i+1])
			} else {
				h.Put(pairs[i], pairs[i+1])
			}
			switch {
			case o.set && o.at <= now:
				h.Delete(pairs[i])
				c.agg.hfe.deleted++
			case o.set:
				h.SetExpiry(pairs[i], o.at)
				c.agg.hfe.updated++
			}
		}
		c.agg.hfe.set = true
		return true, nil
	})
	if err != nil {
		c.cacheError(err)
		return
	}
	c.s.hfe.expired.Add(uint64(c.agg.hfe.deleted))
	c.boolReply(!refused, nil)
}

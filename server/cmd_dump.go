package server

import (
	"bytes"
	"errors"
	"slices"
	"time"

	"github.com/tiercache/tiercache/tier"
	"github.com/tiercache/tiercache/value"
	"github.com/tiercache/tiercache/value/hash"
	"github.com/tiercache/tiercache/value/list"
	"github.com/tiercache/tiercache/value/set"
	"github.com/tiercache/tiercache/value/zset"
)

// DUMP and RESTORE (Redis 7.0, cluster.c dumpCommand and restoreCommand):
// a key's value as a payload in Redis's RDB encoding, and a key made from
// one (value.DecodeDump, value.EncodeDump).

// cmdDump: DUMP key → the payload of key's value, nil when it is absent
// (S73). A hash with a field expiry left is refused (errDumpFieldTTL):
// 7.0's payload has no place for it.
func (c *conn) cmdDump(args [][]byte) {
	c.valueReply(c.dumpPayload(args[1])) // the payload is a new buffer, which may be c.scratch next
}

// dumpPayload is key's value as DUMP's payload; exists is false when
// there is no key (a hash whose fields all expired is none). A hash with
// a field expiry left is refused with errDumpFieldTTL (DUMP, MIGRATE).
func (c *conn) dumpPayload(key []byte) (payload []byte, exists bool, err error) {
	rec, kind, _, exists, _, err := c.s.cache.ViewAny(nil, key)
	if err == nil && exists && kind == kindHash {
		var minExp int64
		rec, minExp, _, err = hash.Live(nil, rec, c.now()/int64(time.Millisecond), false)
		switch {
		case err == nil && minExp != 0:
			return nil, true, replyError(errDumpFieldTTL)
		case err == nil && hash.Empty(rec):
			exists = false // every field expired: the hash is gone
		}
	}
	if err != nil || !exists {
		return nil, exists, err
	}
	d, err := dumpedOf(rec, kind)
	if err != nil {
		return nil, true, err
	}
	return value.EncodeDump(make([]byte, 0, value.DumpSize(d)), d), true, nil
}

// dumpedOf is the payload's value of rec, a record of kind k.
func dumpedOf(rec []byte, k tier.Kind) (value.Dumped, error) {
	switch k {
	case kindString:
		return value.Dumped{Type: value.DumpString, Str: rec}, nil
	case kindList:
		items, err := list.Items(nil, rec)
		return value.Dumped{Type: value.DumpList, Items: items}, err
	case kindSet:
		var m set.Members
		err := m.Decode(rec)
		return value.Dumped{Type: value.DumpSet, Items: m.All()}, err
	case kindZSet:
		var z zset.Entries
		if err := z.Decode(rec); err != nil {
			return value.Dumped{}, err
		}
		d := value.Dumped{Type: value.DumpZSet, Items: make([][]byte, z.Len()), Scores: make([]float64, z.Len())}
		for i, e := range z.All() {
			d.Items[i], d.Scores[i] = e.Member, e.Score
		}
		return d, nil
	case kindHash:
		fields, err := hash.Decode(nil, rec)
		d := value.Dumped{Type: value.DumpHash, Items: make([][]byte, 0, 2*len(fields))}
		for _, f := range fields {
			d.Items = append(d.Items, f.Name, f.Value)
		}
		return d, err
	}
	return value.Dumped{}, tier.ErrWrongKind
}

// restoreArgs are RESTORE's options.
type restoreArgs struct {
	replace, absTTL bool
}

// parseRestoreArgs reads RESTORE's [REPLACE] [ABSTTL] [IDLETIME s]
// [FREQ f] as restoreCommand does, in order: IDLETIME is an option only
// while FREQ was not given, and FREQ only while IDLETIME was not. The
// values are checked and not kept: tiercache's eviction keeps no LRU
// clock or LFU counter a key could be given.
func (c *conn) parseRestoreArgs(args [][]byte) (o restoreArgs, ok bool) {
	idle, freq := false, false
	for i := 0; i < len(args); i++ {
		more := i+1 < len(args)
		switch opt := word(args[i]); {
		case opt == "REPLACE":
			o.replace = true
		case opt == "ABSTTL":
			o.absTTL = true
		case opt == "IDLETIME" && more && !freq:
			i++
			n, ok := c.intArg(args[i])
			if !ok {
				return o, false
			}
			if n < 0 {
				c.w.Error(errRestoreIdle)
				return o, false
			}
			idle = true
		case opt == "FREQ" && more && !idle:
			i++
			n, ok := c.intArg(args[i])
			if !ok {
				return o, false
			}
			if n < 0 || n > 255 {
				c.w.Error(errRestoreFreq)
				return o, false
			}
			freq = true
		default:
			c.w.Error(errSyntax)
			return o, false
		}
	}
	return o, true
}

// cmdRestore: RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME s]
// [FREQ f] → OK. Redis's checks in its order (S74): the options, BUSYKEY
// without REPLACE, the TTL, the payload's footer, its value; then
// tiercache's limits, before anything changes (S75). A TTL already past
// makes no key (and with REPLACE deletes the old one).
func (c *conn) cmdRestore(args [][]byte) {
	key := args[1]
	o, ok := c.parseRestoreArgs(args[4:])
	if !ok {
		return
	}
	if !o.replace && c.exists(key) {
		c.w.Error(errBusyKey)
		return
	}
	ttl, ok := c.intArg(args[2])
	if !ok {
		return
	}
	if ttl < 0 {
		c.w.Error(errRestoreTTL)
		return
	}
	d, err := value.DecodeDump(args[3], c.restoreLimits())
	var le *value.DumpLimitError
	switch {
	case errors.Is(err, value.ErrDumpVersion):
		c.w.Error(errDumpPayload)
		return
	case errors.As(err, &le):
		c.w.Error(errRestoreTooBig(le))
		return
	case err != nil:
		c.w.Error(errBadData)
		return
	}
	rec, k, owned, err := c.restoredRecord(d)
	if err != nil {
		c.cacheError(err)
		return
	}
	nowMS := c.now() / int64(time.Millisecond)
	at := ttl
	if ttl != 0 && !o.absTTL {
		at = ttl + nowMS // wraps past int64 as Redis's ttl+=mstime() does: already past
	}
	if ttl != 0 && at <= nowMS { // checkAlreadyExpired: no key is made
		n, err := 0, error(nil)
		if o.replace {
			n, err = c.s.cache.Delete(key)
		}
		if err != nil {
			c.cacheError(err)
			return
		}
		c.noop = n == 0
		c.w.OK()
		return
	}
	so := tier.SetOptions{Kind: k, NX: !o.replace, Owned: owned}
	if ttl != 0 {
		so.ExpireAt = time.UnixMilli(at)
	}
	stored, err := c.s.cache.Set(key, rec, so)
	switch {
	case err != nil:
		c.cacheError(err)
	case !stored: // made meanwhile by another client
		c.w.Error(errBusyKey)
	default:
		c.w.OK()
		if k == kindList || k == kindZSet {
			c.wakeAfter(key)
		}
	}
}

// restoreLimits bound what a payload's value may be as it is read: the
// most elements of any kind (a hash's fields and values both count) and
// max_value bytes; restoredRecord then checks its kind's own limits.
func (c *conn) restoreLimits() value.DumpLimits {
	o := &c.s.opts
	return value.DumpLimits{MaxItems: max(o.MaxListElements, o.MaxSetMembers, 2*o.MaxHashFields), MaxBytes: o.MaxValueBytes}
}

// restoredRecord is the record of kind k d is stored as, checked against
// the kind's limits as a write of it is (S75). owned: rec is a new buffer
// the cache may keep (tier.SetOptions.Owned); a string's aliases the
// payload.
func (c *conn) restoredRecord(d value.Dumped) (rec []byte, k tier.Kind, owned bool, err error) {
	switch d.Type {
	case value.DumpString:
		if len(d.Str) > c.s.opts.MaxValueBytes {
			return nil, 0, false, replyError(errStringTooLong(c.s.opts.MaxValueBytes))
		}
		return d.Str, kindString, false, nil
	case value.DumpList:
		body := 0
		for _, it := range d.Items {
			body += list.ItemSize(it)
		}
		if err := c.lists.limits.Check(len(d.Items), list.Size(len(d.Items), body)); err != nil {
			return nil, 0, false, err
		}
		return list.Encode(make([]byte, 0, list.Size(len(d.Items), body)), d.Items), kindList, true, nil
	case value.DumpSet:
		slices.SortFunc(d.Items, bytes.Compare)
		m := set.FromSorted(d.Items)
		if err := c.s.setLimits.Check(m.Len(), m.Size()); err != nil {
			return nil, 0, false, err
		}
		return m.AppendRecord(make([]byte, 0, m.Size())), kindSet, true, nil
	case value.DumpZSet:
		es := make([]zset.Entry, len(d.Items))
		for i, m := range d.Items {
			es[i] = zset.Entry{Member: m, Score: d.Scores[i]}
		}
		slices.SortFunc(es, zset.Compare)
		z := zset.FromSorted(es)
		if err := c.s.setLimits.Check(z.Len(), z.Size()); err != nil {
			return nil, 0, false, err
		}
		return z.AppendRecord(make([]byte, 0, z.Size())), kindZSet, true, nil
	case value.DumpHash:
		fields := make([]hash.Field, len(d.Items)/2)
		for i := range fields {
			fields[i] = hash.Field{Name: d.Items[2*i], Value: d.Items[2*i+1]}
		}
		if err := c.s.hashLimits.Check(len(fields), hash.Size(fields)); err != nil {
			return nil, 0, false, err
		}
		return hash.Encode(make([]byte, 0, hash.Size(fields)), fields), kindHash, true, nil
	}
	return nil, 0, false, tier.ErrWrongKind
}

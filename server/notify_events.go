package server

import (
	"bytes"
	"slices"
	"strings"
)

// The keyspace events of each write command, as Redis 7.0 sends them
// (t_string.c, t_list.c, t_hash.c, db.c, expire.c), in its order. A
// command that answered an error or changed nothing (c.noop) has none.
// A write command not listed here (those of other families) sends no
// event but still invalidates the keys it names for tracking clients.

// eventFunc emits a command's events once it ran.
type eventFunc func(c *conn, args [][]byte)

var commandEvents = map[string]eventFunc{
	"set":            evSet,
	"setex":          evNames(notifyString, "set", notifyGeneric, "expire"),
	"psetex":         evNames(notifyString, "set", notifyGeneric, "expire"),
	"setnx":          evOne(notifyString, "set"),
	"getset":         evOne(notifyString, "set"),
	"mset":           evPairs,
	"msetnx":         evPairs,
	"getdel":         evOne(notifyGeneric, "del"),
	"getex":          evGetEx,
	"incr":           evOne(notifyString, "incrby"),
	"decr":           evOne(notifyString, "incrby"),
	"incrby":         evOne(notifyString, "incrby"),
	"decrby":         evOne(notifyString, "incrby"),
	"incrbyfloat":    evOne(notifyString, "incrbyfloat"),
	"append":         evOne(notifyString, "append"),
	"setrange":       evOne(notifyString, "setrange"),
	"setbit":         evOne(notifyString, "setbit"),
	"bitfield":       evOne(notifyString, "setbit"),
	"bitop":          evBitOp,
	"pfadd":          evOne(notifyString, "pfadd"),
	"pfmerge":        evOne(notifyString, "pfadd"), // hyperloglog.c: a merge is a mass add
	"del":            evDel,
	"unlink":         evDel,
	"expire":         evExpire,
	"pexpire":        evExpire,
	"expireat":       evExpire,
	"pexpireat":      evExpire,
	"persist":        evOne(notifyGeneric, "persist"),
	"rename":         evRename,
	"renamenx":       evRename,
	"copy":           evCopy,
	"restore":        evRestore,
	"restore-asking": evRestore,
	"migrate":        evNone, // its "del"s are published as it deletes (cmdMigrate), also before an error
	"lpush":          evOne(notifyList, "lpush"),
	"lpushx":         evOne(notifyList, "lpush"),
	"rpush":          evOne(notifyList, "rpush"),
	"rpushx":         evOne(notifyList, "rpush"),
	"lpop":           evPop(notifyList, "lpop"),
	"rpop":           evPop(notifyList, "rpop"),
	"lset":           evOne(notifyList, "lset"),
	"linsert":        evOne(notifyList, "linsert"),
	"lrem":           evPop(notifyList, "lrem"),
	"ltrim":          evPop(notifyList, "ltrim"),
	"lmove":          evMove,
	"blmove":         evMove,
	"rpoplpush":      evRPopLPush,
	"brpoplpush":     evRPopLPush,
	"hset":           evOne(notifyHash, "hset"),
	"hmset":          evOne(notifyHash, "hset"),
	"hsetnx":         evOne(notifyHash, "hset"),
	"hincrby":        evOne(notifyHash, "hincrby"),
	"hincrbyfloat":   evOne(notifyHash, "hincrbyfloat"),
	"hdel":           evPop(notifyHash, "hdel"),
	// the blocking pops served at once; those served later are the
	// pushing command's (afterWrite)
	"blpop":    evServed,
	"brpop":    evServed,
	"bzpopmin": evServed,
	"bzpopmax": evServed,
	"bzmpop":   evServed,
	"zmpop":    evServed,
	"blmpop":   evServed,
	"lmpop":    evServed,
	// sets and sorted sets (t_set.c, t_zset.c); their STORE commands' are
	// storeResult's (typed.go), BZPOPMIN's and BZPOPMAX's the served
	// pops' (servedEvents)
	"sadd":             evOne(notifySet, "sadd"),
	"srem":             evPop(notifySet, "srem"),
	"spop":             evPop(notifySet, "spop"),
	"smove":            evSMove,
	"zadd":             evZAdd,
	"zincrby":          evOne(notifyZset, "zincr"),
	"zrem":             evPop(notifyZset, "zrem"),
	"zremrangebyscore": evPop(notifyZset, "zremrangebyscore"),
	"zremrangebyrank":  evPop(notifyZset, "zremrangebyrank"),
	"zremrangebylex":   evPop(notifyZset, "zremrangebylex"),
	"zpopmin":          evPop(notifyZset, "zpopmin"),
	"zpopmax":          evPop(notifyZset, "zpopmax"),
	// geo.c: GEOADD runs as a ZADD; the searches' STORE events are
	// storeResult's ("georadiusstore", "geosearchstore": storeEvent)
	"geoadd": evOne(notifyZset, "zadd"),
	// hash field expiry (Redis 7.4's hashTypeSetExDone and hpersistCommand,
	// Redis 8's hgetdelCommand, hgetexCommand, hsetexCommand); "hexpired"
	// for fields found expired comes first (afterWrite)
	"hexpire":    evHExpire,
	"hpexpire":   evHExpire,
	"hexpireat":  evHExpire,
	"hpexpireat": evHExpire,
	"hpersist":   evHFE("hpersist", ""),
	"hgetdel":    evHFE("", ""),
	"hgetex":     evHGetEx,
	"hsetex":     evHSetEx,
}

// evBitOp: "set" on the destination, or "del" when an empty result
// deleted it (bitopCommand).
func evBitOp(c *conn, a [][]byte) {
	if c.exists(a[2]) {
		c.emit(notifyString, "set", a[2])
		return
	}
	c.emit(notifyGeneric, "del", a[2])
}

// evSMove: "srem" on the source, "del" if it emptied, "sadd" on the
// destination if the member was not there (smoveCommand's order).
func evSMove(c *conn, a [][]byte) {
	c.emit(notifySet, "srem", a[1])
	if !c.exists(a[1]) {
		c.emit(notifyGeneric, "del", a[1])
	}
	if c.typed.smoveAdded {
		c.emit(notifySet, "sadd", a[2])
	}
}

// evZAdd: "zincr" with INCR, else "zadd".
func evZAdd(c *conn, a [][]byte) {
options:
	for _, o := range a[2:] { // the options, up to the first score
		switch strings.ToUpper(string(o)) {
		case "INCR":
			c.emit(notifyZset, "zincr", a[1])
			return
		case "NX", "XX", "GT", "LT", "CH":
		default:
			break options
		}
	}
	c.emit(notifyZset, "zadd", a[1])
}

// evHExpire: "hdel" when a field was deleted (a past time), else
// "hexpire"; "del" when the hash went with its last field.
func evHExpire(c *conn, a [][]byte) {
	if c.agg.hfe.deleted > 0 {
		evHFE("", "")(c, a)
		return
	}
	evHFE("hexpire", "")(c, a)
}

// evHFE: updated (when an expiry was set or removed), "hdel" when fields
// were deleted, "del" when the hash went; first before everything, if any.
func evHFE(updated, first string) eventFunc {
	return func(c *conn, a [][]byte) {
		d := c.agg.hfe
		if first != "" {
			c.emit(notifyHash, first, a[1])
		}
		if updated != "" && d.updated > 0 {
			c.emit(notifyHash, updated, a[1])
		} else if d.deleted > 0 {
			c.emit(notifyHash, "hdel", a[1])
		}
		if d.removed {
			c.emit(notifyGeneric, "del", a[1])
		}
	}
}

// evHGetEx: "hpersist" (PERSIST) or "hexpire" when fields were found,
// "hdel" when a past time deleted them.
func evHGetEx(c *conn, a [][]byte) {
	if len(a) > 2 && strings.EqualFold(string(a[2]), "persist") {
		evHFE("hpersist", "")(c, a)
		return
	}
	evHFE("hexpire", "")(c, a)
}

// evHSetEx: "hset", then "hdel" (a past time) or "hexpire".
func evHSetEx(c *conn, a [][]byte) {
	if c.agg.hfe.set {
		evHFE("hexpire", "hset")(c, a)
	}
}

// beforeWrite notes, before a write command runs, whether each key it
// names exists (for DEL's events, and the "new" class); nil when nothing
// needs it.
func (c *conn) beforeWrite(cmd *command, args [][]byte) []bool {
	del := cmd.name == "del" || cmd.name == "unlink"
	if !del && c.s.conf.notify.Load()&notifyNew == 0 || cmd.first == 0 {
		return nil
	}
	keys := keyArgs(cmd, args)
	pre := make([]bool, len(keys))
	for i, k := range keys {
		pre[i] = c.s.cache.Exists(k) > 0
	}
	return pre
}

// afterWrite emits the events of a write command that changed something
// and publishes them (flushEvents).
func (c *conn) afterWrite(cmd *command, args [][]byte, pre []bool) {
	if c.s.conf.notify.Load()&notifyNew != 0 && pre != nil {
		c.newKeys = c.newKeys[:0]
		for i, k := range keyArgs(cmd, args) {
			if !pre[i] && c.s.cache.Exists(k) > 0 {
				c.newKeys = append(c.newKeys, k)
			}
		}
	}
	c.pre = pre
	if c.agg.purged > 0 { // the expired fields the write dropped first, as Redis's lazy expiry
		c.emit(notifyHash, "hexpired", args[1])
	}
	switch ev := commandEvents[cmd.name]; {
	case cmd.name == "flushall" || cmd.name == "flushdb":
		c.s.trk.invalidateAll()
	case ev != nil:
		ev(c, args)
	default:
		for _, k := range keyArgs(cmd, args) {
			c.emit(0, "", k) // no event: tracking only
		}
	}
	c.servedEvents() // blocked clients its pushes served, after its own events
	c.pre, c.newKeys = nil, c.newKeys[:0]
	c.flushEvents()
}

// evServed: the events of a blocking pop served at once.
func evServed(c *conn, _ [][]byte) { c.servedEvents() }

// servedEvents emits the events of the pops c.lists.served records, as
// Redis 7.0's serveClientBlockedOnList and genericZpopCommand: for
// BLMOVE the push on its destination, then the pop ("lpop", "rpop",
// "zpopmin", "zpopmax"), then "del" when the key emptied.
func (c *conn) servedEvents() {
	defer func() { c.servedTo = nil }()
	for _, p := range c.lists.served {
		c.servedTo = p.to // its events are its serve's (S90)
		if p.move {
			push := "rpush"
			if p.toLeft {
				push = "lpush"
			}
			c.emit(notifyList, push, p.dst)
		}
		switch {
		case p.zpop == zpopMin:
			c.emit(notifyZset, "zpopmin", p.key)
		case p.zpop == zpopMax:
			c.emit(notifyZset, "zpopmax", p.key)
		case p.left:
			c.emit(notifyList, "lpop", p.key)
		default:
			c.emit(notifyList, "rpop", p.key)
		}
		if !c.exists(p.key) {
			c.emit(notifyGeneric, "del", p.key)
		}
	}
	clear(c.lists.served)
	c.lists.served = c.lists.served[:0]
}

// keyArgs are the arguments at cmd's key positions.
func keyArgs(cmd *command, args [][]byte) [][]byte {
	if cmd.first == 0 {
		return nil
	}
	last := cmd.last
	if last < 0 {
		last += len(args)
	}
	var keys [][]byte
	for i := cmd.first; i <= last && i < len(args); i += max(cmd.step, 1) {
		keys = append(keys, args[i])
	}
	return keys
}

func (c *conn) exists(key []byte) bool { return c.s.cache.Exists(key) > 0 }

func evOne(class uint32, name string) eventFunc {
	return func(c *conn, a [][]byte) { c.emit(class, name, a[1]) }
}

func evNames(class1 uint32, name1 string, class2 uint32, name2 string) eventFunc {
	return func(c *conn, a [][]byte) {
		c.emit(class1, name1, a[1])
		c.emit(class2, name2, a[1])
	}
}

// evPop: an event, then "del" if it emptied the key.
func evPop(class uint32, name string) eventFunc {
	return func(c *conn, a [][]byte) {
		c.emit(class, name, a[1])
		if !c.exists(a[1]) {
			c.emit(notifyGeneric, "del", a[1])
		}
	}
}

// evSet: "set", and "expire" with an expiry option.
func evSet(c *conn, a [][]byte) {
	c.emit(notifyString, "set", a[1])
	for _, o := range a[3:] {
		switch strings.ToLower(string(o)) {
		case "ex", "px", "exat", "pxat":
			c.emit(notifyGeneric, "expire", a[1])
			return
		}
	}
}

func evPairs(c *conn, a [][]byte) {
	for i := 1; i < len(a); i += 2 {
		c.emit(notifyString, "set", a[i])
	}
}

// evGetEx: "persist" with PERSIST, else "expire", or "del" when the time
// was past.
func evGetEx(c *conn, a [][]byte) {
	switch {
	case !c.exists(a[1]):
		c.emit(notifyGeneric, "del", a[1])
	case len(a) > 2 && strings.EqualFold(string(a[2]), "persist"):
		c.emit(notifyGeneric, "persist", a[1])
	default:
		c.emit(notifyGeneric, "expire", a[1])
	}
}

// evExpire: "expire", or "del" when the time was past.
func evExpire(c *conn, a [][]byte) {
	if c.exists(a[1]) {
		c.emit(notifyGeneric, "expire", a[1])
		return
	}
	c.emit(notifyGeneric, "del", a[1])
}

// evDel: "del" for each key that existed and is gone, once.
func evDel(c *conn, a [][]byte) {
	for i, k := range a[1:] {
		if i < len(c.pre) && !c.pre[i] || c.exists(k) {
			continue
		}
		dup := false
		for _, ev := range c.events {
			if bytes.Equal(ev.key, k) {
				dup = true
			}
		}
		if !dup {
			c.emit(notifyGeneric, "del", k)
		}
	}
}

func evRename(c *conn, a [][]byte) {
	c.madeAnew(a[2])
	c.emitNew(a[2]) // dbAdd of the destination comes first
	c.emit(notifyGeneric, "rename_from", a[1])
	c.emit(notifyGeneric, "rename_to", a[2])
}

func evCopy(c *conn, a [][]byte) {
	c.madeAnew(a[2])
	c.emit(notifyGeneric, "copy_to", a[2])
}

// evRestore: "restore" on the key RESTORE made, anew even if it existed
// (REPLACE: Redis's dbDelete then dbAdd); "del" when a TTL already past
// only deleted the key it replaced (restoreCommand).
func evRestore(c *conn, a [][]byte) {
	if !c.exists(a[1]) {
		c.emit(notifyGeneric, "del", a[1])
		return
	}
	c.madeAnew(a[1])
	c.emit(notifyGeneric, "restore", a[1])
}

// madeAnew notes that the running command made key anew ("new") even if
// it existed: RENAME's and COPY's destination, which Redis deletes and
// adds again (dbDelete, dbAdd).
func (c *conn) madeAnew(key []byte) {
	if c.s.conf.notify.Load()&notifyNew == 0 || slices.ContainsFunc(c.newKeys, func(k []byte) bool { return bytes.Equal(k, key) }) {
		return
	}
	c.newKeys = append(c.newKeys, key)
}

// evMove: LMOVE src dst LEFT|RIGHT LEFT|RIGHT: the push on dst, the pop on
// src, "del" if src emptied (lmoveGenericCommand's order).
func evMove(c *conn, a [][]byte) {
	pop, push := "rpop", "rpush"
	if strings.EqualFold(string(a[3]), "left") {
		pop = "lpop"
	}
	if strings.EqualFold(string(a[4]), "left") {
		push = "lpush"
	}
	c.moveEvents(a[1], a[2], pop, push)
}

func evRPopLPush(c *conn, a [][]byte) { c.moveEvents(a[1], a[2], "rpop", "lpush") }

func (c *conn) moveEvents(src, dst []byte, pop, push string) {
	c.emit(notifyList, push, dst)
	c.emit(notifyList, pop, src)
	if !c.exists(src) {
		c.emit(notifyGeneric, "del", src)
	}
}

// storeEvent is the event a STORE command sends on its destination: its
// name, but "georadiusstore" for GEORADIUS's and GEORADIUSBYMEMBER's STORE
// (geo.c).
func storeEvent(cmd string) string {
	if cmd == "georadius" || cmd == "georadiusbymember" {
		return "georadiusstore"
	}
	return cmd
}

// evNone: the command published its events itself (MIGRATE).
func evNone(*conn, [][]byte) {}

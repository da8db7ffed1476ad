package server

import (
	"strings"
	"time"
)

// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE]
// [AUTH password] [AUTH2 username password] [KEYS key...], as Redis 7.0's
// cluster.c migrateCommand: the keys that exist are sent to the target
// as RESTOREs of their DUMP payloads (cmd_dump.go), over the cached
// connection to the target (migrate_sockets.go, migrate_target.go), and, unless COPY, each key the
// target restored is deleted here as DEL deletes it (S93-S95).

// migrateArgs are MIGRATE's options.
type migrateArgs struct {
	copy, replace bool
	user, pass    []byte // pass nil: no AUTH; user nil: AUTH password
	keys          [][]byte
	db            int64
	timeout       time.Duration
}

// parseMigrateArgs reads MIGRATE's arguments in migrateCommand's order:
// the options from the sixth on (a syntax error, or KEYS after a
// non-empty key, answered first), then the timeout, then the database.
// A timeout of 0 or less is 1000 ms, as Redis's.
func (c *conn) parseMigrateArgs(args [][]byte) (o migrateArgs, ok bool) {
	o.keys = args[3:4]
	for j := 6; j < len(args); j++ {
		more := len(args) - 1 - j
		switch word(args[j]) {
		case "COPY":
			o.copy = true
		case "REPLACE":
			o.replace = true
		case "AUTH":
			if more < 1 {
				c.w.Error(errSyntax)
				return o, false
			}
			j++
			o.pass = args[j]
		case "AUTH2":
			if more < 2 {
				c.w.Error(errSyntax)
				return o, false
			}
			o.user, o.pass = args[j+1], args[j+2]
			j += 2
		case "KEYS":
			if len(args[3]) != 0 {
				c.w.Error(errMigrateKeys)
				return o, false
			}
			o.keys = args[j+1:]
			j = len(args)
		default:
			c.w.Error(errSyntax)
			return o, false
		}
	}
	ms, ok := c.intArg(args[5])
	if !ok {
		return o, false
	}
	if o.db, ok = c.intArg(args[4]); !ok {
		return o, false
	}
	if ms <= 0 {
		ms = 1000
	}
	o.timeout = msDuration(ms)
	return o, true
}

// migrateItem is one key to send: its payload and its expiry (zero:
// none).
type migrateItem struct {
	key, payload []byte
	expireAt     time.Time
}

// cmdMigrate: MIGRATE → OK, NOKEY when none of the keys exists, or
// Redis's errors (S93). The keys are read before the target is dialled,
// so a refusal of tiercache's own (a hash with a field expiry left)
// answers before anything is sent. Each key the target acknowledged is
// deleted unless COPY, also when a later one failed (Redis deletes as the
// acknowledgements arrive): those deletions are DEL's, with "del"
// events, WATCH and tracking (S95). MIGRATE holds the transaction lock
// exclusively, as Redis blocks while it migrates, so no write comes
// between the read and the delete.
func (c *conn) cmdMigrate(args [][]byte) {
	o, ok := c.parseMigrateArgs(args)
	if !ok {
		return
	}
	c.noop = true // until a key is deleted
	var items []migrateItem
	var hits uint64
	for _, k := range o.keys {
		if len(k) == 0 {
			continue // tiercache holds no empty key
		}
		payload, exists, err := c.dumpPayload(k)
		if err != nil {
			c.cacheError(err)
			return
		}
		if !exists {
			continue
		}
		hits++
		at, _ := c.s.cache.ExpireTime(k)
		items = append(items, migrateItem{key: k, payload: payload, expireAt: at})
	}
	c.st.hits.Add(hits) // lookupKeyRead's keyspace hits and misses
	c.st.misses.Add(uint64(len(o.keys)) - hits)
	if len(items) == 0 {
		c.w.Simple(migrateNoKey)
		return
	}
	acked, reply := c.s.migr.migrate(string(args[1]), args[2], o, items, c.s.opts.Cluster, c.s.cache.Now)
	if !o.copy && len(acked) > 0 {
		if _, err := c.s.cache.Delete(acked...); err != nil {
			reply = errorReply(err)
		}
		c.migrated(acked)
	}
	if reply != "" {
		c.w.Error(reply)
		return
	}
	c.w.OK()
}

// migrated runs the hooks of DEL for keys MIGRATE deleted: WATCH is
// touched, "del" published and tracking clients told, also when MIGRATE
// answers an error (runWrite's hooks do not run then, and the command's
// events are its own: evNone adds none).
func (c *conn) migrated(keys [][]byte) {
	c.noop, c.touched = false, true
	c.s.touch(touchKeys, append([][]byte{nil}, keys...))
	if !c.s.keyHooks() {
		return
	}
	for _, k := range keys {
		c.emit(notifyGeneric, "del", k)
	}
	c.flushEvents()
}

// migrateKeys calls f with MIGRATE's keys as redis-server 7.0 finds them
// (COMMAND GETKEYS, cluster slots): its key specs give the key argument
// unless a KEYS is found searching back from the one before the last
// argument; then migrateGetKeys (db.c) decides, skipping the options'
// arguments from the sixth on: the arguments after the first KEYS, none
// when the key argument is not empty, the key argument when no KEYS is
// found that way.
func migrateKeys(args [][]byte, f func(key []byte) bool) {
	if len(args) < 4 {
		return
	}
	found := false
	for i := len(args) - 2; i > 1; i-- {
		if strings.EqualFold(string(args[i]), "keys") {
			found = true
			break
		}
	}
	if !found {
		f(args[3])
		return
	}
	for i := 6; i < len(args); i++ {
		switch word(args[i]) {
		case "KEYS":
			if len(args[3]) > 0 {
				return
			}
			for _, k := range args[i+1:] {
				if !f(k) {
					return
				}
			}
			return
		case "AUTH":
			i++
		case "AUTH2":
			i += 2
		}
	}
	f(args[3])
}

package server

import (
	"slices"
	"time"

	"github.com/tiercache/tiercache/value/zset"
)

// newCommandTable is the command table: each command's name, arity,
// flags, key positions and handler. A command's variants (LPUSH and
// RPUSH, INCR and DECRBY, EXPIRE and PEXPIREAT...) are bound here, as the
// arguments of one handler: a handler never looks at its command's name.
func newCommandTable(observe func(string) func(time.Duration, int)) map[string]*command {
	cmds := []*command{
		// connection
		{name: "ping", arity: -1, flags: []string{"fast"}, noAuth: false, run: (*conn).cmdPing},
		{name: "echo", arity: 2, flags: []string{"loading", "stale", "fast"}, run: (*conn).cmdEcho},
		{name: "time", arity: 1, flags: []string{"loading", "stale", "fast"}, lockFree: true, run: (*conn).cmdTime},
		{name: "hello", arity: -1, flags: []string{"noscript", "loading", "stale", "fast", "no_auth"}, noAuth: true, run: (*conn).cmdHello},
		{name: "auth", arity: -2, flags: []string{"noscript", "loading", "stale", "fast", "no_auth"}, noAuth: true, run: (*conn).cmdAuth},
		{name: "client", arity: -2, flags: []string{"noscript", "loading", "stale"}, exclusiveFor: pauseExclusive, run: (*conn).cmdClient},
		{name: "command", arity: -1, flags: []string{"loading", "stale"}, run: (*conn).cmdCommand},
		{name: "select", arity: 2, flags: []string{"loading", "stale", "fast"}, run: (*conn).cmdSelect},
		{name: "quit", arity: -1, flags: []string{"noscript", "loading", "stale", "fast", "no_auth"}, noAuth: true, txControl: true, run: (*conn).cmdQuit},
		{name: "multi", arity: 1, flags: []string{"noscript", "loading", "stale", "fast", "allow_busy"}, txControl: true, run: (*conn).cmdMulti},
		{name: "exec", arity: 1, flags: []string{"noscript", "loading", "stale", "skip_slowlog"}, txControl: true, run: (*conn).cmdExec},
		{name: "discard", arity: 1, flags: []string{"noscript", "loading", "stale", "fast", "allow_busy"}, txControl: true, run: (*conn).cmdDiscard},
		{name: "watch", arity: -2, flags: []string{"noscript", "loading", "stale", "fast", "allow_busy"}, first: 1, last: -1, step: 1, txControl: true, run: (*conn).cmdWatch},
		{name: "reset", arity: 1, flags: []string{"noscript", "loading", "stale", "fast", "no_auth", "allow_busy"}, noAuth: true, txControl: true, run: (*conn).cmdReset},
		{name: "lastsave", arity: 1, flags: []string{"loading", "stale", "fast"}, lockFree: true, run: (*conn).cmdLastSave},
		{name: "unwatch", arity: 1, flags: []string{"noscript", "loading", "stale", "fast", "allow_busy"}, run: (*conn).cmdUnwatch},
		{name: "config", arity: -2, flags: []string{"admin", "noscript", "loading", "stale"}, run: (*conn).cmdConfig},
		{name: "wait", arity: 3, flags: []string{"noscript"}, run: (*conn).cmdWait}, // wait.go
		// keys and values
		{name: "get", arity: 2, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdGet},
		{name: "getdel", arity: 2, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdGetDel},
		{name: "getex", arity: -2, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdGetEx},
		{name: "set", arity: -3, flags: []string{"write", "denyoom"}, first: 1, last: 1, step: 1, run: (*conn).cmdSet},
		{name: "del", arity: -2, flags: []string{"write"}, first: 1, last: -1, step: 1, run: (*conn).cmdDel},
		{name: "unlink", arity: -2, flags: []string{"write", "fast"}, first: 1, last: -1, step: 1, run: (*conn).cmdDel},
		{name: "exists", arity: -2, flags: []string{"readonly", "fast"}, first: 1, last: -1, step: 1, run: (*conn).cmdExists},
		{name: "mget", arity: -2, flags: []string{"readonly", "fast"}, first: 1, last: -1, step: 1, run: (*conn).cmdMGet},
		{name: "mset", arity: -3, flags: []string{"write", "denyoom"}, first: 1, last: -1, step: 2, run: (*conn).cmdMSet},
		{name: "expire", arity: -3, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.expireCmd(a, time.Second, false) }},
		{name: "pexpire", arity: -3, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.expireCmd(a, time.Millisecond, false) }},
		{name: "ttl", arity: 2, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.ttlCmd(a, time.Second) }},
		{name: "pttl", arity: 2, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.ttlCmd(a, time.Millisecond) }},
		{name: "persist", arity: 2, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdPersist},
		{name: "setex", arity: 4, flags: []string{"write", "denyoom"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.setExCmd(a, "EX") }},
		{name: "psetex", arity: 4, flags: []string{"write", "denyoom"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.setExCmd(a, "PX") }},
		{name: "setnx", arity: 3, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdSetNX},
		{name: "strlen", arity: 2, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdStrlen},
		{name: "type", arity: 2, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdType},
		{name: "touch", arity: -2, flags: []string{"readonly", "fast"}, first: 1, last: -1, step: 1, run: (*conn).cmdTouch},
		{name: "expireat", arity: -3, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.expireCmd(a, time.Second, true) }},
		{name: "pexpireat", arity: -3, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.expireCmd(a, time.Millisecond, true) }},
		{name: "expiretime", arity: 2, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.expireTimeCmd(a, time.Second) }},
		{name: "pexpiretime", arity: 2, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.expireTimeCmd(a, time.Millisecond) }},
		{name: "rename", arity: 3, flags: []string{"write"}, first: 1, last: 2, step: 1, run: func(c *conn, a [][]byte) { c.renameCmd(a, false) }},
		{name: "renamenx", arity: 3, flags: []string{"write", "fast"}, first: 1, last: 2, step: 1, run: func(c *conn, a [][]byte) { c.renameCmd(a, true) }},
		{name: "move", arity: 3, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdMove},
		{name: "swapdb", arity: 3, flags: []string{"write", "fast"}, run: (*conn).cmdSwapDB},
		{name: "copy", arity: -3, flags: []string{"write", "denyoom"}, first: 1, last: 2, step: 1, run: (*conn).cmdCopy},
		{name: "dump", arity: 2, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: (*conn).cmdDump},
		{name: "restore", arity: -4, flags: []string{"write", "denyoom"}, first: 1, last: 1, step: 1, run: (*conn).cmdRestore},
		// RESTORE-ASKING: RESTORE as a MIGRATE in cluster mode sends it
		// (Redis 7.0 src/commands/restore-asking.json: restoreCommand, flags
		// write denyoom asking)
		{name: "restore-asking", arity: -4, flags: []string{"write", "denyoom", "asking"}, first: 1, last: 1, step: 1, run: (*conn).cmdRestore},
		{name: "migrate", arity: -6, flags: []string{"write"}, first: 3, last: 3, step: 1, keysOf: migrateKeys, exclusive: true, run: (*conn).cmdMigrate}, // cmd_migrate.go
		{name: "randomkey", arity: 1, flags: []string{"readonly"}, run: (*conn).cmdRandomKey},
		// lists (cmd_list.go, block.go, mpop.go)
		{name: "lpush", arity: -3, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.pushCmd(a, true, false) }},
		{name: "rpush", arity: -3, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.pushCmd(a, false, false) }},
		{name: "lpushx", arity: -3, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.pushCmd(a, true, true) }},
		{name: "rpushx", arity: -3, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.pushCmd(a, false, true) }},
		{name: "lpop", arity: -2, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.popCmd(a, true) }},
		{name: "rpop", arity: -2, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.popCmd(a, false) }},
		{name: "lrange", arity: 4, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: (*conn).cmdLRange},
		{name: "llen", arity: 2, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdLLen},
		{name: "lindex", arity: 3, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: (*conn).cmdLIndex},
		{name: "lset", arity: 4, flags: []string{"write", "denyoom"}, first: 1, last: 1, step: 1, run: (*conn).cmdLSet},
		{name: "linsert", arity: 5, flags: []string{"write", "denyoom"}, first: 1, last: 1, step: 1, run: (*conn).cmdLInsert},
		{name: "lrem", arity: 4, flags: []string{"write"}, first: 1, last: 1, step: 1, run: (*conn).cmdLRem},
		{name: "ltrim", arity: 4, flags: []string{"write"}, first: 1, last: 1, step: 1, run: (*conn).cmdLTrim},
		{name: "lpos", arity: -3, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: (*conn).cmdLPos},
		{name: "lmove", arity: 5, flags: []string{"write", "denyoom"}, first: 1, last: 2, step: 1, exclusive: true, run: (*conn).cmdLMove},
		{name: "rpoplpush", arity: 3, flags: []string{"write", "denyoom"}, first: 1, last: 2, step: 1, exclusive: true, run: (*conn).cmdRPopLPush},
		{name: "blpop", arity: -3, flags: []string{"write", "noscript", "blocking"}, first: 1, last: -2, step: 1, run: func(c *conn, a [][]byte) { c.bpopCmd(a, true) }},
		{name: "brpop", arity: -3, flags: []string{"write", "noscript", "blocking"}, first: 1, last: -2, step: 1, run: func(c *conn, a [][]byte) { c.bpopCmd(a, false) }},
		{name: "blmove", arity: 6, flags: []string{"write", "denyoom", "noscript", "blocking"}, first: 1, last: 2, step: 1, run: (*conn).cmdBLMove},
		{name: "brpoplpush", arity: 4, flags: []string{"write", "denyoom", "noscript", "blocking"}, first: 1, last: 2, step: 1, run: (*conn).cmdBRPopLPush},
		{name: "lmpop", arity: -4, flags: []string{"write"}, keyNum: 1, run: func(c *conn, a [][]byte) { c.mpopCmd(a, false, lmpopEnds) }},
		{name: "blmpop", arity: -5, flags: []string{"write", "blocking"}, keyNum: 2, run: func(c *conn, a [][]byte) { c.mpopCmd(a, true, lmpopEnds) }},
		{name: "tier", arity: 2, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdTier},
		// strings: read-modify-write (cmd_string.go, cmd_bit.go)
		{name: "incr", arity: 2, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.incrCmd(a[1], 1) }},
		{name: "decr", arity: 2, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.incrCmd(a[1], -1) }},
		{name: "incrby", arity: 3, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.incrByCmd(a, false) }},
		{name: "decrby", arity: 3, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.incrByCmd(a, true) }},
		{name: "incrbyfloat", arity: 3, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdIncrByFloat},
		{name: "append", arity: 3, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdAppend},
		{name: "getrange", arity: 4, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: (*conn).cmdGetRange},
		{name: "substr", arity: 4, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: (*conn).cmdGetRange},
		{name: "setrange", arity: 4, flags: []string{"write", "denyoom"}, first: 1, last: 1, step: 1, run: (*conn).cmdSetRange},
		{name: "getset", arity: 3, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdGetSet},
		{name: "msetnx", arity: -3, flags: []string{"write", "denyoom"}, first: 1, last: -1, step: 2, exclusive: true, run: (*conn).cmdMSetNX},
		{name: "setbit", arity: 4, flags: []string{"write", "denyoom"}, first: 1, last: 1, step: 1, run: (*conn).cmdSetBit},
		{name: "getbit", arity: 3, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdGetBit},
		{name: "bitcount", arity: -2, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: (*conn).cmdBitCount},
		{name: "bitpos", arity: -3, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: (*conn).cmdBitPos},
		{name: "bitop", arity: -4, flags: []string{"write", "denyoom"}, first: 2, last: -1, step: 1, exclusive: true, run: (*conn).cmdBitOp},
		{name: "bitfield", arity: -2, flags: []string{"write", "denyoom"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.cmdBitField(a, false) }},
		{name: "bitfield_ro", arity: -2, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.cmdBitField(a, true) }},
		{name: "lcs", arity: -3, flags: []string{"readonly"}, first: 1, last: 2, step: 1, exclusive: true, run: (*conn).cmdLCS},
		// HyperLogLog (cmd_hll.go, cmd_pfdebug.go, on value/hll)
		{name: "pfadd", arity: -2, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdPFAdd},
		{name: "pfcount", arity: -2, flags: []string{"readonly", "may_replicate"}, first: 1, last: -1, step: 1, exclusive: true, rememberAfter: true, run: (*conn).cmdPFCount},
		{name: "pfmerge", arity: -2, flags: []string{"write", "denyoom"}, first: 1, last: -1, step: 1, exclusive: true, run: (*conn).cmdPFMerge},
		{name: "pfdebug", arity: 3, flags: []string{"write", "denyoom", "admin"}, first: 2, last: 2, step: 1, run: (*conn).cmdPFDebug},
		{name: "pfselftest", arity: 1, flags: []string{"admin"}, run: (*conn).cmdPFSelfTest},
		// hashes (cmd_hash.go)
		{name: "hset", arity: -4, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.hsetCmd(a, false) }},
		{name: "hmset", arity: -4, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.hsetCmd(a, true) }},
		{name: "hsetnx", arity: 4, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdHSetNX},
		{name: "hget", arity: 3, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdHGet},
		{name: "hmget", arity: -3, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdHMGet},
		{name: "hgetall", arity: 2, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.hashList(a[1], true, true) }},
		{name: "hdel", arity: -3, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdHDel},
		{name: "hexists", arity: 3, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.hashField(a, false) }},
		{name: "hlen", arity: 2, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdHLen},
		{name: "hkeys", arity: 2, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.hashList(a[1], true, false) }},
		{name: "hvals", arity: 2, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.hashList(a[1], false, true) }},
		{name: "hstrlen", arity: 3, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.hashField(a, true) }},
		{name: "hincrby", arity: 4, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdHIncrBy},
		{name: "hincrbyfloat", arity: 4, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdHIncrByFloat},
		{name: "hrandfield", arity: -2, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: (*conn).cmdHRandField},
		{name: "hscan", arity: -3, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: (*conn).cmdHScan},
		// hash field expiry (cmd_hfe.go, fieldexpiry.go): Redis 7.4 and 8
		{name: "hexpire", arity: -6, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.hexpireCmd(a, time.Second, false) }},
		{name: "hpexpire", arity: -6, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.hexpireCmd(a, time.Millisecond, false) }},
		{name: "hexpireat", arity: -6, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.hexpireCmd(a, time.Second, true) }},
		{name: "hpexpireat", arity: -6, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.hexpireCmd(a, time.Millisecond, true) }},
		{name: "httl", arity: -5, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.httlCmd(a, time.Second, false) }},
		{name: "hpttl", arity: -5, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.httlCmd(a, time.Millisecond, false) }},
		{name: "hexpiretime", arity: -5, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.httlCmd(a, time.Second, true) }},
		{name: "hpexpiretime", arity: -5, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.httlCmd(a, time.Millisecond, true) }},
		{name: "hpersist", arity: -5, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdHPersist},
		{name: "hgetdel", arity: -5, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdHGetDel},
		{name: "hgetex", arity: -5, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdHGetEx},
		{name: "hsetex", arity: -6, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdHSetEx},
		// sets (cmd_set.go, set_algebra.go)
		{name: "sadd", arity: -3, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdSAdd},
		{name: "srem", arity: -3, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdSRem},
		{name: "smembers", arity: 2, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: (*conn).cmdSMembers},
		{name: "sismember", arity: 3, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdSIsMember},
		{name: "smismember", arity: -3, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdSMIsMember},
		{name: "scard", arity: 2, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdSCard},
		{name: "spop", arity: -2, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdSPop},
		{name: "srandmember", arity: -2, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: (*conn).cmdSRandMember},
		{name: "smove", arity: 4, flags: []string{"write", "fast"}, first: 1, last: 2, step: 1, exclusive: true, run: (*conn).cmdSMove},
		{name: "sinter", arity: -2, flags: []string{"readonly"}, first: 1, last: -1, step: 1, exclusive: true, run: func(c *conn, a [][]byte) { c.setAlgebraCmd(a, setInter, false) }},
		{name: "sunion", arity: -2, flags: []string{"readonly"}, first: 1, last: -1, step: 1, exclusive: true, run: func(c *conn, a [][]byte) { c.setAlgebraCmd(a, setUnion, false) }},
		{name: "sdiff", arity: -2, flags: []string{"readonly"}, first: 1, last: -1, step: 1, exclusive: true, run: func(c *conn, a [][]byte) { c.setAlgebraCmd(a, setDiff, false) }},
		{name: "sinterstore", arity: -3, flags: []string{"write", "denyoom"}, first: 1, last: -1, step: 1, exclusive: true, run: func(c *conn, a [][]byte) { c.setAlgebraCmd(a, setInter, true) }},
		{name: "sunionstore", arity: -3, flags: []string{"write", "denyoom"}, first: 1, last: -1, step: 1, exclusive: true, run: func(c *conn, a [][]byte) { c.setAlgebraCmd(a, setUnion, true) }},
		{name: "sdiffstore", arity: -3, flags: []string{"write", "denyoom"}, first: 1, last: -1, step: 1, exclusive: true, run: func(c *conn, a [][]byte) { c.setAlgebraCmd(a, setDiff, true) }},
		{name: "sintercard", arity: -3, flags: []string{"readonly"}, keyNum: 1, exclusive: true, run: (*conn).cmdSInterCard},
		{name: "sscan", arity: -3, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: (*conn).cmdSScan},
		// sorted sets (cmd_zset.go, zset_range.go, zset_pop.go, zset_algebra.go, block_zset.go, mpop.go)
		{name: "zadd", arity: -4, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.zaddCmd(a, false) }},
		{name: "zincrby", arity: 4, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.zaddCmd(a, true) }},
		{name: "zrem", arity: -3, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdZRem},
		{name: "zcard", arity: 2, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdZCard},
		{name: "zscore", arity: 3, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdZScore},
		{name: "zmscore", arity: -3, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdZMScore},
		{name: "zrank", arity: 3, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.zrankCmd(a, false) }},
		{name: "zrevrank", arity: 3, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.zrankCmd(a, true) }},
		{name: "zrange", arity: -4, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.zrangeCmd(a, byAuto, false, false) }},
		{name: "zrevrange", arity: -4, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.zrangeCmd(a, byRank, true, true) }},
		{name: "zrangebyscore", arity: -4, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.zrangeCmd(a, byScore, false, true) }},
		{name: "zrevrangebyscore", arity: -4, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.zrangeCmd(a, byScore, true, true) }},
		{name: "zrangebylex", arity: -4, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.zrangeCmd(a, byLex, false, true) }},
		{name: "zrevrangebylex", arity: -4, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.zrangeCmd(a, byLex, true, true) }},
		{name: "zrangestore", arity: -5, flags: []string{"write", "denyoom"}, first: 1, last: 2, step: 1, exclusive: true, run: (*conn).cmdZRangeStore},
		{name: "zcount", arity: 4, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdZCount},
		{name: "zlexcount", arity: 4, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdZLexCount},
		{name: "zremrangebyrank", arity: 4, flags: []string{"write"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.zremRangeCmd(a, byRank) }},
		{name: "zremrangebyscore", arity: 4, flags: []string{"write"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.zremRangeCmd(a, byScore) }},
		{name: "zremrangebylex", arity: 4, flags: []string{"write"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.zremRangeCmd(a, byLex) }},
		{name: "zpopmin", arity: -2, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.zpopCmd(a, false) }},
		{name: "zpopmax", arity: -2, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.zpopCmd(a, true) }},
		{name: "bzpopmin", arity: -3, flags: []string{"write", "noscript", "blocking", "fast"}, first: 1, last: -2, step: 1, run: func(c *conn, a [][]byte) { c.bzpopCmd(a, zpopMin) }},
		{name: "bzpopmax", arity: -3, flags: []string{"write", "noscript", "blocking", "fast"}, first: 1, last: -2, step: 1, run: func(c *conn, a [][]byte) { c.bzpopCmd(a, zpopMax) }},
		{name: "zmpop", arity: -4, flags: []string{"write"}, keyNum: 1, run: func(c *conn, a [][]byte) { c.mpopCmd(a, false, zmpopEnds) }},
		{name: "bzmpop", arity: -5, flags: []string{"write", "blocking"}, keyNum: 2, run: func(c *conn, a [][]byte) { c.mpopCmd(a, true, zmpopEnds) }},
		{name: "zrandmember", arity: -2, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: (*conn).cmdZRandMember},
		{name: "zscan", arity: -3, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: (*conn).cmdZScan},
		{name: "zunionstore", arity: -4, flags: []string{"write", "denyoom"}, first: 1, last: 1, step: 1, keyNum: 2, exclusive: true, run: func(c *conn, a [][]byte) { c.zalgebraCmd(a, zset.Union, true, false) }},
		{name: "zinterstore", arity: -4, flags: []string{"write", "denyoom"}, first: 1, last: 1, step: 1, keyNum: 2, exclusive: true, run: func(c *conn, a [][]byte) { c.zalgebraCmd(a, zset.Inter, true, false) }},
		{name: "zdiffstore", arity: -4, flags: []string{"write", "denyoom"}, first: 1, last: 1, step: 1, keyNum: 2, exclusive: true, run: func(c *conn, a [][]byte) { c.zalgebraCmd(a, zset.Diff, true, false) }},
		{name: "zunion", arity: -3, flags: []string{"readonly"}, keyNum: 1, exclusive: true, run: func(c *conn, a [][]byte) { c.zalgebraCmd(a, zset.Union, false, false) }},
		{name: "zinter", arity: -3, flags: []string{"readonly"}, keyNum: 1, exclusive: true, run: func(c *conn, a [][]byte) { c.zalgebraCmd(a, zset.Inter, false, false) }},
		{name: "zdiff", arity: -3, flags: []string{"readonly"}, keyNum: 1, exclusive: true, run: func(c *conn, a [][]byte) { c.zalgebraCmd(a, zset.Diff, false, false) }},
		{name: "zintercard", arity: -3, flags: []string{"readonly"}, keyNum: 1, exclusive: true, run: func(c *conn, a [][]byte) { c.zalgebraCmd(a, zset.Inter, false, true) }},
		// SORT and SORT_RO (cmd_sort.go): SORT is a write for its STORE
		{name: "sort", arity: -2, flags: []string{"write", "denyoom"}, first: 1, last: 1, step: 1, movable: true, storeKeys: sortStoreKeys, exclusiveFor: sortExclusive, run: func(c *conn, a [][]byte) { c.sortCmd(a, false) }},
		{name: "sort_ro", arity: -2, flags: []string{"readonly"}, first: 1, last: 1, step: 1, movable: true, exclusiveFor: sortExclusive, run: func(c *conn, a [][]byte) { c.sortCmd(a, true) }},
		// geo (cmd_geo.go, geo_search.go, args_geo.go, on value/geo): a geo set is a sorted set
		{name: "geoadd", arity: -5, flags: []string{"write", "denyoom"}, first: 1, last: 1, step: 1, run: (*conn).cmdGeoAdd},
		{name: "geopos", arity: -2, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: (*conn).cmdGeoPos},
		{name: "geodist", arity: -4, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: (*conn).cmdGeoDist},
		{name: "geohash", arity: -2, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: (*conn).cmdGeoHash},
		{name: "geosearch", arity: -7, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.geoSearchCmd(a, a[0], geoSearch) }},
		{name: "geosearchstore", arity: -8, flags: []string{"write", "denyoom"}, first: 1, last: 2, step: 1, exclusive: true, run: func(c *conn, a [][]byte) { c.geoSearchCmd(a, a[0], geoSearchStore) }},
		{name: "georadius", arity: -6, flags: []string{"write", "denyoom"}, first: 1, last: 1, step: 1, storeKeys: geoStoreKeys(6), exclusive: true, run: func(c *conn, a [][]byte) { c.geoSearchCmd(a, a[0], geoRadius) }},
		{name: "georadiusbymember", arity: -5, flags: []string{"write", "denyoom"}, first: 1, last: 1, step: 1, storeKeys: geoStoreKeys(5), exclusive: true, run: func(c *conn, a [][]byte) { c.geoSearchCmd(a, a[0], geoRadiusMember) }},
		{name: "georadius_ro", arity: -6, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.geoSearchCmd(a, a[0], geoRadiusRO) }},
		{name: "georadiusbymember_ro", arity: -5, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: func(c *conn, a [][]byte) { c.geoSearchCmd(a, a[0], geoRadiusMemberRO) }},
		{name: "object", arity: -2, flags: []string{"readonly"}, first: 2, last: 2, step: 1, run: (*conn).cmdObject},
		{name: "memory", arity: -2, flags: []string{"readonly"}, first: 2, last: 2, step: 1, run: (*conn).cmdMemory},
		// keyspace and server
		{name: "dbsize", arity: 1, flags: []string{"readonly", "fast"}, run: (*conn).cmdDBSize},
		{name: "scan", arity: -2, flags: []string{"readonly"}, run: (*conn).cmdScan},
		{name: "keys", arity: 2, flags: []string{"readonly"}, run: (*conn).cmdKeys},
		{name: "flushall", arity: -1, flags: []string{"write"}, run: (*conn).cmdFlush},
		{name: "flushdb", arity: -1, flags: []string{"write"}, run: (*conn).cmdFlush},
		{name: "info", arity: -1, flags: []string{"loading", "stale"}, run: (*conn).cmdInfo},
		{name: "slowlog", arity: -2, flags: []string{}, lockFree: true, run: (*conn).cmdSlowlog},
		{name: "latency", arity: -2, flags: []string{}, lockFree: true, run: (*conn).cmdLatency}, // cmd_latency.go
		{name: "monitor", arity: 1, flags: []string{"admin", "noscript", "loading", "stale"}, lockFree: true, run: (*conn).cmdMonitor},
		{name: "shutdown", arity: -1, flags: []string{"admin", "noscript", "loading", "stale", "no_multi", "allow_busy"}, lockFree: true, run: (*conn).cmdShutdown},
	}
	cmds = append(cmds, clusterCommands()...) // cluster.go
	cmds = append(cmds, scriptCommands()...)
	t := make(map[string]*command, len(cmds))
	for _, cmd := range cmds {
		cmd.write = slices.Contains(cmd.flags, "write")
		cmd.noscript = slices.Contains(cmd.flags, "noscript")
		cmd.mayReplicate = slices.Contains(cmd.flags, "may_replicate")
		cmd.allowBusy = slices.Contains(cmd.flags, "allow_busy")
		cmd.noMulti = slices.Contains(cmd.flags, "no_multi")
		cmd.admin = slices.Contains(cmd.flags, "admin")
		cmd.monitorFirst = slices.Contains(cmd.flags, "skip_monitor")
		cmd.skipSlowlog = slices.Contains(cmd.flags, "skip_slowlog")
		cmd.whileLoading = slices.Contains(servedWhileLoading, cmd.name)
		if observe != nil {
			cmd.observe = observe(cmd.name)
		}
		t[cmd.name] = cmd
	}
	markCommands(t)
	addSubcommands(t) // subcommands.go
	return t
}

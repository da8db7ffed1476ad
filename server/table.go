package server

import (
	"slices"
	"time"
)

// newCommandTable is the command table: each command's name, arity,
// flags, key positions and handler. A command's variants (LPUSH and
// RPUSH, INCR and DECRBY, EXPIRE and PEXPIREAT...) are bound here, as the
// arguments of one handler: a handler never looks at its command's name.
func newCommandTable(observe func(string) func(time.Duration)) map[string]*command {
	cmds := []*command{
		// connection
		{name: "ping", arity: -1, flags: []string{"fast", "stale"}, noAuth: false, run: (*conn).cmdPing},
		{name: "echo", arity: 2, flags: []string{"fast"}, run: (*conn).cmdEcho},
		{name: "hello", arity: -1, flags: []string{"noscript", "loading", "stale", "fast", "no_auth"}, noAuth: true, run: (*conn).cmdHello},
		{name: "auth", arity: -2, flags: []string{"noscript", "loading", "stale", "fast", "no_auth"}, noAuth: true, run: (*conn).cmdAuth},
		{name: "client", arity: -2, flags: []string{"noscript", "loading", "stale"}, run: (*conn).cmdClient},
		{name: "command", arity: -1, flags: []string{"loading", "stale"}, run: (*conn).cmdCommand},
		{name: "select", arity: 2, flags: []string{"loading", "stale", "fast"}, run: (*conn).cmdSelect},
		{name: "quit", arity: -1, flags: []string{"noscript", "loading", "stale", "fast", "no_auth"}, noAuth: true, txControl: true, run: (*conn).cmdQuit},
		{name: "multi", arity: 1, flags: []string{"noscript", "loading", "stale", "fast", "allow_busy"}, txControl: true, run: (*conn).cmdMulti},
		{name: "exec", arity: 1, flags: []string{"noscript", "loading", "stale", "skip_slowlog"}, txControl: true, run: (*conn).cmdExec},
		{name: "discard", arity: 1, flags: []string{"noscript", "loading", "stale", "fast", "allow_busy"}, txControl: true, run: (*conn).cmdDiscard},
		{name: "watch", arity: -2, flags: []string{"noscript", "loading", "stale", "fast", "allow_busy"}, txControl: true, run: (*conn).cmdWatch},
		{name: "unwatch", arity: 1, flags: []string{"noscript", "loading", "stale", "fast", "allow_busy"}, run: (*conn).cmdUnwatch},
		{name: "config", arity: -2, flags: []string{"admin", "noscript", "loading", "stale"}, run: (*conn).cmdConfig},
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
		{name: "copy", arity: -3, flags: []string{"write", "denyoom"}, first: 1, last: 2, step: 1, run: (*conn).cmdCopy},
		{name: "randomkey", arity: 1, flags: []string{"readonly"}, run: (*conn).cmdRandomKey},
		// lists (cmd_list.go, block.go)
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
		{name: "object", arity: -2, flags: []string{"readonly"}, first: 2, last: 2, step: 1, run: (*conn).cmdObject},
		// keyspace and server
		{name: "dbsize", arity: 1, flags: []string{"readonly", "fast"}, run: (*conn).cmdDBSize},
		{name: "scan", arity: -2, flags: []string{"readonly"}, run: (*conn).cmdScan},
		{name: "keys", arity: 2, flags: []string{"readonly"}, run: (*conn).cmdKeys},
		{name: "flushall", arity: -1, flags: []string{"write"}, run: (*conn).cmdFlush},
		{name: "flushdb", arity: -1, flags: []string{"write"}, run: (*conn).cmdFlush},
		{name: "info", arity: -1, flags: []string{"loading", "stale"}, run: (*conn).cmdInfo},
	}
	cmds = append(cmds, scriptCommands()...)
	t := make(map[string]*command, len(cmds))
	for _, cmd := range cmds {
		cmd.write = slices.Contains(cmd.flags, "write")
		cmd.noscript = slices.Contains(cmd.flags, "noscript")
		cmd.mayReplicate = slices.Contains(cmd.flags, "may_replicate")
		cmd.allowBusy = slices.Contains(cmd.flags, "allow_busy")
		cmd.whileLoading = slices.Contains(servedWhileLoading, cmd.name)
		if observe != nil {
			cmd.observe = observe(cmd.name)
		}
		t[cmd.name] = cmd
	}
	markCommands(t)
	return t
}

package server

import (
	"crypto/subtle"
	"slices"
	"strings"
	"time"
)

// command is one entry of the command table.
type command struct {
	name   string // lower case
	arity  int    // Redis convention: n exact, -n at least n (name included)
	flags  []string
	first  int // first key position, 0 = none
	last   int // last key position, -1 = last argument
	step   int
	noAuth bool // allowed before AUTH
	write  bool // flags has "write": touches WATCHed keys (set by newCommandTable)
	// exclusive commands run holding the transaction lock exclusively, as
	// EXEC does: no other command runs meanwhile (MSETNX).
	exclusive bool
	// txControl commands run at once inside MULTI instead of being queued.
	txControl bool
	// whileLoading commands run before the server has its cache
	// (servedWhileLoading, S27).
	whileLoading bool
	run          func(c *conn, args [][]byte)
	observe      func(time.Duration)
}

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
		{name: "expire", arity: -3, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdExpire},
		{name: "pexpire", arity: -3, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdExpire},
		{name: "ttl", arity: 2, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdTTL},
		{name: "pttl", arity: 2, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdTTL},
		{name: "persist", arity: 2, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdPersist},
		{name: "setex", arity: 4, flags: []string{"write", "denyoom"}, first: 1, last: 1, step: 1, run: (*conn).cmdSetEx},
		{name: "psetex", arity: 4, flags: []string{"write", "denyoom"}, first: 1, last: 1, step: 1, run: (*conn).cmdSetEx},
		{name: "setnx", arity: 3, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdSetNX},
		{name: "strlen", arity: 2, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdStrlen},
		{name: "type", arity: 2, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdType},
		{name: "touch", arity: -2, flags: []string{"readonly", "fast"}, first: 1, last: -1, step: 1, run: (*conn).cmdTouch},
		{name: "expireat", arity: -3, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdExpireAt},
		{name: "pexpireat", arity: -3, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdExpireAt},
		{name: "expiretime", arity: 2, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdExpireTime},
		{name: "pexpiretime", arity: 2, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdExpireTime},
		{name: "rename", arity: 3, flags: []string{"write"}, first: 1, last: 2, step: 1, run: (*conn).cmdRename},
		{name: "renamenx", arity: 3, flags: []string{"write", "fast"}, first: 1, last: 2, step: 1, run: (*conn).cmdRename},
		{name: "copy", arity: -3, flags: []string{"write", "denyoom"}, first: 1, last: 2, step: 1, run: (*conn).cmdCopy},
		{name: "randomkey", arity: 1, flags: []string{"readonly"}, run: (*conn).cmdRandomKey},
		// lists (cmd_list.go, block.go)
		{name: "lpush", arity: -3, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdLPush},
		{name: "rpush", arity: -3, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdRPush},
		{name: "lpushx", arity: -3, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdLPushX},
		{name: "rpushx", arity: -3, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdRPushX},
		{name: "lpop", arity: -2, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdLPop},
		{name: "rpop", arity: -2, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdRPop},
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
		{name: "blpop", arity: -3, flags: []string{"write", "noscript", "blocking"}, first: 1, last: -2, step: 1, run: (*conn).cmdBLPop},
		{name: "brpop", arity: -3, flags: []string{"write", "noscript", "blocking"}, first: 1, last: -2, step: 1, run: (*conn).cmdBRPop},
		{name: "blmove", arity: 6, flags: []string{"write", "denyoom", "noscript", "blocking"}, first: 1, last: 2, step: 1, run: (*conn).cmdBLMove},
		{name: "brpoplpush", arity: 4, flags: []string{"write", "denyoom", "noscript", "blocking"}, first: 1, last: 2, step: 1, run: (*conn).cmdBRPopLPush},
		{name: "tier", arity: 2, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdTier},
		// strings: read-modify-write (cmd_string.go, cmd_bit.go)
		{name: "incr", arity: 2, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdIncr},
		{name: "decr", arity: 2, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdIncr},
		{name: "incrby", arity: 3, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdIncr},
		{name: "decrby", arity: 3, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdIncr},
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
		{name: "hset", arity: -4, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdHSet},
		{name: "hmset", arity: -4, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdHSet},
		{name: "hsetnx", arity: 4, flags: []string{"write", "denyoom", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdHSetNX},
		{name: "hget", arity: 3, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdHGet},
		{name: "hmget", arity: -3, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdHMGet},
		{name: "hgetall", arity: 2, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: (*conn).cmdHGetAll},
		{name: "hdel", arity: -3, flags: []string{"write", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdHDel},
		{name: "hexists", arity: 3, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdHExists},
		{name: "hlen", arity: 2, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdHLen},
		{name: "hkeys", arity: 2, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: (*conn).cmdHKeys},
		{name: "hvals", arity: 2, flags: []string{"readonly"}, first: 1, last: 1, step: 1, run: (*conn).cmdHVals},
		{name: "hstrlen", arity: 3, flags: []string{"readonly", "fast"}, first: 1, last: 1, step: 1, run: (*conn).cmdHStrlen},
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
	t := make(map[string]*command, len(cmds))
	for _, cmd := range cmds {
		cmd.write = slices.Contains(cmd.flags, "write")
		cmd.whileLoading = slices.Contains(servedWhileLoading, cmd.name)
		if observe != nil {
			cmd.observe = observe(cmd.name)
		}
		t[cmd.name] = cmd
	}
	return t
}

// CommandNames lists the commands the server implements, lower case.
func CommandNames() []string {
	t := newCommandTable(nil)
	names := make([]string, 0, len(t))
	for n := range t {
		names = append(names, n)
	}
	return names
}

// dispatch runs one command and never drops the connection for a bad one.
func (c *conn) dispatch(args [][]byte) {
	c.st.commands.Add(1)
	var lower [24]byte
	name := args[0]
	var cmd *command
	if len(name) <= len(lower) {
		for i, b := range name {
			if 'A' <= b && b <= 'Z' {
				b += 'a' - 'A'
			}
			lower[i] = b
		}
		cmd = c.s.cmds[string(lower[:len(name)])] // no allocation: map lookup of a converted slice
	}
	if cmd == nil {
		c.w.Error(unknownCommand(args))
		c.tx.fail()
		return
	}
	if !c.authed && !cmd.noAuth {
		c.w.Error("NOAUTH Authentication required.")
		c.tx.fail()
		return
	}
	if (cmd.arity > 0 && len(args) != cmd.arity) || (cmd.arity < 0 && len(args) < -cmd.arity) {
		c.w.Error("ERR wrong number of arguments for '" + cmd.name + "' command")
		c.tx.fail()
		return
	}
	if !c.ready && !cmd.whileLoading && !c.loaded() {
		c.w.Error(loadingError) // before queueing, as Redis: EXEC then aborts
		c.tx.fail()
		return
	}
	if c.tx.active && !cmd.txControl {
		c.tx.queue(cmd, args)
		c.w.Simple("QUEUED")
		return
	}
	if cmd.txControl {
		c.run(cmd, args) // EXEC takes the transaction lock itself
		return
	}
	if cmd.exclusive {
		c.s.tx.excl.Lock()
		defer c.s.tx.excl.Unlock()
		c.runWrite(cmd, args)
		return
	}
	c.runShared(cmd, args)
	if c.blocked != nil {
		c.awaitBlocked() // outside the transaction lock: a blocked client holds no lock
	}
}

// runShared runs a command (and the GETs pipelined behind a GET) holding
// the transaction lock shared, so that it never runs inside another
// connection's EXEC (S15), and touches the WATCHed keys it changed (runWrite).
func (c *conn) runShared(cmd *command, args [][]byte) {
	c.s.tx.excl.RLock()
	defer c.s.tx.excl.RUnlock() // a panicking command must not keep it
	c.runWrite(cmd, args)
	if cmd == c.s.get {
		c.getRun()
	}
}

// run executes a checked command, timing it when observed. One clock read
// per command: a command's time runs from the end of the one before it in
// the same batch (or, first after a read, from just before it), so parsing
// counts with the command and the wait for input never does.
func (c *conn) run(cmd *command, args [][]byte) {
	if cmd.observe == nil {
		cmd.run(c, args)
		return
	}
	if r := c.rd.Reads(); r != c.timedReads {
		c.timedReads = r
		c.mark = c.s.clock()
	}
	cmd.run(c, args)
	t := c.s.clock()
	cmd.observe(t - c.mark)
	c.mark = t
}

// runWrite runs a command and, for a write command that changed
// something, touches the WATCHed keys it names: not after an error reply
// (a refused command changed nothing) nor when the command set c.noop (a
// SET NX that found the key, a DEL of absent keys, an EXPIRE whose
// condition failed...), as Redis signals only modified keys.
func (c *conn) runWrite(cmd *command, args [][]byte) {
	if !cmd.write {
		c.run(cmd, args)
		return
	}
	c.noop = false
	errs := c.w.Errors()
	c.run(cmd, args)
	if !c.noop && c.w.Errors() == errs {
		c.s.touch(cmd, args)
	}
}

// clock is monotonic time since the server was made: time.Since of a
// monotonic reading costs one clock read, time.Now two.
func (s *Server) clock() time.Duration { return time.Since(s.start) }

// unknownCommand is Redis's text (server.c: processCommand): each argument
// quoted, the list cut near 128 bytes.
func unknownCommand(args [][]byte) string {
	var sb strings.Builder
	for _, a := range args[1:] {
		if sb.Len() >= 128 {
			break
		}
		sb.WriteByte('\'')
		sb.Write(a[:min(len(a), 128-sb.Len())])
		sb.WriteString("' ")
	}
	return "ERR unknown command '" + string(args[0][:min(len(args[0]), 128)]) +
		"', with args beginning with: " + sb.String()
}

func (c *conn) wrongArgs(name string) {
	c.w.Error("ERR wrong number of arguments for '" + name + "' command")
}

func (c *conn) unknownSubcommand(cmd string, sub []byte) {
	c.w.Error("ERR unknown subcommand '" + string(sub[:min(len(sub), 128)]) + "'. Try " + strings.ToUpper(cmd) + " HELP.")
}

func (c *conn) checkPassword(user, pass []byte) bool {
	if user != nil && string(user) != "default" {
		return false
	}
	want := c.s.opts.RequirePass
	return subtle.ConstantTimeCompare(pass, []byte(want)) == 1
}

package server

import (
	"bytes"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// redisCompatVersion is the Redis version whose protocol the server speaks;
// HELLO and INFO report it for clients that check.
const redisCompatVersion = "7.2.0"

func (c *conn) cmdPing(args [][]byte) {
	if len(args) <= 2 && c.w.Proto() == 2 && c.subs.Load() > 0 {
		c.pingSubscribed(args) // pubsub.go
		return
	}
	switch len(args) {
	case 1:
		c.w.Simple("PONG")
	case 2:
		c.w.Bulk(args[1])
	default:
		c.wrongArity()
	}
}

func (c *conn) cmdEcho(args [][]byte) { c.w.Bulk(args[1]) }

// cmdTime: TIME, the server's clock as two bulk strings, the Unix time in
// seconds and the microseconds within that second, as Redis answers.
func (c *conn) cmdTime(args [][]byte) {
	now := time.Now()
	var b [20]byte
	c.w.Array(2)
	c.w.Bulk(strconv.AppendInt(b[:0], now.Unix(), 10))
	c.w.Bulk(strconv.AppendInt(b[:0], int64(now.Nanosecond()/1000), 10))
}

// cmdLastSave: LASTSAVE, the Unix time of the last successful save. There
// is no RDB save: the cold tier is the persistence, and the store's
// checkpoint is written only when it closes; so, as a redis-server that
// has not saved since it started answers, the server's start time (INFO
// persistence's rdb_last_save_time).
func (c *conn) cmdLastSave(args [][]byte) { c.w.Int(c.s.start.Unix()) }

// cmdHello: HELLO [protover [AUTH username password] [SETNAME clientname]].
func (c *conn) cmdHello(args [][]byte) {
	proto := c.w.Proto()
	if len(args) >= 2 {
		v, ok := parseInt(args[1])
		if !ok {
			c.w.Error(errProtoVersion)
			return
		}
		if v != 2 && v != 3 {
			c.w.Error(errNoProto)
			return
		}
		proto = int(v)
	}
	var name []byte
	setName, auth := false, false
	for i := 2; i < len(args); i++ {
		more := len(args) - i - 1
		switch {
		case strings.EqualFold(string(args[i]), "auth") && more >= 2:
			// Checked where it stands, as Redis 7.0 (a bad password is
			// answered before a later option's syntax error); the client
			// is authenticated only once every option was read.
			if !c.checkPassword(args[i+1], args[i+2]) {
				c.w.Error(errWrongPass)
				return
			}
			auth = true
			i += 2
		case strings.EqualFold(string(args[i]), "setname") && more >= 1:
			if !validClientName(args[i+1]) { // where it stands, as Redis 7.0
				c.w.Error(errClientName)
				return
			}
			name, setName = args[i+1], true
			i++
		default:
			c.w.Error(errHelloOption(args[i]))
			return
		}
	}
	if auth {
		c.authed = true
		c.rd.SetPreAuth(false)
		c.out.SetPreAuth(false)
	}
	if !c.authed {
		c.w.Error(errHelloNoAuth)
		return
	}
	c.setMeta(func(m *clientMeta) {
		if setName {
			m.name = string(name)
		}
		m.proto = proto
	})
	c.w.SetProto(proto)
	c.push.resp3.Store(proto == 3)
	c.w.Map(7)
	c.w.BulkString("server")
	c.w.BulkString("tiercache")
	c.w.BulkString("version")
	c.w.BulkString(redisCompatVersion)
	c.w.BulkString("proto")
	c.w.Int(int64(proto))
	c.w.BulkString("id")
	c.w.Int(c.id)
	c.w.BulkString("mode")
	c.w.BulkString(c.s.redisMode())
	c.w.BulkString("role")
	c.w.BulkString("master")
	c.w.BulkString("modules")
	c.w.Array(0)
}

// cmdAuth: AUTH [username] password.
func (c *conn) cmdAuth(args [][]byte) {
	if len(args) > 3 {
		c.w.Error(errSyntax)
		return
	}
	if len(args) == 2 && c.s.opts.RequirePass == "" { // the one-argument form only: "default" takes any password then
		c.w.Error(errNoPassword)
		return
	}
	var user []byte
	pass := args[1]
	if len(args) == 3 {
		user, pass = args[1], args[2]
	}
	if !c.checkPassword(user, pass) {
		c.w.Error(errWrongPass)
		return
	}
	c.authed = true
	c.rd.SetPreAuth(false)
	c.out.SetPreAuth(false)
	c.w.OK()
}

func validClientName(b []byte) bool {
	for _, ch := range b {
		if ch < '!' || ch > '~' {
			return false
		}
	}
	return true
}

func (c *conn) cmdClient(args [][]byte) {
	sub := strings.ToLower(string(args[1]))
	switch sub {
	case "setname":
		if len(args) != 3 {
			c.wrongArgs("client|setname")
			return
		}
		if !validClientName(args[2]) {
			c.w.Error(errClientName)
			return
		}
		c.setMeta(func(m *clientMeta) { m.name = string(args[2]) })
		c.w.OK()
	case "getname":
		if name := c.meta.Load().name; name != "" {
			c.w.BulkString(name)
		} else {
			c.w.Null()
		}
	case "setinfo":
		if len(args) != 4 {
			c.wrongArgs("client|setinfo")
			return
		}
		if bytes.ContainsAny(args[3], " \r\n") {
			c.w.Error(errSetInfoValue(args[2]))
			return
		}
		switch v := string(args[3]); strings.ToLower(string(args[2])) {
		case "lib-name":
			c.setMeta(func(m *clientMeta) { m.libName = v })
		case "lib-ver":
			c.setMeta(func(m *clientMeta) { m.libVer = v })
		default:
			c.w.Error(errUnrecognizedOption(args[2]))
			return
		}
		c.w.OK()
	case "tracking", "caching", "getredir", "trackinginfo":
		c.clientTrackingCmd(sub, args) // tracking.go
	case "id":
		c.w.Int(c.id)
	case "info":
		c.w.Verbatim("txt", c.describe("client|info")+"\n")
	case "list":
		c.clientList(args) // cmd_clientlist.go
	case "kill":
		c.clientKill(args)
	case "no-evict":
		c.clientNoEvict(args)
	case "reply":
		c.clientReply(args) // clientreply.go
	case "unblock":
		c.clientUnblock(args) // unblock.go
	case "pause":
		c.clientPause(args) // pause.go
	case "unpause":
		c.s.pause.unpause()
		c.w.OK()
	case "help":
		help := []string{"CLIENT <subcommand> [<arg> ...]. Subcommands are:", "GETNAME", "SETNAME <name>",
			"SETINFO <LIB-NAME|LIB-VER> <value>", "ID", "INFO", "LIST [TYPE (NORMAL|PUBSUB)] [ID <id> [<id> ...]]",
			"KILL <ip:port> | KILL (ID <id>|ADDR <ip:port>|LADDR <ip:port>|TYPE <type>|USER default|SKIPME (YES|NO)|MAXAGE <secs>) ...",
			"NO-EVICT (ON|OFF)", "UNPAUSE", "PAUSE <timeout> [WRITE|ALL]", "REPLY (ON|OFF|SKIP)", "UNBLOCK <clientid> [TIMEOUT|ERROR]", "HELP"}
		c.w.Array(len(help))
		for _, h := range help {
			c.w.Simple(h)
		}
	default:
		c.unknownSubcommand("client", args[1])
	}
}

// cmdCommand answers COMMAND, COMMAND COUNT, COMMAND LIST, COMMAND INFO and
// COMMAND DOCS (empty) with Redis 7's reply shapes.
func (c *conn) cmdCommand(args [][]byte) {
	if len(args) == 1 {
		names := c.sortedCommands()
		c.w.Array(len(names))
		for _, n := range names {
			c.writeCommandInfo(c.s.cmds[n])
		}
		return
	}
	switch strings.ToLower(string(args[1])) {
	case "count":
		if len(args) != 2 { // Redis: COMMAND COUNT takes no argument
			c.wrongArgs("command|count")
			return
		}
		c.w.Int(int64(len(c.s.cmds)))
	case "list":
		// Redis 7.0 lists each container's subcommands too (S88), and
		// parses FILTERBY as commandListCommand does: only as the last
		// three arguments, each later one a syntax error (S116).
		keep := func(string) bool { return true }
		for i := 2; i < len(args); i += 3 {
			if word(args[i]) != "FILTERBY" || len(args)-1-i != 2 {
				c.w.Error(errSyntax)
				return
			}
			switch arg := string(args[i+2]); word(args[i+1]) {
			case "MODULE":
				keep = func(string) bool { return false } // no modules
			case "ACLCAT":
				c.w.Error(errNoACLCategories)
				return
			case "PATTERN":
				pat := strings.ToLower(arg) // names are lower case: Redis matches without case
				keep = func(n string) bool { return globMatch(pat, n) }
			default:
				c.w.Error(errSyntax)
				return
			}
		}
		var names []string
		for _, n := range c.sortedCommands() {
			if keep(n) {
				names = append(names, n)
			}
			for _, sub := range c.s.cmds[n].sortedSubcommands() {
				if keep(sub.name) {
					names = append(names, sub.name)
				}
			}
		}
		c.w.Array(len(names))
		for _, n := range names {
			c.w.BulkString(n)
		}
	case "info":
		names := args[2:]
		if len(names) == 0 {
			c.cmdCommand(args[:1])
			return
		}
		c.w.Array(len(names))
		for _, n := range names {
			if cmd := c.s.byFullName(string(n)); cmd != nil { // "config|get" too, as Redis 7.0
				c.writeCommandInfo(cmd)
			} else {
				c.w.Null()
			}
		}
	case "docs":
		c.w.Map(0)
	case "getkeys":
		c.commandGetKeys(args) // crossslot.go
	case "help":
		c.w.Array(len(commandHelp))
		for _, l := range commandHelp {
			c.w.Simple(l)
		}
	default:
		c.unknownSubcommand("command", args[1])
	}
}

// commandHelp is COMMAND HELP's answer: Redis 7.0's lines (server.c
// commandHelpCommand) for the subcommands tiercache has, DOCS's saying
// what it answers.
var commandHelp = []string{
	"COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"(no subcommand)",
	"    Return details about all Redis commands.",
	"COUNT",
	"    Return the total number of commands in this Redis server.",
	"LIST",
	"    Return a list of all commands in this Redis server.",
	"INFO [<command-name> ...]",
	"    Return details about multiple Redis commands.",
	"    If no command names are given, documentation details for all",
	"    commands are returned.",
	"DOCS [<command-name> ...]",
	"    Return documentation details about multiple Redis commands: tiercache",
	"    keeps none, and answers an empty map.",
	"GETKEYS <full-command>",
	"    Return the keys from a full Redis command.",
	"HELP",
	"    Prints this help.",
}

func (c *conn) sortedCommands() []string {
	names := make([]string, 0, len(c.s.cmds))
	for n := range c.s.cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// writeCommandInfo writes the 10-element COMMAND entry of Redis 7: name,
// arity, flags, first key, last key, step, ACL categories, tips, key specs,
// subcommands. A container is shown as redis-server 7.0 shows it: its
// declared flags (containerInfoFlags), no keys (its subcommands have
// them), and its subcommands, each an entry of its own (S88). tiercache
// has no ACL categories, tips nor key specs: they are empty.
func (c *conn) writeCommandInfo(cmd *command) {
	flags, first, last, step := cmd.flags, cmd.first, cmd.last, cmd.step
	if cmd.subs != nil {
		flags, first, last, step = containerInfoFlags[cmd.name], 0, 0, 0
	}
	c.w.Array(10)
	c.w.BulkString(cmd.name)
	c.w.Int(int64(cmd.arity))
	movable := cmd.keyNum > 0 || cmd.movable || cmd.storeKeys != nil || cmd.keysOf != nil // Redis's movablekeys: the keys follow a numkeys argument or a keyword, or SORT's
	hidden := boolInt(slices.Contains(flags, "may_replicate"))
	c.w.Set(len(flags) - hidden + boolInt(movable))
	for _, f := range flags {
		if f != "may_replicate" { // hidden on purpose by Redis (server.c addReplyCommandFlags)
			c.w.Simple(f)
		}
	}
	if movable {
		c.w.Simple("movablekeys")
	}
	c.w.Int(int64(first))
	c.w.Int(int64(last))
	c.w.Int(int64(step))
	c.w.Set(0)
	c.w.Set(0)
	c.w.Set(0) // key specs: a set in RESP3, as redis-server 7.0's
	if cmd.subs == nil {
		c.w.Set(0) // as redis-server 7.0 answers a command without subcommands
		return
	}
	subs := cmd.sortedSubcommands()
	c.w.Array(len(subs))
	for _, sub := range subs {
		c.writeCommandInfo(sub)
	}
}

func (c *conn) cmdSelect(args [][]byte) {
	n, ok := c.int32Arg(args[1])
	if !ok {
		return
	}
	if n != 0 && c.s.opts.Cluster {
		c.w.Error(errSelectCluster)
		return
	}
	if n != 0 {
		c.w.Error(errDBIndex)
		return
	}
	c.w.OK()
}

// cmdShutdown: SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT], Redis's
// syntax (and its refusal while a script is busy, BUSY but with NOSAVE).
// It asks the process to stop (Options.Shutdown: the sidecar then
// shuts down as on SIGTERM, its data kept as its durability keeps it
// whatever SAVE or NOSAVE say) and closes the connection without a reply,
// as Redis does. ABORT: no shutdown here waits to be aborted.
func (c *conn) cmdShutdown(args [][]byte) {
	var save, nosave, nowOrForce, abort bool
	for _, a := range args[1:] {
		switch strings.ToLower(string(a)) {
		case "save":
			save = true
		case "nosave":
			nosave = true
		case "now", "force":
			nowOrForce = true
		case "abort":
			abort = true
		default:
			c.w.Error(errSyntax)
			return
		}
	}
	switch {
	case (save && nosave) || (abort && (save || nosave || nowOrForce)):
		c.w.Error(errSyntax)
	case abort:
		c.w.Error(errNoShutdown)
	case !nosave && c.s.scriptBusy():
		// As Redis: only NOSAVE stops a server whose script ran past
		// busy-reply-threshold, since what it did so far would be kept.
		c.w.Error(errBusyScript)
	case c.s.opts.Shutdown == nil:
		c.w.Error(errNoShutdownHook)
	default:
		c.s.opts.Shutdown()
		c.quit = true
	}
}

// cmdQuit answers +OK and closes the connection. It counts as gone for
// clients that redirect their invalidations to it before the +OK is sent,
// as Redis frees a quitting client before it serves another's command: a
// write after the client read its +OK tells them tracking-redir-broken
// (S109).
func (c *conn) cmdQuit(args [][]byte) {
	c.gone.Store(true)
	c.w.OK()
	c.quit = true
}

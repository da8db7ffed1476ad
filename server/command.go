package server

import (
	"crypto/subtle"
	"strings"
	"time"
)

// command is one entry of the command table.
type command struct {
	stats  cmdStats // INFO commandstats (cmdstats.go)
	name   string   // lower case
	arity  int      // Redis convention: n exact, -n at least n (name included)
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
	// noscript commands are refused inside a script, mayReplicate ones
	// inside a read-only script as writes are, and only allowBusy ones run
	// while a script is past busy-reply-threshold (flags of the same
	// names, set by newCommandTable).
	noscript, mayReplicate, allowBusy bool
	// noMulti commands are refused inside MULTI, before queueing (Redis's
	// no_multi flag: SHUTDOWN).
	noMulti bool
	// lockFree commands touch no key and run without the transaction
	// lock (SCRIPT, pub/sub, CLIENT, AUTH, HELLO, CONFIG).
	lockFree bool
	// readonly commands' keys are remembered for tracking clients;
	// inSubscribed ones run on a RESP2 connection with subscriptions.
	readonly, inSubscribed bool
	run                    func(c *conn, args [][]byte)
	observe                func(d time.Duration, n int)
	// admin commands are never shown to monitors (Redis's admin flag;
	// containers: their subcommands' admin); monitorFirst ones are shown before
	// they run (skip_monitor: EVAL...), the others once they ran;
	// skipSlowlog ones never enter the slow log (EXEC). Set by
	// newCommandTable from the flags.
	admin, monitorFirst, skipSlowlog bool
	// rememberAfter readonly commands may change the keys they read
	// (PFCOUNT caching a cardinality): their keys are remembered for
	// tracking clients after they ran, as Redis's call() remembers every
	// read's, so that their own change does not invalidate them for their
	// client. They are exclusive: no other write runs between.
	rememberAfter bool
	// keyNum is the position of a numkeys argument whose keys follow it
	// (EVAL's 2, ZUNIONSTORE's 2), 0 = none: Redis's movable keys
	// (eachKey, crossslot.go).
	keyNum int
	// movable commands' keys move without a numkeys argument (SORT and
	// SORT_RO: COMMAND INFO's movablekeys).
	movable bool
	// exclusiveFor, when set, decides for each call what exclusive
	// decides for all: SORT runs exclusively only when it stores or reads
	// keys other than the one it sorts (sortExclusive).
	exclusiveFor func(args [][]byte) bool
	// storeKeys calls f with the destination keys that follow keywords
	// (SORT's STORE: sortStoreKeys; GEORADIUS's STORE and STOREDIST:
	// geoStoreKeys), after the keys at fixed positions (eachKey); nil =
	// none. Such keys are movable (COMMAND INFO's movablekeys).
	storeKeys func(args [][]byte, f func(key []byte) bool)
	// notKey: the key positions name channels, not keys (Redis's key
	// specs flagged not_key: SSUBSCRIBE, SUNSUBSCRIBE, SPUBLISH). The
	// cluster's slot rules read them (CROSSSLOT, a script's slot), COMMAND
	// INFO shows them; COMMAND GETKEYS answers that there is no key.
	notKey bool
	// keysOf, when set, finds the keys in place of the key positions
	// above (eachKey), which COMMAND INFO still shows as Redis's legacy
	// range: MIGRATE's key argument or the keys after its KEYS
	// (migrateKeys). Such keys are movable.
	keysOf func(args [][]byte, f func(key []byte) bool)
	// subs are a container's subcommands by name (CONFIG's "get"...),
	// each with its own arity, flags, keys and commandstats
	// (subcommands.go, S86-S88); nil for other commands.
	subs map[string]*command
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
	c.out.own() // no push is written straight to the socket while a command runs (pushwrite.go)
	if c.push.pending.Load() {
		c.drainPushes() // what was published before the command comes before its reply, as in Redis
	}
	cmd := c.s.lookup(args[0])
	if cmd == nil {
		c.w.Error(errUnknownCommand(args))
		c.tx.fail()
		return
	}
	// A container's subcommand is checked as a command of its own: one
	// it does not have is refused as an unknown command is, counted
	// nowhere; a refusal is counted in the subcommand's commandstats
	// (server.c processCommand: commandCheckExistence, then rejectCommand
	// on c->cmd, the subcommand; S86, S87).
	sub := cmd.subcommand(args)
	if sub == nil {
		c.w.Error(errUnknownSubcommand(cmd.name, args[1]))
		c.tx.fail()
		return
	}
	// redis-server 7.0's processCommand checks the arity before the
	// authentication (S64).
	if !sub.arityOK(len(args)) {
		c.reject(sub, errWrongArgs(sub.name))
		return
	}
	if !c.authed && !cmd.noAuth {
		c.reject(sub, errNoAuth)
		return
	}
	if c.s.opts.Cluster && c.crossSlot(cmd, args) { // as Redis: before -LOADING and before queueing
		return
	}
	if !c.ready && !cmd.whileLoading && !c.loaded() {
		c.reject(sub, errLoading) // before queueing, as Redis
		return
	}
	if c.subscribedOnly(cmd) {
		c.reject(sub, errSubscribedOnly(sub.name))
		return
	}
	if !cmd.busyAllowed(args) && c.s.scriptBusy() {
		c.reject(sub, errBusyScript) // before queueing, as Redis
		return
	}
	if c.tx.active && cmd.noMulti {
		cmd.stats.rejected.Add(1)
		c.w.Error(errNoMulti) // EXEC then aborts, as in Redis
		c.tx.fail()
		return
	}
	// A pause holds the command here, before it is queued or runs, as
	// Redis's processCommand blocks the client (BLOCKED_POSTPONE) after
	// every check that may refuse it (S97).
	if !c.holdWhilePaused(cmd, args) {
		return
	}
	if c.tx.active && !cmd.txControl {
		c.tx.queue(cmd, args)
		c.cmd, c.sub = cmd, sub // the last command, as CLIENT LIST shows it (Redis's lastcmd)
		c.showMulti()
		c.w.Simple("QUEUED")
		return
	}
	// The clients the command served get their results once its
	// invalidations went out (S90); deferred too, so that a panic in the
	// command leaves none of them waiting.
	defer c.handOff()
	if cmd.txControl || cmd.lockFree {
		c.run(cmd, args) // EXEC and EVAL take the transaction lock themselves
		c.s.trk.flushBcast()
		c.handOff()
		return
	}
	if cmd.exclusive || cmd.exclusiveFor != nil && cmd.exclusiveFor(args) {
		c.s.tx.excl.Lock()
		for c.pausedSince(cmd, args) {
			c.s.tx.excl.Unlock()
			if !c.holdWhilePaused(cmd, args) {
				return
			}
			c.s.tx.excl.Lock()
		}
		defer c.s.tx.excl.Unlock()
		if c.isKilled() { // while it waited (S54)
			return
		}
		c.runWrite(cmd, args)
		c.s.trk.flushBcast()
		c.handOff()
		return
	}
	c.runShared(cmd, args)
	c.s.trk.flushBcast()
	c.handOff()
	if c.blocked != nil {
		c.awaitBlocked() // outside the transaction lock: a blocked client holds no lock
	}
}

// reject answers err for cmd, refused before it runs or is queued, as
// redis-server 7.0's rejectCommand (server.c): an open MULTI block is
// flagged, so that its EXEC aborts; a refused EXEC answers EXECABORT with
// err and discards the block and the connection's WATCHes
// (execCommandAbort), so the connection leaves MULTI (S77).
func (c *conn) reject(cmd *command, err string) {
	cmd.stats.rejected.Add(1)
	if cmd.name != "exec" {
		c.w.Error(err)
		c.tx.fail()
		return
	}
	c.tx.reset()
	c.showMulti()
	c.unwatch()
	c.w.Error(errExecAbortBecause(err))
}

// scriptBusy reports whether a script runs past busy-reply-threshold.
func (s *Server) scriptBusy() bool {
	rs := s.scr.cur.Load()
	return rs != nil && rs.past.Load()
}

// busyAllowed reports that args run beside a script past
// busy-reply-threshold: an allow_busy command, or SCRIPT KILL (of SCRIPT's
// subcommands only KILL is allow_busy in Redis 7.0).
func (cmd *command) busyAllowed(args [][]byte) bool {
	return cmd.allowBusy || cmd.name == "script" && len(args) == 2 && strings.EqualFold(string(args[1]), "kill")
}

// lookup finds the command named name (any case), or nil.
func (s *Server) lookup(name []byte) *command {
	var buf [24]byte
	lower := lowerName(&buf, name)
	if lower == nil {
		return nil
	}
	return s.cmds[string(lower)] // no allocation: map lookup of a converted slice
}

// lockShared takes the transaction lock shared for cmd. While a script
// holds it past busy-reply-threshold a command that is not allowBusy is
// answered BUSY instead (false), also one that was already waiting: refused
// (rejected in commandstats, S91), as by Redis's processCommand. A
// client killed while it waited gets no lock (false, nothing answered):
// its command does not run after CLIENT KILL answered (S54).
func (c *conn) lockShared(cmd *command) bool {
	s := c.s
	if s.tx.excl.TryRLock() {
		return true
	}
	for !s.tx.excl.TryRLock() {
		if s.scr.waiting.Load() == 0 {
			s.tx.excl.RLock() // EXEC or an exclusive command: wait for it
			break
		}
		rs := s.scr.cur.Load()
		switch {
		case rs == nil:
			time.Sleep(50 * time.Microsecond) // a script is about to start, or just ended
		case rs.past.Load() && !cmd.allowBusy:
			c.reject(cmd, errBusyScript)
			return false
		default:
			s.scr.waitScript(rs, rs.past.Load())
		}
	}
	if c.isKilled() {
		s.tx.excl.RUnlock()
		return false
	}
	return true
}

// runShared runs a command (and the GETs or SETs pipelined behind one) holding
// the transaction lock shared, so that it never runs inside another
// connection's EXEC (S15), and touches the WATCHed keys it changed (runWrite).
func (c *conn) runShared(cmd *command, args [][]byte) {
	lockFor := cmd
	if sub := cmd.subcommand(args); sub != nil {
		lockFor = sub // OBJECT ENCODING's BUSY is object|encoding's refusal (S87)
	}
	if !c.lockShared(lockFor) {
		return
	}
	for c.pausedSince(cmd, args) {
		c.s.tx.excl.RUnlock()
		if !c.holdWhilePaused(cmd, args) || !c.lockShared(lockFor) {
			return
		}
	}
	defer c.s.tx.excl.RUnlock() // a panicking command must not keep it
	c.runWrite(cmd, args)
	switch {
	case c.skipping(): // CLIENT REPLY SKIP: the next command's reply is sent (replied)
	case cmd == c.s.get && c.trk == nil: // a tracking client's GETs each remember their key
		c.getRun()
	case cmd == c.s.set && !c.s.opts.noSetRun:
		c.setRun()
	}
}

// run executes a checked command, timing it when observed. A command's
// time runs from the end of the one before it in the same batch (or,
// first after a read, from just before it), so parsing counts with the
// command and the wait for input never does. The clock is read once per
// run of the same command pipelined in one read, not once per command
// (observeLater, S51).
func (c *conn) run(cmd *command, args [][]byte) {
	c.cmd, c.sub = cmd, nil
	if cmd.subs != nil {
		c.sub = cmd.subcommand(args)
	}
	if c.trk != nil || c.scriptOf != nil {
		if cmd.readonly && !cmd.rememberAfter {
			// before the read: a write beside it finds the key tracked, and
			// its invalidation follows the value read (TestTrackingReadBesideWrite)
			c.remember(cmd, args)
		}
		defer c.tracked(cmd)
		if cmd.rememberAfter {
			defer c.remember(cmd, args) // runs before tracked: CLIENT CACHING still counts
		}
	}
	c.refused, c.errElsewhere = false, false
	c.errMark = c.w.Errors()
	if !c.s.timing.Load() {
		c.timed = false
		if c.s.mon.list.Load() != nil {
			c.execMonitored(cmd, args)
		} else {
			cmd.run(c, args)
		}
		c.countCall(cmd.statsOf(args))
		return
	}
	if r := c.rd.Reads(); r != c.timedReads {
		c.timedReads = r
		if c.pending > 0 {
			c.dropKept()          // the read may have moved them
			c.observePending(nil) // read without BeforeBlock (a big bulk's rest): mark is read now
		} else if c.ioReads == r {
			c.mark = c.readAt // showRead's clock read for this read
		} else {
			c.mark = c.s.clock()
		}
	} else if c.pending > 0 && (c.pendingCmd != cmd || cmd.subs != nil) {
		c.observePending(nil) // a container's runs are observed one by one, each in its subcommand's stats
	}
	c.timed = true
	if c.s.mon.list.Load() != nil {
		c.execMonitored(cmd, args)
	} else {
		cmd.run(c, args)
	}
	st := cmd.statsOf(args)
	c.countCall(st)
	c.timed = false
	if c.blocked != nil {
		c.deferBlocked(cmd, args) // observed once served (awaitBlocked)
		return
	}
	c.pendingCmd, c.pendingSt = cmd, st
	c.pending++
	if !c.observeLater(cmd) {
		c.observePending(args)
	} else {
		c.keepArgs(args)
	}
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
	c.noop, c.touched, c.agg.purged = false, false, 0
	errs := c.w.Errors()
	hooks := c.s.keyHooks()
	var pre []bool
	if hooks {
		pre = c.beforeWrite(cmd, args)
	}
	c.run(cmd, args)
	if !c.noop && c.w.Errors() == errs {
		if !c.touched {
			c.s.touch(cmd, args)
		}
		if hooks {
			c.afterWrite(cmd, args, pre)
		}
	}
}

// tracked, after a command of a connection that tracks keys (or runs a
// script for one), ends CLIENT CACHING's effect: after any command but
// CLIENT's, outside MULTI and EXEC, as Redis's resetClient
// (TestTrackingCachingSpansClientCommands).
func (c *conn) tracked(cmd *command) {
	if c.trk != nil && !c.inExec && !c.tx.active && cmd.name != "client" {
		c.trk.caching = false
	}
}

// now is the cache's time (unix nanoseconds) for the running command,
// which must not wait (a blocking command reads the cache's clock):
// taken from run's reading before the command, or before the first of
// its pipelined run (S51), when it is timed (no clock read, as Redis's
// command time snapshot), else the cache's clock read.
func (c *conn) now() int64 {
	if c.timed {
		return c.s.cache.NowOf(c.s.start.Add(c.mark))
	}
	return c.s.cache.Now()
}

// clock is monotonic time since the server was made: time.Since of a
// monotonic reading costs one clock read, time.Now two.
func (s *Server) clock() time.Duration { return time.Since(s.start) }

// wrongArgs answers a wrong argument count of name (a command, or a
// subcommand "client|setname"). Redis refuses such a command before
// running it: it is neither shown to monitors nor logged as slow
// (refused).
func (c *conn) wrongArgs(name string) {
	c.refused = true
	c.w.Error(errWrongArgs(name))
}

// wrongArity answers a wrong argument count the running command finds
// as it runs (HSET's odd pairs, LPOP's extra argument...): an error of the
// command's own, failed in commandstats, as Redis's addReplyErrorArity
// from inside the command (S91), unlike the count the command table
// checks first (wrongArgs).
func (c *conn) wrongArity() { c.w.Error(errWrongArgs(c.cmd.name)) }

// unknownSubcommand answers an unknown subcommand, which Redis refuses
// before running it, as wrongArgs.
func (c *conn) unknownSubcommand(cmd string, sub []byte) {
	c.refused = true
	c.w.Error(errUnknownSubcommand(cmd, sub))
}

// checkPassword reports whether user (nil: "default") may log in with
// pass. The one user is "default"; without RequirePass it has no password
// and takes any (Redis's nopass default user), as AUTH default x and
// HELLO 2 AUTH default x answer on a redis-server without requirepass.
func (c *conn) checkPassword(user, pass []byte) bool {
	if user != nil && string(user) != "default" {
		return false
	}
	want := c.s.opts.RequirePass
	if want == "" {
		return true
	}
	return subtle.ConstantTimeCompare(pass, []byte(want)) == 1
}

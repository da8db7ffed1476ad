package server

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/remote"
	"github.com/tiercache/tiercache/resp"
	"github.com/tiercache/tiercache/script"
)

// Lua scripting (EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, SCRIPT): the engine
// is package script's; here a script runs as EXEC runs its commands,
// holding the transaction lock exclusively (S31), each redis.call
// dispatched on a connection of its own whose replies are read back
// (scriptConn), as Redis runs them on its Lua client.

// scripting is the server's script state: the engine, and the script
// running now, if any, for SCRIPT KILL and the BUSY replies.
type scripting struct {
	eng *script.Engine
	// cur is the script running now; waiting counts the scripts that
	// have asked for the transaction lock and not yet released it, so a
	// command that finds the lock taken knows to look for cur.
	cur     atomic.Pointer[runningScript]
	waiting atomic.Int64
	// busyAfter is busy-reply-threshold (lua-time-limit), nanoseconds.
	busyAfter atomic.Int64
	// killed and busy count SCRIPT KILLs done and scripts that ran past
	// busyAfter.
	killed, busy atomic.Uint64
	// mu orders what changes cur's state with those who wait on it
	// (changed: cur ended, or passed busyAfter) and with SCRIPT KILL, so
	// that a kill cancels ctx only while the script it saw still runs.
	// ctx is shared by the runs until one is cancelled, then made anew;
	// timer is the one busyAfter timer, made once. It is not stopped
	// when a run ends (a Reset and a Stop per run cost more than the rest
	// of the run's bookkeeping): armed, it fires at deadline (Server.clock)
	// and then looks at the script running then, re-arming for it
	// (scriptPastThreshold); a run arms it only when it is not, or would
	// fire after the run's own threshold.
	mu       sync.Mutex
	changed  sync.Cond
	ctx      context.Context
	cancel   context.CancelFunc
	timer    *time.Timer
	armed    bool
	deadline time.Duration
}

// arm makes the timer fire at deadline d, after the delay wait; scr.mu
// is held.
func (scr *scripting) arm(s *Server, d, wait time.Duration) {
	if scr.timer == nil {
		scr.timer = time.AfterFunc(wait, s.scriptPastThreshold)
	} else {
		scr.timer.Reset(wait)
	}
	scr.armed, scr.deadline = true, d
}

// runningScript is the script running now.
type runningScript struct {
	sha   string
	start time.Duration // Server.clock when it started
	after time.Duration // busyAfter when it started (0: none)
	dirty atomic.Bool   // it called a write command: SCRIPT KILL refuses
	past  atomic.Bool   // it ran past busy-reply-threshold
}

func newScripting(o *Options) *scripting {
	sc := &scripting{eng: script.New(script.Options{Logger: o.Logger, Version: redisCompatVersion, MaxStringBytes: o.MaxValueBytes})}
	sc.busyAfter.Store(min(max(int64(o.BusyScriptTime), 0), busyMaxNanos)) // negative: none (0); a start plus it stays within an int64
	sc.changed.L = &sc.mu
	return sc
}

// waitScript waits, holding nothing, until rs is no longer the running
// script or, unless untilDone, until it passed busy-reply-threshold.
func (sc *scripting) waitScript(rs *runningScript, untilDone bool) {
	sc.mu.Lock()
	for sc.cur.Load() == rs && (untilDone || !rs.past.Load()) {
		sc.changed.Wait()
	}
	sc.mu.Unlock()
}

// kill cancels the running script if it is still rs.
func (sc *scripting) kill(rs *runningScript) bool {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.cur.Load() != rs || sc.cancel == nil {
		return false
	}
	sc.cancel()
	return true
}

// evalCmd: EVAL script numkeys key... arg... (sha false), EVALSHA sha1
// numkeys ... (sha true); ro for EVAL_RO and EVALSHA_RO.
func (c *conn) evalCmd(args [][]byte, sha, ro bool) {
	numkeys, ok := c.intArg(args[2])
	if !ok {
		return
	}
	switch {
	case numkeys > int64(len(args)-3):
		c.w.Error(errKeysGreater)
		return
	case numkeys < 0:
		c.w.Error(errKeysNegative)
		return
	}
	var sc *script.Script
	if sha {
		if sc = c.s.scr.eng.Get(args[1]); sc == nil {
			c.w.Error(errNoScript)
			return
		}
	} else {
		var err error
		if sc, err = c.s.scr.eng.Load(args[1]); err != nil {
			c.w.Error(err.Error())
			return
		}
	}
	readOnly := ro || sc.Flags&script.FlagNoWrites != 0
	if c.s.opts.Cluster && sc.Flags&script.FlagNoCluster != 0 {
		c.w.Error(errScriptNoCluster)
		return
	}
	if ro && sc.Flags&(script.FlagCompat|script.FlagNoWrites) == 0 {
		c.w.Error(errWriteFlagRO)
		return
	}
	keys := args[3 : 3+numkeys]
	argv := args[3+numkeys:]
	if c.inExec { // inside EXEC, which holds the lock already
		c.runScript(sc, keys, argv, readOnly)
		return
	}
	s := c.s
	s.scr.waiting.Add(1)
	s.tx.excl.Lock()
	for c.pausedSince(c.cmd, args) {
		// A pause began while it waited for the lock (S97): held, then it
		// looks again; not counted as waiting for the lock meanwhile.
		s.tx.excl.Unlock()
		s.scr.waiting.Add(-1)
		if !c.holdWhilePaused(c.cmd, args) {
			return
		}
		s.scr.waiting.Add(1)
		s.tx.excl.Lock()
	}
	defer func() {
		s.tx.excl.Unlock()
		s.scr.waiting.Add(-1)
	}()
	if c.isKilled() { // while it waited (S54)
		return
	}
	c.runScript(sc, keys, argv, readOnly)
}

// runScript runs sc holding the transaction lock exclusively.
func (c *conn) runScript(sc *script.Script, keys, argv [][]byte, readOnly bool) {
	s := c.s
	rs := &runningScript{sha: sc.SHA, start: s.clock(), after: time.Duration(s.scr.busyAfter.Load())}
	scr := s.scr
	scr.mu.Lock()
	if scr.ctx == nil || scr.ctx.Err() != nil { // a kill ended the last one's context: one a late kill cannot reach
		scr.ctx, scr.cancel = context.WithCancel(context.Background())
	}
	ctx := scr.ctx
	scr.cur.Store(rs)
	if rs.after > 0 && (!scr.armed || scr.deadline > rs.start+rs.after) {
		scr.arm(s, rs.start+rs.after, rs.after)
	}
	scr.mu.Unlock()
	sconn := c.scriptConn()
	sconn.ro, sconn.rs = readOnly, rs
	// In cluster mode a script without shebang, or with
	// allow-cross-slot-keys, may name keys of any slot; another keeps to
	// its declared keys' slot, or its first command's.
	sconn.anySlot = sc.Flags&(script.FlagCompat|script.FlagAllowCrossSlot) != 0
	sconn.slot = -1
	if len(keys) > 0 {
		sconn.slot = int(remote.KeySlot(keys[0]))
	}
	call := &sconn.call
	call.Ctx, call.Keys, call.Args, call.W = ctx, keys, argv, c.w
	if c.push != nil {
		c.push.holdPushes() // the invalidations of its writes to c come after its reply (S122)
		defer c.push.releasePushes()
	}
	scr.eng.Run(sc, call)
	c.scriptWakes(sconn.c)
	sconn.c.w.Flush()               // nothing left: its buffer goes back to the pool
	call.Keys, call.Args = nil, nil // they alias the connection's read buffer
	scr.mu.Lock()
	scr.cur.Store(nil)
	scr.changed.Broadcast()
	scr.mu.Unlock()
	if rs.past.Load() {
		s.log.Info("the busy script ended", zap.String("sha", sc.SHA))
	}
}

// scriptPastThreshold is the busyAfter timer's: the script running now,
// if it has run for its threshold, is marked past it, and those waiting
// are told; one that has not yet (it began after the timer was armed) has
// the timer armed again for it; with none running the timer stays unarmed
// until the next run.
func (s *Server) scriptPastThreshold() {
	scr := s.scr
	scr.mu.Lock()
	scr.armed = false
	rs := scr.cur.Load()
	if rs == nil || rs.past.Load() || rs.after == 0 {
		scr.mu.Unlock()
		return
	}
	if ran := s.clock() - rs.start; ran < rs.after {
		scr.arm(s, rs.start+rs.after, rs.after-ran)
		scr.mu.Unlock()
		return
	}
	rs.past.Store(true)
	scr.changed.Broadcast()
	scr.mu.Unlock()
	scr.busy.Add(1)
	s.log.Warn("a script is still running past busy-reply-threshold: other clients get BUSY; SCRIPT KILL ends it unless it wrote",
		zap.String("sha", rs.sha), zap.Duration("threshold", rs.after))
}

// cmdScript: SCRIPT LOAD|EXISTS|FLUSH|KILL|HELP.
func (c *conn) cmdScript(args [][]byte) {
	sub := strings.ToLower(string(args[1]))
	switch {
	case sub == "load" && len(args) == 3:
		sc, err := c.s.scr.eng.Load(args[2])
		if err != nil {
			c.w.Error(err.Error())
			return
		}
		c.w.BulkString(sc.SHA)
	case sub == "exists" && len(args) >= 3:
		c.w.Array(len(args) - 2)
		for _, a := range args[2:] {
			c.intReply(c.s.scr.eng.Get(a) != nil)
		}
	case sub == "flush":
		if len(args) > 3 || len(args) == 3 && !strings.EqualFold(string(args[2]), "sync") && !strings.EqualFold(string(args[2]), "async") {
			c.w.Error(errScriptFlushArgs)
			return
		}
		c.s.scr.eng.Flush()
		c.w.OK()
	case sub == "kill" && len(args) == 2:
		rs := c.s.scr.cur.Load()
		switch {
		case rs == nil:
			c.w.Error(errNotBusy)
		case rs.dirty.Load():
			c.w.Error(errUnkillable)
		case !c.s.scr.kill(rs):
			c.w.Error(errNotBusy) // it ended meanwhile
		default:
			c.s.scr.killed.Add(1)
			c.s.log.Warn("Lua script killed by user with SCRIPT KILL.", zap.String("sha", rs.sha))
			c.w.OK()
		}
	case sub == "help" && len(args) == 2:
		help := []string{"SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
			"EXISTS <sha1> [<sha1> ...]", "    Return information about the existence of the scripts in the script cache.",
			"FLUSH [ASYNC|SYNC]", "    Flush the Lua scripts cache.",
			"KILL", "    Kill the currently executing Lua script.",
			"LOAD <script>", "    Load a script into the scripts cache without executing it.",
			"HELP", "    Prints this help."}
		c.w.Array(len(help))
		for _, h := range help {
			c.w.Simple(h)
		}
	case sub == "load" || sub == "exists" || sub == "kill" || sub == "help":
		c.wrongArgs("script|" + sub)
	default:
		c.unknownSubcommand("script", args[1])
	}
}

func (c *conn) cmdNoFunctions(args [][]byte) { c.w.Error(errNoFunctions) }

// cmdFunction: FUNCTION FLUSH [ASYNC|SYNC] answers OK and FUNCTION LIST
// [WITHCODE] [LIBRARYNAME pattern] an empty list, as Redis 7.0 does with
// no function loaded, which is always true here (Redis's own test suite
// flushes functions before every unit); every other subcommand answers
// errNoFunctions.
func (c *conn) cmdFunction(args [][]byte) {
	switch word(args[1]) {
	case "FLUSH":
		switch {
		case len(args) > 3:
			c.w.Error(errSubcommandSyntax("FUNCTION", args[1]))
		case len(args) == 3 && word(args[2]) != "SYNC" && word(args[2]) != "ASYNC":
			c.w.Error(errFunctionFlushArg)
		default:
			c.w.OK()
		}
	case "LIST":
		for i := 2; i < len(args); i++ {
			switch word(args[i]) {
			case "WITHCODE":
			case "LIBRARYNAME":
				if i++; i == len(args) {
					c.w.Error(errFunctionLibraryName)
					return
				}
			default:
				c.w.Error(errFunctionListArg(args[i]))
				return
			}
		}
		c.w.Array(0)
	default:
		c.w.Error(errNoFunctions)
	}
}

// scriptConn is the connection a script's commands run on: its replies go
// to a buffer the engine reads back.
type scriptConn struct {
	c   *conn
	buf bytes.Buffer // what c.w flushed: a reply larger than its buffer
	ro  bool         // a read-only script (EVAL_RO, or #!lua flags=no-writes)
	rs  *runningScript
	// anySlot and slot are the run's cluster rules (clusterRefusal).
	anySlot bool
	slot    int         // -1: none yet
	call    script.Call // the run's, reused: its Command is made once
	// recent are the commands last looked up, by the names the script
	// gave (scripts call a few commands, by the same names, again and
	// again): Server.lookup lowers and hashes the name.
	recent     [4]recentCommand
	nextRecent int
}

type recentCommand struct {
	name string
	cmd  *command
}

// lookup is Server.lookup of name, through recent.
func (sc *scriptConn) lookup(name []byte) *command {
	for i := range sc.recent {
		if r := &sc.recent[i]; r.cmd != nil && r.name == string(name) {
			return r.cmd
		}
	}
	cmd := sc.c.s.lookup(name)
	if cmd != nil {
		sc.recent[sc.nextRecent] = recentCommand{name: string(name), cmd: cmd}
		sc.nextRecent = (sc.nextRecent + 1) % len(sc.recent)
	}
	return cmd
}

// clusterRefusal is Redis Cluster's refusal of a script's command
// (script.c scriptVerifyClusterState), or "": keys of more than one slot
// in the command, or, unless the script may name any slot, a key of
// another slot than the script's.
func (sc *scriptConn) clusterRefusal(cmd *command, args [][]byte) string {
	if cmd.first == 0 && cmd.keyNum == 0 {
		return ""
	}
	var own slotCheck
	cmd.eachKey(args, func(k []byte) bool { return own.add(k) })
	switch {
	case own.cross:
		return errScriptNonLocalKey
	case !own.has || sc.anySlot:
		return ""
	case sc.slot < 0:
		sc.slot = int(own.slot)
	case int(own.slot) != sc.slot:
		return errScriptCrossSlot
	}
	return ""
}

// scriptConn returns the connection c's scripts run their commands on,
// made at its first script.
func (c *conn) scriptConn() *scriptConn {
	if c.script != nil {
		return c.script
	}
	s := c.s
	sc := &scriptConn{}
	fc := &conn{s: s, id: c.id, authed: true, ready: true, created: c.created, scriptOf: c}
	fc.rd = resp.NewReader(bytes.NewReader(nil), resp.Limits{BufferBytes: 512})
	fc.w = resp.NewWriter(&sc.buf, s.opts.WriteBufferBytes)
	fc.into = fc.w.BulkInto
	fc.w.CountError = s.errs.count
	fc.lists = c.lists
	fc.lists.cache = s.cache
	fc.lists.handoffs = nil // its own: scriptWakes moves them to c's
	fc.inExec = true        // nothing blocks in a script
	sc.c = fc
	sc.call.Command = sc.command
	sc.call.Known = func(name []byte) bool { return sc.lookup(name) != nil }
	c.script = sc
	return sc
}

// command runs one redis.call: Redis's checks (script.c scriptCall), then
// the command as EXEC runs one, its reply read back in the script's
// protocol.
func (sc *scriptConn) command(args [][]byte, proto int) []byte {
	fc := sc.c
	sc.buf.Reset()
	cmd := sc.lookup(args[0])
	var sub *command // a container's subcommand is checked as a command (S86)
	if cmd != nil {
		sub = cmd.subcommand(args)
	}
	var refuse string
	switch {
	case sub == nil:
		refuse = errScriptUnknownCmd
	case !sub.arityOK(len(args)):
		refuse = errScriptArity
	case sub.noscript:
		refuse = errScriptNoScript
	case sc.ro && (cmd.write || cmd.mayReplicate):
		refuse = errScriptReadOnly
	case fc.s.opts.Cluster:
		refuse = sc.clusterRefusal(cmd, args)
	}
	if refuse != "" {
		fc.s.errs.count(refuse)
		if sub != nil {
			sub.stats.rejected.Add(1) // script.c scriptCall's incrCommandStatsOnError
		}
		return resp.AppendError(sc.buf.Bytes(), refuse)
	}
	if cmd.write {
		sc.rs.dirty.Store(true)
	}
	fc.w.SetProto(proto)
	if fc.s.timing.Load() {
		// timed from here, as Redis's call() times a script's command:
		// the script's own work before it is the script's (S111)
		fc.mark = fc.s.clock()
	}
	fc.runWrite(cmd, args)
	if o := fc.scriptOf; o.push != nil && o.push.pending.Load() {
		// what it published to the script's own client goes before the
		// script's answer, as Redis adds it to the client's output at once
		o.drainPushes()
	}
	if sc.buf.Len() == 0 {
		if b, ok := fc.w.Detach(); ok { // nothing held by reference: the chunks may go
			fc.chunks.Release()
			return b
		}
	}
	fc.w.Flush()
	fc.chunks.Release()
	return sc.buf.Bytes()
}

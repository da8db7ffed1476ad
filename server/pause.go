package server

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tiercache/tiercache/script"
)

// CLIENT PAUSE timeout [WRITE|ALL] and CLIENT UNPAUSE, as redis-server
// 7.0 (networking.c clientCommand, pauseClients, unpauseClients,
// updateClientPauseTypeAndEndTime; server.c processCommand). While a
// pause lasts, a command it covers is held before it runs or is queued:
// its client waits as a blocked client (flag b in CLIENT LIST, counted
// in INFO blocked_clients, as Redis's BLOCKED_POSTPONE) and the command
// runs once the pause ends (S97, S98).

// pauseMode is Redis's pause_type, in its order of restriction.
type pauseMode uint8

const (
	pauseOff   pauseMode = iota // CLIENT_PAUSE_OFF
	pauseWrite                  // CLIENT_PAUSE_WRITE: commands that may replicate
	pauseAll                    // CLIENT_PAUSE_ALL: every command
)

// pauseState is the server's client pause: the mode and its end.
type pauseState struct {
	mu     sync.Mutex
	mode   pauseMode
	end    time.Time
	gen    uint64      // which timer is the current pause's
	timer  *time.Timer // ends the pause at end
	ended  chan struct{}
	closed bool // the server shuts down: nothing is held any more
	// on is set while a pause lasts: the expiry sweeps (the cache's,
	// Cache.HoldSweep, and the hash fields') skip their turns then, as
	// redis-server 7.0's activeExpireCycle does while clients are paused.
	on atomic.Bool
}

// pause starts or extends the pause: an active one keeps the more
// restrictive mode and the later end (pauseClients: max of type and
// end); a timeout of 0 ends at once unless a pause is active, as
// Redis's end time 0 (getTimeoutFromObjectOrReply adds now only to a
// timeout above 0).
func (p *pauseState) pause(d time.Duration, mode pauseMode) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	var end time.Time // 0: already past
	if d > 0 {
		end = now.Add(d)
	}
	if p.activeLocked(now) {
		mode = max(mode, p.mode)
		if p.end.After(end) {
			end = p.end
		}
	}
	if !end.After(now) {
		return // over before it began: nothing is paused
	}
	p.mode, p.end = mode, end
	p.on.Store(true)
	if p.ended == nil {
		p.ended = make(chan struct{})
	}
	if p.timer != nil {
		p.timer.Stop()
	}
	p.gen++
	gen := p.gen
	p.timer = time.AfterFunc(end.Sub(now), func() { p.expire(gen) })
}

// expire ends the pause whose timer gen fired, if it is still the one.
func (p *pauseState) expire(gen uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if gen == p.gen {
		p.endLocked()
	}
}

// unpause ends the pause (CLIENT UNPAUSE; nothing when none is active).
func (p *pauseState) unpause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLocked()
}

// shutdown ends the pause for good: held clients go without running.
func (p *pauseState) shutdown() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	p.endLocked()
}

// activeLocked reports whether a pause lasts at now, ending one whose
// end passed before its timer ran.
func (p *pauseState) activeLocked(now time.Time) bool {
	if p.mode != pauseOff && !now.Before(p.end) {
		p.endLocked()
	}
	return p.mode != pauseOff
}

// endLocked ends the pause and wakes every held client, which checks
// again (unblockPostponedClients).
func (p *pauseState) endLocked() {
	p.mode = pauseOff
	p.on.Store(false)
	p.gen++
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	if p.ended != nil {
		close(p.ended)
		p.ended = nil
	}
}

// holding reports whether a command that may replicate (mayReplicate)
// or another is held now, and the channel closed when the pause ends.
func (p *pauseState) holding(mayReplicate func() bool) (<-chan struct{}, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || !p.activeLocked(time.Now()) {
		return nil, false
	}
	if p.mode == pauseAll || mayReplicate() {
		return p.ended, true
	}
	return nil, false
}

// clientPause: CLIENT PAUSE timeout [WRITE|ALL], checked as Redis 7.0's
// clientCommand: the mode before the timeout (integer milliseconds).
func (c *conn) clientPause(args [][]byte) {
	if len(args) > 4 { // past client|pause's arity -3, Redis's subcommand syntax error
		c.w.Error(errSubcommandSyntax("CLIENT", args[1]))
		return
	}
	mode := pauseAll
	if len(args) == 4 {
		switch strings.ToLower(string(args[3])) {
		case "write":
			mode = pauseWrite
		case "all":
		default:
			c.w.Error(errPauseMode)
			return
		}
	}
	d, msg := parseTimeoutMs(args[2])
	if msg != "" {
		c.w.Error(msg)
		return
	}
	c.s.pause.pause(d, mode)
	c.w.OK()
}

// mayReplicate reports whether a pause WRITE holds cmd with args:
// Redis's is_may_replicate_command, a command flagged write or
// may_replicate (PUBLISH, PFCOUNT, WAIT, EVAL, FCALL...), EVAL, EVALSHA
// and their _RO forms by the script's shebang flags when it has one
// (written unless no-writes; evalGetCommandFlags, scriptFlagsToCmdFlags),
// and EXEC when
// a queued command is.
func (c *conn) mayReplicate(cmd *command, args [][]byte) bool {
	switch {
	case cmd.txControl && cmd.name == "exec":
		return c.txMayReplicate(&c.tx)
	case (cmd.name == "eval" || cmd.name == "evalsha" || cmd.name == "eval_ro" || cmd.name == "evalsha_ro") && len(args) > 1:
		own := cmd.write || cmd.mayReplicate // EVAL's may_replicate; EVAL_RO's none
		var f script.Flags
		if cmd.name == "eval" || cmd.name == "eval_ro" {
			var ok bool
			if f, ok = script.ShebangFlags(args[1]); !ok {
				return own
			}
		} else if sc := c.s.scr.eng.Get(args[1]); sc != nil {
			f = sc.Flags
		} else {
			return own
		}
		if f&script.FlagCompat != 0 {
			return own
		}
		return f&script.FlagNoWrites == 0 // scriptFlagsToCmdFlags: write unless no-writes, _RO too
	}
	if sub := cmd.subcommand(args); sub != nil {
		cmd = sub
	}
	return cmd.write || cmd.mayReplicate
}

// pauseExclusive: CLIENT PAUSE runs holding the transaction lock
// exclusively, so that a command already running ends before its +OK
// (the commands that wait for the lock meanwhile look again: pausedSince).
func pauseExclusive(args [][]byte) bool {
	return len(args) > 1 && strings.EqualFold(string(args[1]), "pause")
}

// pausedSince reports whether a pause that began while c waited for the
// transaction lock covers cmd; the caller, holding the lock, lets it go
// and holds the command (holdWhilePaused), so that no command it covers
// runs after CLIENT PAUSE answered (S97).
func (c *conn) pausedSince(cmd *command, args [][]byte) bool {
	if !c.s.pause.on.Load() {
		return false
	}
	_, held := c.s.pause.holding(func() bool { return c.mayReplicate(cmd, args) })
	return held
}

// txMayReplicate reports whether a command tx queued may replicate.
func (c *conn) txMayReplicate(tx *txState) bool {
	for i, q := range tx.cmds {
		if c.mayReplicate(q, tx.args[i]) {
			return true
		}
	}
	return false
}

// txPausedSince is pausedSince for an EXEC of tx, taken off c.tx.
func (c *conn) txPausedSince(tx *txState) bool {
	_, held := c.s.pause.holding(func() bool { return c.txMayReplicate(tx) })
	return held
}

// holdWhilePaused holds cmd while a pause covers it, as a blocked client
// waits, then reports whether it may run: false when the client was
// killed, hung up or the server shuts down while it was held.
func (c *conn) holdWhilePaused(cmd *command, args [][]byte) bool {
	p := &c.s.pause
	if !p.on.Load() {
		return true // no pause: no lock taken
	}
	ended, held := p.holding(func() bool { return c.mayReplicate(cmd, args) })
	if !held {
		return true
	}
	c.cmd, c.sub = cmd, cmd.subcommand(args) // CLIENT LIST's cmd= is the held command, as Redis's lastcmd
	c.showIdle()
	if c.s.timing.Load() && c.pending > 0 && c.rd.Reads() == c.timedReads {
		c.observePending(nil) // the runs pipelined before it, timed without the hold
	}
	c.flush() // the replies before this one go out now
	c.blockedNow.Store(true)
	c.s.blk.waiting.Add(1)
	defer func() {
		c.s.blk.waiting.Add(-1)
		c.blockedNow.Store(false)
	}()
	c.push.used.Store(true) // pushes are written while it waits, as awaitBlocked
	c.markIdle()
	defer c.endIdle()
	hup, stop := c.watchHangup()
	defer stop()
	for held {
		select {
		case <-ended:
		case <-hup:
			c.quit = true
			return false
		case <-c.killed:
			c.quit = true
			return false
		}
		p.mu.Lock()
		closed := p.closed
		p.mu.Unlock()
		if closed {
			c.quit = true
			return false
		}
		ended, held = p.holding(func() bool { return c.mayReplicate(cmd, args) })
	}
	if c.s.timing.Load() && c.pending == 0 {
		// The command's time starts now, not before the hold, as Redis
		// processes a postponed command anew once unblocked.
		c.mark, c.timedReads = c.s.clock(), c.rd.Reads()
	}
	return true
}

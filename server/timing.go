package server

import "time"

// observeLater says whether the command cmd that just ran (counted in
// c.pending) may be observed together with the same commands after it:
// when more input is already buffered and fewer than pendingMax are
// waiting, and cmd neither nests commands (EXEC, whose own commands are
// timed one by one), runs inside EXEC or a script, nor blocked (the wait
// is not its time).
func (c *conn) observeLater(cmd *command) bool {
	return c.pending < pendingMax && !cmd.txControl && !c.inExec && c.blocked == nil && c.rd.Buffered() > 0
}

// pendingMax is how many pipelined commands share one clock read at
// most: the cache's time a command sees (conn.now, taken before the
// first of them) is at most that many commands late, as a GET run's is
// (getRunClockEvery).
const pendingMax = 16

// observePending records the c.pending runs of c.pendingCmd not yet
// observed, each with an equal share of the time since mark, which
// becomes now, and logs the run in the slow log if that share is slow
// (args: its last command's, if at hand; nil: those keepArgs kept).
func (c *conn) observePending(args [][]byte) {
	n := c.pending
	if n == 0 {
		return
	}
	c.pending = 0
	t := c.s.clock()
	share := (t - c.mark) / time.Duration(n)
	st := &c.pendingCmd.stats
	if c.pendingCmd.subs != nil {
		st = c.pendingSt // a container's subcommand (run)
	}
	st.nanos.Add(uint64(max(share, 0)) * uint64(n))
	if c.pendingCmd.observe != nil {
		c.pendingCmd.observe(share, n)
	}
	if !c.refused {
		c.observeLatency(c.pendingCmd, st, share, n) // latency.go
	}
	if int64(share) >= c.s.slow.atLeast.Load() {
		c.logSlow(c.pendingCmd, args, share)
	}
	c.dropKept()
	c.mark = t
}

// deferBlocked holds back the observation of cmd, which blocked: Redis
// times, counts and logs a blocked command once it is served or times out
// (blocked.c updateStatsOnUnblock), with the time it ran before and after
// the wait, not the wait (S80). The runs pipelined before it are observed
// now; its slow log entry is made now, while its arguments are at hand.
func (c *conn) deferBlocked(cmd *command, args [][]byte) {
	c.observePending(nil)
	c.blockCmd, c.blockRan, c.blockEntry = cmd, c.s.clock()-c.mark, nil
	c.s.commandEvent(cmd, &cmd.stats, c.blockRan) // call()'s sample, before the wait (latency.go)
	if c.s.slow.on() && !cmd.skipSlowlog {
		e := c.slowEntryOf(cmd, args, len(args), 0)
		c.blockEntry = &e
	}
}

// observeBlocked observes the blocked command deferBlocked held back, now
// answered, woke being when its wait ended; the commands after it are
// timed from now, so the wait is no command's time.
func (c *conn) observeBlocked(woke time.Duration) {
	cmd, e := c.blockCmd, c.blockEntry
	c.blockCmd, c.blockEntry = nil, nil
	if cmd == nil {
		return
	}
	now := c.s.clock()
	d := max(c.blockRan+now-woke, 0)
	if cmd.observe != nil {
		cmd.observe(d, 1)
	}
	cmd.stats.nanos.Add(uint64(d))
	if c.s.lat.tracking.Load() {
		cmd.stats.record(d, 1)
	}
	c.s.lat.add("command-unblocking", now-woke)
	if e != nil && int64(d) >= c.s.slow.atLeast.Load() {
		e.unix, e.micros = time.Now().Unix(), int64(d/time.Microsecond)
		c.s.slow.add(*e)
	}
	c.mark = now
}

package server

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// cmdStats are one command's INFO commandstats counters, as Redis 7.0's
// (server.c genRedisInfoStringCommandStats): the calls that ran, their
// time, the calls refused before running (rejected) and the calls that
// ran and answered an error (failed, also counted in calls). Every
// connection adds to them. hist is its latency histogram, nil until its
// first call timed while latency-tracking is on (latency_hist.go).
type cmdStats struct {
	calls, nanos, rejected, failed atomic.Uint64
	hist                           atomic.Pointer[latencyHist]
}

// countCall counts a run that just ended in st, its command's or
// subcommand's counters (statsOf): rejected if it answered
// an error Redis gives before a command runs (c.refused: its arguments'
// count, an unknown subcommand), else a call, failed if it answered an
// error of its own since errMark, or gave another client one
// (errElsewhere: CLIENT UNBLOCK ERROR, as Redis counts the error replies
// added while a command runs, S91). errMark then moves past its errors, so
// that EXEC is not failed by a command it ran (Redis's
// incrCommandStatsOnError keeps the count the same way).
//
// A call, not a refusal, also counts in total_commands_processed, as
// Redis's call() counts stat_numcommands: a command refused before it ran
// (unknown, wrong arity, -LOADING ...) or queued in MULTI is not counted
// there, a queued one counts when EXEC runs it, and a script's redis.call
// counts on the connection that ran the script (S110).
func (c *conn) countCall(st *cmdStats) {
	errs := c.w.Errors()
	switch {
	case c.refused:
		st.rejected.Add(1)
	case errs != c.errMark || c.errElsewhere:
		st.calls.Add(1)
		st.failed.Add(1)
		c.countProcessed()
	default:
		st.calls.Add(1)
		c.countProcessed()
	}
	c.errMark = errs
}

// countProcessed counts one command run in total_commands_processed: on
// the connection, or on the one whose script ran it.
func (c *conn) countProcessed() {
	if c.scriptOf != nil {
		c.scriptOf.st.commands.Add(1)
		return
	}
	c.st.commands.Add(1)
}

// countGets counts n GETs a run answered without run (getRun, getBatch)
// in GET's commandstats, failed as many as errors were answered since
// errs.
func (c *conn) countGets(n int, errs uint64) {
	st := &c.s.get.stats
	st.calls.Add(uint64(n))
	if e := c.w.Errors() - errs; e > 0 {
		st.failed.Add(e)
	}
	c.errMark = c.w.Errors()
}

// writeCommandStats writes INFO's commandstats section: a line for each
// command called, rejected or failed since the start, by name. The time
// is what the latency histograms and the slow log measure, so it is
// counted only while commands are timed (slowlog-log-slower-than not -1,
// or latency metrics on); a container's subcommand counts under its own
// name, as Redis 7.0 names CLIENT LIST "client|list" (S87).
func (s *Server) writeCommandStats(b *strings.Builder) {
	b.WriteString("# Commandstats\r\n")
	var shown []*command
	add := func(cmd *command) {
		if cmd.stats.calls.Load() > 0 || cmd.stats.rejected.Load() > 0 || cmd.stats.failed.Load() > 0 {
			shown = append(shown, cmd)
		}
	}
	for _, cmd := range s.cmds {
		add(cmd)
		for _, sub := range cmd.subs {
			add(sub)
		}
	}
	slices.SortFunc(shown, func(a, b *command) int { return strings.Compare(a.name, b.name) })
	for _, cmd := range shown {
		st := &cmd.stats
		calls, us := st.calls.Load(), st.nanos.Load()/uint64(time.Microsecond)
		per := 0.0
		if calls > 0 {
			per = float64(us) / float64(calls)
		}
		fmt.Fprintf(b, "cmdstat_%s:calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d\r\n",
			cmd.name, calls, us, per, st.rejected.Load(), st.failed.Load())
	}
}

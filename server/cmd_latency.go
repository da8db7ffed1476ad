package server

import (
	"slices"
	"strings"
)

// cmdLatency: LATENCY LATEST | HISTORY event | RESET [event ...] | GRAPH
// event | DOCTOR | HISTOGRAM [command ...] | HELP, with redis-server 7.0's
// replies (latency.c latencyCommand). The subcommand table checks each
// subcommand's arity first (subcommands.go), as Redis's does; the events
// are listed by name where Redis lists them in its dictionary's order.
func (c *conn) cmdLatency(args [][]byte) {
	lat := &c.s.lat
	switch strings.ToLower(string(args[1])) {
	case "latest":
		evs := lat.snapshot("", true)
		c.w.Array(len(evs))
		for _, ev := range evs {
			last := ev.latest()
			c.w.Array(4)
			c.w.BulkString(ev.name)
			c.w.Int(last.unix)
			c.w.Int(last.ms)
			c.w.Int(ev.max)
		}
	case "history":
		var samples []latencySample
		if evs := lat.snapshot(string(args[2]), false); len(evs) == 1 {
			samples = evs[0].samples
		}
		c.w.Array(len(samples))
		for _, s := range samples {
			c.w.Array(2)
			c.w.Int(s.unix)
			c.w.Int(s.ms)
		}
	case "graph":
		evs := lat.snapshot(string(args[2]), false)
		if len(evs) != 1 {
			c.w.Error(errLatencyNoSamples(args[2]))
			return
		}
		c.w.Verbatim("txt", latencyGraph(&evs[0], nowUnix()))
	case "doctor":
		c.w.Verbatim("txt", c.s.latencyReport())
	case "reset":
		var names []string
		for _, a := range args[2:] {
			names = append(names, string(a))
		}
		c.w.Int(int64(lat.reset(names)))
	case "histogram":
		c.latencyHistogram(args[2:])
	default: // help
		c.w.Array(len(latencyHelp))
		for _, l := range latencyHelp {
			c.w.Simple(l)
		}
	}
}

// latencyHistogram answers LATENCY HISTOGRAM: a map of each command's
// and subcommand's histogram (those that have one), or, with names,
// those of the commands named (full names: "config|get") and of their
// subcommands, a name that is no command skipped (latency.c
// latencyAllCommandsFillCDF, latencySpecificCommandsFillCDF).
func (c *conn) latencyHistogram(names [][]byte) {
	type entry struct {
		name string
		v    *histView
	}
	var out []entry
	add := func(cmd *command) {
		if h := cmd.stats.hist.Load(); h != nil {
			out = append(out, entry{cmd.name, h.view()})
		}
	}
	addWithSubs := func(cmd *command) {
		add(cmd)
		for _, sub := range cmd.sortedSubcommands() {
			add(sub)
		}
	}
	if len(names) == 0 {
		for _, n := range c.sortedCommands() {
			addWithSubs(c.s.cmds[n])
		}
	}
	for _, n := range names {
		if cmd := c.s.byFullName(string(n)); cmd != nil {
			addWithSubs(cmd)
		}
	}
	c.w.Map(len(out))
	for _, e := range out {
		c.w.BulkString(e.name)
		c.w.Map(2)
		c.w.BulkString("calls")
		c.w.Int(int64(e.v.total))
		c.w.BulkString("histogram_usec")
		steps := e.v.cdf()
		c.w.Map(len(steps))
		for _, s := range steps {
			c.w.Int(s.usec)
			c.w.Int(s.calls)
		}
	}
}

// writeLatencyStats writes INFO's latencystats section: each command's
// and subcommand's percentiles (latency-tracking-info-percentiles) in µs,
// while latency-tracking is on (server.c genRedisInfoStringLatencyStats,
// fillPercentileDistributionLatencies), by name.
func (s *Server) writeLatencyStats(b *strings.Builder) {
	b.WriteString("# Latencystats\r\n")
	if !s.lat.tracking.Load() {
		return
	}
	ps := *s.lat.percentiles.Load()
	var cmds []*command
	for _, cmd := range s.cmds {
		cmds = append(cmds, cmd)
		for _, sub := range cmd.subs {
			cmds = append(cmds, sub)
		}
	}
	slices.SortFunc(cmds, func(a, b *command) int { return strings.Compare(a.name, b.name) })
	for _, cmd := range cmds {
		h := cmd.stats.hist.Load()
		if h == nil {
			continue
		}
		v := h.view()
		b.WriteString("latency_percentiles_usec_" + cmd.name + ":")
		for i, p := range ps {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("p" + percentileName(p) + "=" + formatMicros(v.percentile(p)))
		}
		b.WriteString("\r\n")
	}
}

// latencyHelp is LATENCY HELP's answer, redis-server 7.0's.
var latencyHelp = []string{
	"LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"DOCTOR",
	"    Return a human readable latency analysis report.",
	"GRAPH <event>",
	"    Return an ASCII latency graph for the <event> class.",
	"HISTORY <event>",
	"    Return time-latency samples for the <event> class.",
	"LATEST",
	"    Return the latest latency samples for all events.",
	"RESET [<event> ...]",
	"    Reset latency data of one or more <event> classes.",
	"    (default: reset all data for all event classes)",
	"HISTOGRAM [COMMAND ...]",
	"    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
	"    If no commands are specified then all histograms are replied.",
	"HELP",
	"    Prints this help.",
}

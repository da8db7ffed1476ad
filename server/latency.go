package server

import (
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The latency monitor, as redis-server 7.0's (latency.c, latency.h): while
// latency-monitor-threshold is above 0 ms, an event that took at least
// that long adds a sample to its series, at most one a second (the
// second's longest) and the last latencySeriesLen of them, with the
// longest since the series began. tiercache's events are the ones of its
// own that block a client as Redis's do:
//   - "command" and "fast-command": a command (one flagged fast) that ran
//     at least the threshold, by the time its observation measures
//     (timing.go: a pipelined run of the same command is its share of the
//     run's time, S51), as Redis's call(), a script's commands too (S111);
//   - "command-unblocking": a blocked command's time from its wake to its
//     reply, as Redis's updateStatsOnUnblock.
//
// Redis's other events (fork, AOF, RDB, expire-cycle, eviction) have no
// counterpart that blocks a client: tiercache does not fork or write an
// AOF, and its expiry sweep and eviction run beside the commands (tier/).

// latencySeriesLen is LATENCY_TS_LEN: the samples a series keeps.
const latencySeriesLen = 160

// latencySample is one second's longest event (latencySample).
type latencySample struct {
	unix int64 // 0: empty
	ms   int64
}

// latencySeries is one event's samples, a ring (latencyTimeSeries).
type latencySeries struct {
	idx     int // the next sample's
	max     int64
	samples [latencySeriesLen]latencySample
}

// latencyMonitor holds the events' series, latency-monitor-threshold and
// the latency tracking settings (latency_hist.go).
type latencyMonitor struct {
	thresholdMs atomic.Int64 // latency-monitor-threshold; 0: off
	// atLeast is the threshold in ns, math.MaxInt64 while off: the one
	// value an observation reads.
	atLeast  atomic.Int64
	tracking atomic.Bool // latency-tracking
	// percentiles are latency-tracking-info-percentiles.
	percentiles atomic.Pointer[[]float64]

	mu     sync.Mutex
	events map[string]*latencySeries
}

// Redis 7.0's defaults (config.c; server.c initServerConfig).
var defaultLatencyPercentiles = []float64{50, 99, 99.9}

// init sets the three settings from Options (defaulted: Redis's, S112).
func (m *latencyMonitor) init(o *Options) {
	m.setThreshold(o.LatencyMonitorThreshold)
	m.tracking.Store(o.LatencyTracking)
	p := slices.Clone(o.LatencyTrackingInfoPercentiles)
	if p == nil {
		p = []float64{}
	}
	m.percentiles.Store(&p)
}

// setThreshold sets latency-monitor-threshold (ms).
func (m *latencyMonitor) setThreshold(ms int64) {
	m.thresholdMs.Store(ms)
	switch {
	case ms <= 0:
		m.atLeast.Store(math.MaxInt64)
	case ms > math.MaxInt64/int64(time.Millisecond):
		m.atLeast.Store(math.MaxInt64 - 1) // longer than a Duration holds: never, in practice
	default:
		m.atLeast.Store(ms * int64(time.Millisecond))
	}
}

// add adds a sample of event, d long, if the monitor is on and d reaches
// its threshold (latencyAddSampleIfNeeded with a time in ms).
func (m *latencyMonitor) add(event string, d time.Duration) {
	if int64(d) < m.atLeast.Load() {
		return
	}
	m.addSample(event, int64(d/time.Millisecond), time.Now().Unix())
}

// addSample is latencyAddSample: the series is made at its first sample;
// a sample in the second of the one before replaces it if longer.
func (m *latencyMonitor) addSample(event string, ms, now int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.events == nil {
		m.events = map[string]*latencySeries{}
	}
	ts := m.events[event]
	if ts == nil {
		ts = new(latencySeries)
		m.events[event] = ts
	}
	ts.max = max(ts.max, ms)
	prev := &ts.samples[(ts.idx+latencySeriesLen-1)%latencySeriesLen]
	if prev.unix == now {
		prev.ms = max(prev.ms, ms)
		return
	}
	ts.samples[ts.idx] = latencySample{unix: now, ms: ms}
	ts.idx = (ts.idx + 1) % latencySeriesLen
}

// reset drops the series of the events named (any case), or all of them
// (none named), and answers how many it dropped (latencyResetEvent).
func (m *latencyMonitor) reset(names []string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	if names == nil {
		n = len(m.events)
		clear(m.events)
		return n
	}
	for _, name := range names {
		for ev := range m.events {
			if strings.EqualFold(ev, name) {
				delete(m.events, ev)
				n++
			}
		}
	}
	return n
}

// latencyEvent is a series read out: its samples oldest first.
type latencyEvent struct {
	name    string
	max     int64
	samples []latencySample
}

// snapshot reads the series of event (exact name; all when all), by
// name.
func (m *latencyMonitor) snapshot(event string, all bool) []latencyEvent {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []latencyEvent
	for name, ts := range m.events {
		if !all && name != event {
			continue
		}
		ev := latencyEvent{name: name, max: ts.max}
		for j := range latencySeriesLen {
			if s := ts.samples[(ts.idx+j)%latencySeriesLen]; s.unix != 0 {
				ev.samples = append(ev.samples, s)
			}
		}
		out = append(out, ev)
	}
	slices.SortFunc(out, func(a, b latencyEvent) int { return strings.Compare(a.name, b.name) })
	return out
}

// latest is the event's newest sample.
func (ev *latencyEvent) latest() latencySample {
	if len(ev.samples) == 0 {
		return latencySample{}
	}
	return ev.samples[len(ev.samples)-1]
}

// commandEvent samples a run of cmd (the container; st the counters it
// counted in) that took d each: "fast-command" when the command or
// subcommand run is flagged fast, else "command" (server.c call()).
func (s *Server) commandEvent(cmd *command, st *cmdStats, d time.Duration) {
	if int64(d) < s.lat.atLeast.Load() {
		return
	}
	real := cmd
	for _, sub := range cmd.subs {
		if &sub.stats == st {
			real = sub
		}
	}
	event := "command"
	if slices.Contains(real.flags, "fast") {
		event = "fast-command"
	}
	s.lat.add(event, d)
}

// retime times commands while the slow log, the latency monitor, latency
// tracking or Options.ObserveLatency needs it.
func (s *Server) retime() {
	s.timing.Store(s.opts.ObserveLatency != nil || s.slow.on() || s.lat.tracking.Load() || s.lat.thresholdMs.Load() > 0)
}

// observeLatency records n runs of cmd (st: the counters they count in)
// of d each in its latency histogram while latency-tracking is on, and
// samples the command event, a script's commands too, as Redis's call()
// samples them (scriptCall calls it with CMD_CALL_SLOWLOG).
func (c *conn) observeLatency(cmd *command, st *cmdStats, d time.Duration, n int) {
	if c.s.lat.tracking.Load() {
		st.record(d, n)
	}
	c.s.commandEvent(cmd, st, d)
}

package server

import "time"

// resetStats is CONFIG RESETSTAT, as redis-server 7.0's
// configResetStatCommand (config.c): resetServerStats (server.c),
// resetCommandTableStats and resetErrorTableStats. INFO commandstats and
// errorstats start over (their counters are zeroed: /metrics exports
// neither). The counters of Stats that resetServerStats zeroes are also
// /metrics' Prometheus counters, which must never go down, so they keep
// counting: INFO subtracts the baseline taken here (sinceReset), and
// Snapshot (/metrics, the status page) stays cumulative (S96). The
// instantaneous rates start over, on /metrics too (they are gauges).
func (s *Server) resetStats() {
	base := s.Stats()
	s.statBase.Store(&base)
	s.inst.reset(time.Now(), [instCount]uint64{instOps: base.CommandsProcessed, instIn: base.NetInputBytes, instOut: base.NetOutputBytes})
	for _, cmd := range s.cmds {
		cmd.stats.reset()
		for _, sub := range cmd.subs {
			sub.stats.reset()
		}
	}
	s.errs.reset()
}

// infoSnapshot is the snapshot INFO prints: Snapshot with the counters
// CONFIG RESETSTAT resets counted from the last one. The baseline is
// loaded before the counters are read, so each counter read is at least
// its baseline (they only grow, TestStatsNeverGoBack).
func (s *Server) infoSnapshot() Snapshot {
	base := s.statBase.Load()
	snap := s.Snapshot()
	if base != nil {
		snap.Server.sinceReset(base)
	}
	return snap
}

// sinceReset makes st's counters that redis-server 7.0's resetServerStats
// zeroes count from base: total_connections_received
// (stat_numconnections), total_commands_processed (stat_numcommands),
// total_net_input_bytes and total_net_output_bytes (stat_net_input_bytes,
// stat_net_output_bytes), rejected_connections (stat_rejected_conn),
// expired_keys (stat_expiredkeys), evicted_keys (stat_evictedkeys),
// keyspace_hits and keyspace_misses, total_error_replies
// (stat_total_error_replies) and total_error_replies_protocol, a part of
// it, total_reads_processed and total_writes_processed
// (stat_total_reads_processed, stat_total_writes_processed). The
// instantaneous_* rates start over in resetStats; the other fields Redis
// resets that INFO prints are always 0 here (expired_time_cap_reached_count,
// evicted_clients, latest_fork_usec, total_forks, sync_*,
// unexpected_error_replies, io_threaded_*); tiercache's own counters keep
// counting.
func (st *Stats) sinceReset(base *Stats) {
	b := base.resetCounters()
	for i, n := range st.resetCounters() {
		*n -= min(*n, *b[i])
	}
}

// resetCounters are st's counters that sinceReset counts from a reset.
func (st *Stats) resetCounters() []*uint64 {
	return []*uint64{&st.TotalConnections, &st.CommandsProcessed, &st.NetInputBytes, &st.NetOutputBytes,
		&st.RejectedConns, &st.ExpiredKeys, &st.EvictedKeys, &st.KeyspaceHits, &st.KeyspaceMisses,
		&st.ErrorReplies, &st.ProtocolErrors, &st.ReadsProcessed, &st.WritesProcessed}
}

// reset zeroes one command's commandstats and drops its latency histogram
// (resetCommandTableStats, which closes it in 7.0). A call that ends while
// it runs may count in part before and in part after.
func (st *cmdStats) reset() {
	st.hist.Store(nil)
	st.calls.Store(0)
	st.nanos.Store(0)
	st.rejected.Store(0)
	st.failed.Store(0)
}

// reset zeroes errorstats (resetErrorTableStats).
func (e *errorCounts) reset() {
	for i := range e.n {
		e.n[i].Store(0)
	}
}

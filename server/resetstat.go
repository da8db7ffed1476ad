package server

// resetStats is CONFIG RESETSTAT, as redis-server 7.0's
// configResetStatCommand (config.c): resetServerStats (server.c),
// resetCommandTableStats and resetErrorTableStats. INFO commandstats and
// errorstats start over (their counters are zeroed: /metrics exports
// neither). The counters of Stats that resetServerStats zeroes are also
// /metrics' Prometheus counters, which must never go down, so they keep
// counting: INFO subtracts the baseline taken here (sinceReset), and
// Snapshot (/metrics, the status page) stays cumulative (S96).
func (s *Server) resetStats() {
	base := s.Stats()
	s.statBase.Store(&base)
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
// rejected_connections (stat_rejected_conn), keyspace_hits and
// keyspace_misses, and total_error_replies_protocol, a part of Redis's
// total_error_replies (stat_total_error_replies). INFO prints none of
// Redis's other reset fields (expired_keys, evicted_keys, total_net_*,
// instantaneous_*); tiercache's own counters keep counting.
func (st *Stats) sinceReset(base *Stats) {
	since := func(n *uint64, b uint64) {
		if *n >= b {
			*n -= b
		} else {
			*n = 0
		}
	}
	since(&st.TotalConnections, base.TotalConnections)
	since(&st.CommandsProcessed, base.CommandsProcessed)
	since(&st.RejectedConns, base.RejectedConns)
	since(&st.KeyspaceHits, base.KeyspaceHits)
	since(&st.KeyspaceMisses, base.KeyspaceMisses)
	since(&st.ProtocolErrors, base.ProtocolErrors)
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

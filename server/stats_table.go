package server

// statsTable is every counter INFO prints in its clients, stats and tiers
// sections and cmd/tiercache exports on /metrics (as tiercache_<Metric>):
// both are generated from it, so their names and sets cannot drift (S13).
// Adding a counter is adding a row. A field of tier.Stats, flusher.Stats,
// tier.TierLevel or Stats that no row reads is listed, with the reason,
// in notExported (stats_table_test.go).
//
// Names: a metric is its INFO field, with tier_ before a per-tier row's,
// _total after a counter's and _info after a text's (TestStatsTableNames);
// the fields Redis defines, and names older than the table, keep theirs
// (legacyNames there).
var statsTable = []Stat{
	{"persistence", "loading", "loading", StatGauge, "", "1 while the cache opens (the cold store's index is rebuilt): commands that touch data answer -LOADING.", func(v statView) StatValue { return ofBool(v.Server.Loading) }},

	{"clients", "connected_clients", "connected_clients", StatGauge, "", "Open client connections.", func(v statView) StatValue { return ofInt(v.Server.ConnectedClients) }},

	{"stats", "total_connections_received", "connections_total", StatCounter, "", "Client connections accepted.", func(v statView) StatValue { return ofUint(v.Server.TotalConnections) }},
	{"stats", "total_commands_processed", "commands_total", StatCounter, "", "Commands processed.", func(v statView) StatValue { return ofUint(v.Server.CommandsProcessed) }},
	{"stats", "rejected_connections", "rejected_connections_total", StatCounter, "", "Connections refused at the client limit.", func(v statView) StatValue { return ofUint(v.Server.RejectedConns) }},
	{"stats", "keyspace_hits", "keyspace_hits_total", StatCounter, "", "Keys read and found (GET, MGET and the like).", func(v statView) StatValue { return ofUint(v.Server.KeyspaceHits) }},
	{"stats", "keyspace_misses", "keyspace_misses_total", StatCounter, "", "Keys read and not found.", func(v statView) StatValue { return ofUint(v.Server.KeyspaceMisses) }},
	{"stats", "total_error_replies_protocol", "protocol_errors_total", StatCounter, "", "Connections closed for a protocol error.", func(v statView) StatValue { return ofUint(v.Server.ProtocolErrors) }},
	{"stats", "client_output_buffer_limit_disconnections", "output_limit_disconnections_total", StatCounter, "", "Connections closed because their unread replies passed server.max_output_buffer.", func(v statView) StatValue { return ofUint(v.Server.OutputLimitCloses) }},
	{"stats", "cold_get_batches", "cold_get_batches_total", StatCounter, "", "Pipelined GETs answered together after a GET that read the cold device.", func(v statView) StatValue { return ofUint(v.Server.ColdGetBatches) }},
	{"stats", "cold_get_batched", "cold_get_batched_total", StatCounter, "", "GETs answered in such batches.", func(v statView) StatValue { return ofUint(v.Server.ColdGetBatched) }},

	{"tiers", "items", "tier_items", StatGauge, TierLabel, "Items held by each tier (-1 unknown).", func(v statView) StatValue { return ofInt(v.Level.Items) }},
	{"tiers", "bytes", "tier_bytes", StatGauge, TierLabel, "Bytes held by each tier (-1 unknown).", func(v statView) StatValue { return ofInt(v.Level.Bytes) }},
	{"tiers", "hits", "tier_hits_total", StatCounter, TierLabel, "Reads served by each tier.", func(v statView) StatValue { return ofUint(v.Level.Hits) }},
	{"tiers", "misses", "tier_misses_total", StatCounter, TierLabel, "Reads that fell through each tier.", func(v statView) StatValue { return ofUint(v.Level.Misses) }},
	{"tiers", "evictions", "tier_evictions_total", StatCounter, TierLabel, "Items evicted from each tier.", func(v statView) StatValue { return ofUint(v.Level.Evictions) }},
	{"tiers", "keys", "keys", StatGauge, "", "Keys in the cache, counting expired keys not yet swept.", func(v statView) StatValue { return ofInt(v.Cache.Keys) }},
	{"tiers", "promotions", "promotions_total", StatCounter, "", "Warm hits moved to hot, and cold hits given a DRAM record.", func(v statView) StatValue { return ofUint(v.Cache.Promotions) }},
	{"tiers", "demotions", "demotions_total", StatCounter, "", "Hot records moved to warm when hot was cleaned.", func(v statView) StatValue { return ofUint(v.Cache.Demotions) }},
	{"tiers", "cold_kept", "cold_kept_total", StatCounter, "", "DRAM evictions not written to cold because cold held that version already.", func(v statView) StatValue { return ofUint(v.Cache.ColdKept) }},
	{"tiers", "dram_flushed", "dram_flushed_total", StatCounter, "", "DRAM evictions written to cold from where they are.", func(v statView) StatValue { return ofUint(v.Cache.Flushed) }},
	{"tiers", "dram_capacity_bytes", "dram_capacity_bytes", StatGauge, "", "Key and value bytes the DRAM tiers' eviction policy may keep (hot + warm less the segments their cleaning keeps free, less 1%).", func(v statView) StatValue { return ofInt(v.Cache.DRAM.Capacity) }},
	{"tiers", "dram_used_bytes", "dram_used_bytes", StatGauge, "", "Key and value bytes the DRAM tiers' eviction policy keeps.", func(v statView) StatValue { return ofInt(v.Cache.DRAM.Weight) }},
	{"tiers", "dram_items", "dram_items", StatGauge, "", "Keys the DRAM tiers hold.", func(v statView) StatValue { return ofInt(int64(v.Cache.DRAM.Items)) }},
	{"tiers", "dram_rescued", "dram_rescued_total", StatCounter, "", "Hot records kept in hot by a cleaning of hot because they were read since they were written.", func(v statView) StatValue { return ofUint(v.Cache.DRAM.Rescued) }},
	{"tiers", "dram_dropped", "dram_dropped_total", StatCounter, "", "DRAM records a cleaning found no room for in hot or warm (evicted; expected 0).", func(v statView) StatValue { return ofUint(v.Cache.DRAM.Dropped) }},
	{"tiers", "dram_admits", "dram_admits_total", StatCounter, "", "New keys admitted to DRAM's main space over a less frequent key (W-TinyLFU).", func(v statView) StatValue { return ofUint(v.Cache.DRAM.Admits) }},
	{"tiers", "dram_rejects", "dram_rejects_total", StatCounter, "", "New keys evicted from DRAM because a more frequent key kept its place.", func(v statView) StatValue { return ofUint(v.Cache.DRAM.Rejects) }},
	{"tiers", "dram_forced", "dram_forced_total", StatCounter, "", "Times the DRAM tiers' eviction policy evicted below its capacity because no segment was worth cleaning.", func(v statView) StatValue { return ofUint(v.Cache.DRAM.Forced) }},
	{"tiers", "dram_compacted", "dram_compacted_total", StatCounter, "", "DRAM records moved within their log to take back the space of dead ones.", func(v statView) StatValue { return ofUint(v.Cache.DRAM.Compacted) }},
	{"tiers", "flusher_queue", "flusher_queue_items", StatGauge, "", "Items waiting in the flusher queue.", func(v statView) StatValue { return ofInt(v.Cache.Flusher.Queue) }},
	{"tiers", "flusher_queue_bytes", "flusher_queue_bytes", StatGauge, "", "Bytes waiting in the flusher queue.", func(v statView) StatValue { return ofInt(v.Cache.Flusher.QueueBytes) }},
	{"tiers", "flusher_batches", "flusher_batches_total", StatCounter, "", "Device submissions made by the flusher.", func(v statView) StatValue { return ofUint(v.Cache.Flusher.Batches) }},
	{"tiers", "flusher_written", "flusher_written_total", StatCounter, "", "Items the cold store acknowledged.", func(v statView) StatValue { return ofUint(v.Cache.Flusher.Written) }},
	{"tiers", "flusher_bytes", "flusher_bytes_total", StatCounter, "", "Bytes the cold store acknowledged.", func(v statView) StatValue { return ofUint(v.Cache.Flusher.Bytes) }},
	{"tiers", "flusher_drops", "flusher_drops_total", StatCounter, "", "Cold admissions dropped because the flusher was behind.", func(v statView) StatValue { return ofUint(v.Cache.Flusher.Drops) }},
	{"tiers", "flusher_rejected", "flusher_rejected_total", StatCounter, "", "Cold admissions refused by the flash write budget.", func(v statView) StatValue { return ofUint(v.Cache.Flusher.Rejected) }},
	{"tiers", "flusher_throttled", "flusher_throttled_total", StatCounter, "", "Writes that waited for the flusher to drain below half its queue bound.", func(v statView) StatValue { return ofUint(v.Cache.Flusher.Throttled) }},
	{"tiers", "flusher_throttle_ms", "flusher_throttle_seconds_total", StatCounter, "", "Time writes waited for the flusher, in all.", func(v statView) StatValue { return millis(v.Cache.Flusher.ThrottleWait) }},
	{"tiers", "flusher_errors", "flusher_errors_total", StatCounter, "", "Cold writes that failed (the items are dropped: see lost_total).", func(v statView) StatValue { return ofUint(v.Cache.Flusher.Errors) }},
	{"tiers", "lost", "lost_total", StatCounter, "", "Keys forgotten because their only copy was dropped or failed.", func(v statView) StatValue { return ofUint(v.Cache.Lost) }},
	{"tiers", "directory_forgotten", "directory_forgotten_total", StatCounter, "", "Keys held only in cold that the directory forgot to stay within cold.directory_keys (read again from cold).", func(v statView) StatValue { return ofUint(v.Cache.Forgotten) }},
	{"tiers", "warm_numa_node", "warm_numa_node", StatGauge, "", "NUMA node the warm arena is bound to (-1 unbound).", func(v statView) StatValue { return ofInt(int64(v.Cache.WarmNode)) }},
	{"tiers", "warm_placement", "warm_placement_ratio", StatGauge, "", "Fraction of sampled warm pages resident on the warm node.", func(v statView) StatValue { return ratio(v.Cache.WarmPlacement) }},
	{"tiers", "cold_index_numa_node", "cold_index_numa_node", StatGauge, "", "NUMA node the emulated cold store's off-heap index tables are bound to (cold.index_node; -1 unbound).", func(v statView) StatValue { return ofInt(int64(v.Cache.ColdIndexNode)) }},
	{"tiers", "cold_index_bytes", "cold_index_bytes", StatGauge, "", "DRAM of the emulated cold store's index, its tables on the Go heap included.", func(v statView) StatValue { return ofInt(v.Cache.ColdIndexBytes) }},
	{"tiers", "cold_index_bound_bytes", "cold_index_bound_bytes", StatGauge, "", "Bytes of the cold index bound to its node: tables under 2 MiB live on the Go heap and cannot be.", func(v statView) StatValue { return ofInt(v.Cache.ColdIndexBoundBytes) }},
	{"tiers", "cold_index_bind_errors", "cold_index_bind_errors_total", StatCounter, "", "Cold index tables that could not be bound to the node (left unbound; the first is logged).", func(v statView) StatValue { return ofUint(v.Cache.ColdIndexBindErrors) }},
	{"tiers", "cold_index_placement", "cold_index_placement", StatGauge, "", "Fraction of the cold index's sampled resident off-heap pages on its node (-1 unbound or nothing off the heap).", func(v statView) StatValue { return ratio(v.Cache.ColdIndexPlacement) }},
	{"tiers", "cold_backend", "cold_backend_info", StatText, "backend", "The cold store, as backend=\"emulated:<path>\" (empty without a cold tier).", func(v statView) StatValue { return text(v.Cache.ColdBackend) }},
	{"tiers", "cold_free_bytes", "cold_free_bytes", StatGauge, "", "Free space reported by the cold backend.", func(v statView) StatValue { return ofUint(v.Cache.ColdFreeBytes) }},
	{"tiers", "cold_bytes_read", "device_bytes_read_total", StatCounter, "", "Bytes read from the cold device.", func(v statView) StatValue { return ofUint(v.Cache.ColdBytesRead) }},
	{"tiers", "cold_bytes_written", "device_bytes_written_total", StatCounter, "", "Bytes written to the cold device.", func(v statView) StatValue { return ofUint(v.Cache.ColdBytesWritten) }},
	{"tiers", "cold_stalled_io", "cold_stalled_io_total", StatCounter, "", "Cold device I/O that stayed in flight longer than cold.stall_after (a kernel or device problem).", func(v statView) StatValue { return ofUint(v.Cache.ColdStalledIO) }},
	{"tiers", "cold_oldest_io_ms", "cold_oldest_io_seconds", StatGauge, "", "Age of the oldest cold device I/O in flight (sampled every second).", func(v statView) StatValue { return millis(v.Cache.ColdOldestIO) }},
	{"tiers", "cold_errors", "cold_errors_total", StatCounter, "", "Cold-tier errors: reads served as misses, writes dropped.", func(v statView) StatValue { return ofUint(v.Cache.ColdErrors) }},
	{"tiers", "cold_writable", "cold_writable", StatGauge, "", "1 while the cold store takes writes; 0 without a cold tier or after a failed write (until restart; INFO tiers cold_write_error says why).", func(v statView) StatValue { return ofBool(v.Cache.ColdWritable()) }},
	{"tiers", "cold_write_error", "", StatText, "", "Why the cold store takes no more writes (empty while it does). INFO only: an error's text is no label value to keep; /metrics has tiercache_cold_writable.", func(v statView) StatValue { return errText(v.Cache.ColdWriteError) }},
}

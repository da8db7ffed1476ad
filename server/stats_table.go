package server

// statsTable is every counter INFO prints in its clients, stats, tiers and
// tenants sections and cmd/tiercache exports on /metrics (as tiercache_<Metric>):
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
	{"tiers", "keys", "keys", StatGauge, "", "Keys in the cache, counting expired keys not yet swept and those only cold holds.", func(v statView) StatValue { return ofInt(v.Cache.Keys) }},
	{"tiers", "directory_keys", "directory_keys", StatGauge, "", "Live keys the tier's directory holds: in DRAM, in flight, or only in cold and not forgotten yet.", func(v statView) StatValue { return ofInt(v.Cache.DirectoryKeys) }},
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
	{"tiers", "flush_purging", "flush_purging", StatGauge, "", "1 while the background purge of a FLUSHALL frees the flushed keys' memory and queues their cold deletes.", func(v statView) StatValue { return ofBool(v.Cache.Purging) }},
	{"tiers", "flush_purge_pending", "flush_purge_pending", StatGauge, "", "Keys FLUSHALL removed that the background purge has not freed yet.", func(v statView) StatValue { return ofInt(v.Cache.PurgePending) }},
	{"tiers", "flush_purged", "flush_purged_total", StatCounter, "", "Keys the background purge of FLUSHALL freed.", func(v statView) StatValue { return ofUint(v.Cache.Purged) }},
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
	{"tiers", "remote_backend", "remote_backend_info", StatText, "backend", "The remote tier, as backend=\"remote:<seed addresses>\" (empty without one).", func(v statView) StatValue { return text(v.Cache.Remote.Backend) }},
	{"tiers", "remote_connected", "remote_connected", StatGauge, "", "1 once a seed of the remote tier answered (the client is connected).", func(v statView) StatValue { return ofBool(v.Cache.Remote.Store.Connected) }},
	{"tiers", "remote_nodes", "remote_nodes", StatGauge, "", "Nodes of the remote cluster the client knows.", func(v statView) StatValue { return ofInt(int64(v.Cache.Remote.Store.Nodes)) }},
	{"tiers", "remote_breaker", "", StatText, "", "The remote tier's circuit breaker: closed, open or half-open (INFO only; /metrics has tiercache_remote_breaker_state).", func(v statView) StatValue { return text(v.Cache.Remote.Store.Breaker) }},
	{"tiers", "remote_breaker_state", "remote_breaker_state", StatGauge, "", "The remote tier's circuit breaker: 0 closed, 1 half-open, 2 open (calls make no round trip).", func(v statView) StatValue { return ofInt(breakerState(v.Cache.Remote.Store.Breaker)) }},
	{"tiers", "remote_breaker_opens", "remote_breaker_opens_total", StatCounter, "", "Times the remote tier's breaker opened.", func(v statView) StatValue { return ofUint(v.Cache.Remote.Store.BreakerOpens) }},
	{"tiers", "remote_hits", "remote_hits_total", StatCounter, "", "Reads the local tiers missed and the remote tier answered (also tier_hits_total{tier=\"remote\"}).", func(v statView) StatValue { return ofUint(v.Cache.Remote.Hits) }},
	{"tiers", "remote_misses", "remote_misses_total", StatCounter, "", "Reads the local tiers missed and the remote tier did not hold.", func(v statView) StatValue { return ofUint(v.Cache.Remote.Misses) }},
	{"tiers", "remote_read_errors", "remote_read_errors_total", StatCounter, "", "Reads the local tiers missed whose remote round trip failed or timed out (answered as misses).", func(v statView) StatValue { return ofUint(v.Cache.Remote.Errors) }},
	{"tiers", "remote_errors", "remote_errors_total", StatCounter, "", "Remote round trips that failed (connection or server error).", func(v statView) StatValue { return ofUint(v.Cache.Remote.Store.Errors) }},
	{"tiers", "remote_timeouts", "remote_timeouts_total", StatCounter, "", "Remote round trips past remote.timeout.", func(v statView) StatValue { return ofUint(v.Cache.Remote.Store.Timeouts) }},
	{"tiers", "remote_skipped", "remote_skipped_total", StatCounter, "", "Remote calls made no round trip because the remote was unavailable or its breaker open.", func(v statView) StatValue { return ofUint(v.Cache.Remote.Store.Skipped) }},
	{"tiers", "remote_admitted", "remote_admitted_total", StatCounter, "", "Remote hits given a local copy.", func(v statView) StatValue { return ofUint(v.Cache.Remote.Admitted) }},
	{"tiers", "remote_invalidations", "remote_invalidations_total", StatCounter, "", "Keys other sidecars changed, as the remote reported them.", func(v statView) StatValue { return ofUint(v.Cache.Remote.Store.Invalidations) }},
	{"tiers", "remote_invalidated", "remote_invalidated_total", StatCounter, "", "Local copies dropped because another sidecar changed the key.", func(v statView) StatValue { return ofUint(v.Cache.Remote.Invalidated) }},
	{"tiers", "remote_validated", "remote_validated_total", StatCounter, "", "Suspect local copies (invalidations may have been lost) the remote found unchanged.", func(v statView) StatValue { return ofUint(v.Cache.Remote.Validated) }},
	{"tiers", "remote_replaced", "remote_replaced_total", StatCounter, "", "Suspect local copies replaced by the remote's newer value.", func(v statView) StatValue { return ofUint(v.Cache.Remote.Replaced) }},
	{"tiers", "remote_dropped", "remote_dropped_total", StatCounter, "", "Suspect local copies dropped because the remote no longer holds the key.", func(v statView) StatValue { return ofUint(v.Cache.Remote.Dropped) }},
	{"tiers", "remote_resyncs", "remote_resyncs_total", StatCounter, "", "Times invalidations may have been lost, so that every local copy is checked against the remote at its next use (unless remote.resync keep).", func(v statView) StatValue { return ofUint(v.Cache.Remote.Resyncs) }},
	{"tiers", "remote_store_resyncs", "remote_store_resyncs_total", StatCounter, "", "Times the remote client found that invalidations may have been lost (a connection closed, another sidecar's FLUSHALL).", func(v statView) StatValue { return ofUint(v.Cache.Remote.Store.Resyncs) }},
	{"tiers", "remote_foreign", "remote_foreign_total", StatCounter, "", "Values under remote.prefix that are not records of ours (read as misses).", func(v statView) StatValue { return ofUint(v.Cache.Remote.Store.Foreign) }},
	{"tiers", "remote_torn", "remote_torn_total", StatCounter, "", "Chunked remote values whose pieces did not match their header (replaced as they were read; read as misses).", func(v statView) StatValue { return ofUint(v.Cache.Remote.Store.Torn) }},
	{"tiers", "remote_queue_items", "remote_queue_items", StatGauge, "", "Changes waiting to be written to the remote tier.", func(v statView) StatValue { return ofInt(v.Cache.Remote.Queue.Queued) }},
	{"tiers", "remote_queue_bytes", "remote_queue_bytes", StatGauge, "", "Key and value bytes of the changes waiting for the remote tier.", func(v statView) StatValue { return ofInt(v.Cache.Remote.Queue.QueuedBytes) }},
	{"tiers", "remote_queue_in_flight", "remote_queue_in_flight", StatGauge, "", "Batches of changes sent to the remote tier and not answered.", func(v statView) StatValue { return ofInt(v.Cache.Remote.Queue.InFlight) }},
	{"tiers", "remote_changes", "remote_changes_total", StatCounter, "", "Changes made for the remote tier (puts, deletes, expiries).", func(v statView) StatValue { return ofUint(v.Cache.Remote.Queue.Enqueued) }},
	{"tiers", "remote_changes_merged", "remote_changes_merged_total", StatCounter, "", "Changes merged into a pending change of their key (only the newest is written).", func(v statView) StatValue { return ofUint(v.Cache.Remote.Queue.Merged) }},
	{"tiers", "remote_written", "remote_written_total", StatCounter, "", "Changes the remote tier took.", func(v statView) StatValue { return ofUint(v.Cache.Remote.Queue.Sent) }},
	{"tiers", "remote_write_drops", "remote_write_drops_total", StatCounter, "", "Changes dropped before reaching the remote tier: the queue full, or pending at shutdown.", func(v statView) StatValue { return ofUint(v.Cache.Remote.Queue.Dropped) }},
	{"tiers", "remote_write_errors", "remote_write_errors_total", StatCounter, "", "Changes the remote tier failed (not retried: other sidecars keep reading its older value).", func(v statView) StatValue { return ofUint(v.Cache.Remote.Queue.Failed) }},
	{"tiers", "remote_write_batches", "remote_write_batches_total", StatCounter, "", "Batches of changes sent to the remote tier.", func(v statView) StatValue { return ofUint(v.Cache.Remote.Queue.Batches) }},
	{"tiers", "remote_wait_timeouts", "remote_wait_timeouts_total", StatCounter, "", "Write-through waits (remote.write through) that gave up after remote.wait.", func(v statView) StatValue { return ofUint(v.Cache.Remote.WaitTimeouts) }},
	{"tiers", "remote_bytes_read", "remote_bytes_read_total", StatCounter, "", "Bytes read from the remote tier.", func(v statView) StatValue { return ofUint(v.Cache.Remote.BytesRead) }},
	{"tiers", "remote_bytes_written", "remote_bytes_written_total", StatCounter, "", "Bytes written to the remote tier.", func(v statView) StatValue { return ofUint(v.Cache.Remote.BytesWritten) }},
	{"tiers", "remote_generation", "remote_generation", StatGauge, "", "The remote tier's generation: every FLUSHALL through any sidecar starts a new one.", func(v statView) StatValue { return ofUint(v.Cache.Remote.Store.Generation) }},
	{"tiers", "remote_swept", "remote_swept_total", StatCounter, "", "Keys of earlier generations this sidecar removed from the remote.", func(v statView) StatValue { return ofUint(v.Cache.Remote.Store.Swept) }},
	{"tiers", "remote_clear_pending", "remote_clear_pending", StatGauge, "", "1 while a FLUSHALL waits to clear the remote tier (it is neither read nor written meanwhile).", func(v statView) StatValue { return ofBool(v.Cache.Remote.ClearPending) }},
	{"tiers", "remote_clear_errors", "remote_clear_errors_total", StatCounter, "", "FLUSHALLs that could not clear the remote tier at once.", func(v statView) StatValue { return ofUint(v.Cache.Remote.ClearErrors) }},
	{"tenants", "quota_bytes", "tenant_quota_bytes", StatGauge, TenantLabel, "Each tenant's share of the DRAM budget (hot + warm; the default tenant's is what the others leave).", func(v statView) StatValue { return ofInt(v.Tenant.Quota) }},
	{"tenants", "capacity_bytes", "tenant_capacity_bytes", StatGauge, TenantLabel, "Key and value bytes each tenant's keys may keep in DRAM: its quota's share of dram_capacity_bytes.", func(v statView) StatValue { return ofInt(v.Tenant.Capacity) }},
	{"tenants", "keys", "tenant_keys", StatGauge, TenantLabel, "Keys of each tenant, counting expired keys not yet swept.", func(v statView) StatValue { return ofInt(v.Tenant.Keys) }},
	{"tenants", "dram_items", "tenant_dram_items", StatGauge, TenantLabel, "Keys of each tenant the DRAM tiers hold.", func(v statView) StatValue { return ofInt(int64(v.Tenant.DRAMItems)) }},
	{"tenants", "dram_bytes", "tenant_dram_bytes", StatGauge, TenantLabel, "Key and value bytes of each tenant the DRAM tiers hold (at most its capacity).", func(v statView) StatValue { return ofInt(v.Tenant.DRAMBytes) }},
	{"tenants", "hits", "tenant_hits_total", StatCounter, TenantLabel, "Reads of each tenant's keys served, from any tier.", func(v statView) StatValue { return ofUint(v.Tenant.Hits) }},
	{"tenants", "dram_hits", "tenant_dram_hits_total", StatCounter, TenantLabel, "Reads of each tenant's keys served from hot or warm.", func(v statView) StatValue { return ofUint(v.Tenant.DRAMHits) }},
	{"tenants", "misses", "tenant_misses_total", StatCounter, TenantLabel, "Reads of each tenant's keys that found nothing.", func(v statView) StatValue { return ofUint(v.Tenant.Misses) }},
	{"tenants", "evictions", "tenant_evictions_total", StatCounter, TenantLabel, "Keys of each tenant the DRAM tiers evicted (to cold, or lost without one): a tenant past its quota evicts its own.", func(v statView) StatValue { return ofUint(v.Tenant.Evictions) }},
}

// breakerState is the remote breaker's state as a number (0 closed, 1
// half-open, 2 open; 0 without a remote tier).
func breakerState(s string) int64 {
	switch s {
	case "half-open":
		return 1
	case "open":
		return 2
	}
	return 0
}

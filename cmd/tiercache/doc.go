// Command tiercache is the tiercache sidecar: a three-tier cache (DRAM hot,
// NUMA/CXL warm arena, KV-store cold) served over the Redis protocol on a
// Unix socket.
//
//	tiercache [serve] [flags]   run the sidecar (the default)
//	tiercache numa              print the NUMA topology and the warm node
//	tiercache kvtarget -store PATH | -dir DIR [-listen 127.0.0.1:4420] [-hosts FILE]
//	                            serve emulated KV namespaces as an NVMe/TCP
//	                            KV SSD (nvmekv/tcptarget), for cold.backend
//	                            passthrough through the Linux nvme-tcp driver:
//	                            one fixed namespace, or Namespace Management
//	                            in DIR; -hosts lists the hosts allowed, with
//	                            their DH-HMAC-CHAP secrets
//	tiercache ns list|create|delete|claim|forget -ctrl /dev/nvmeX ...
//	                            manage a KV SSD's namespaces through the
//	                            kernel's controller (nvmekv/nsadmin), or
//	                            -connect HOST:PORT over NVMe/TCP
//	tiercache tenant list|drop NAME
//	                            the tenants' cold namespaces; delete a
//	                            removed tenant's (sidecar stopped)
//	tiercache probe live|ready  exit 0 if the sidecar answers PING / has
//	                            its cache loaded (Kubernetes exec probes)
//	tiercache version           print the version
//
// Configuration: the embedded defaults (defaultConfig), then -config FILE
// or $TIERCACHE_CONFIG (YAML, every key documented in
// configs/tiercache.yaml), then TIERCACHE_<SECTION>_<KEY> environment
// variables, then flags. Logging is zap (JSON, or console when stderr is a
// terminal); metrics are Prometheus on a loopback address, which also
// serves a status page at / (statuspage.go).
//
// # Invariants
//
//   - C1: configs/tiercache.yaml sets every key to exactly the embedded
//     default (TestDefaultConfigFileMatchesDefaults).
//   - C2: an invalid configuration is refused with one error listing every
//     problem, before any file, socket or arena is created
//     (TestInvalidConfigListsEveryProblem,
//     TestServeRefusesInvalidConfig, TestListenAddressForm,
//     TestWarmSegmentBounds, TestServerValuesNamedByKey).
//   - C3: shutdown is ordered: RESP listeners, connections (each finishes
//     its command and flushes), metrics endpoint, then tier.Cache.Close
//     (flusher drained, ring, arenas, device); a second SIGTERM/SIGINT
//     exits at once with status 2 (TestSecondSignalForcesExit). The
//     SHUTDOWN command starts the same shutdown, once however often it
//     comes, and the process exits 0 (TestShutdownCommandStops).
//   - C4: with durability drain, a clean shutdown and a restart on the same
//     data directory serve every key again (TestRestartKeepsColdKeys).
//   - C5: every Redis client used in the tests (go-redis v9 in RESP2 and
//     RESP3, redis-cli, redis-py) works unchanged against the real sidecar
//     (TestGoRedis, scripts/test.d/30-clients).
//   - C6: /metrics and INFO are generated from one table, server's
//     statsTable (S13): on the real sidecar every row is an INFO field and,
//     but for the INFO-only ones, a tiercache_ metric of its type (per tier
//     for a per-tier row, per tenant for a per-tenant row), and the only tiercache_ metrics besides the
//     table's are the command latencies (per command and per family, C17)
//     and INFO memory's figures of tier.Memory (memoryRows, tiercache_memory_*,
//     each equal to its INFO field) (TestInfoAndMetricsAgree).
//   - C7: with server.go_memory_limit auto (the default) and no GOMEMLIMIT
//     in the environment, the sidecar sets Go's memory limit to its
//     cache's heap budget (tier.Memory), follows it every 100 ms and
//     logs what it set, never below the live heap and a quarter more
//     (heap the budget does not count must not leave the collector
//     running without end: TestMemLimitLeavesLiveHeapRoom); a size sets
//     that limit, off none; Close puts the previous limit back
//     (TestMemLimiterFollowsBudget). Under the churn
//     of TestPeakRSSWithinBudget (1.5 KiB values, Zipf overwrites and
//     MGETs, no cold tier) peak RSS stays within 1.10 × (hot.bytes +
//     warm.bytes) + tier.DirEntryBytes × keys + 32 MiB.
//   - C8: kvtarget reports bad flags together (exit 1), answers an
//     NVMe/TCP ICReq on the address it prints, and exits 0 on SIGINT or
//     SIGTERM with its store closed (TestKVTargetFlags, TestKVTargetServes).
//   - C9: the RESP listeners and the metrics endpoint are up before the
//     cache opens: while it opens the server is loading (server S27: PING
//     and INFO answer, INFO says loading:1, commands that touch data
//     answer -LOADING), the log has a line a second with the percent, keys
//     and elapsed time of the cold store's recovery and a last one with
//     the time taken and the method (checkpoint, scan, fresh, or none);
//     once open, every command runs on the connections made meanwhile
//     (TestLoadingSidecar). An open that fails closes those connections
//     and returns openCacheError's error (TestLoadingOpenFails).
//   - C10: cold.index_node ("auto", "unbound"/"none" or a node id, parsed
//     as warm.node is) reaches coldstore.Config.IndexNode: a node this
//     machine lacks makes the sidecar refuse to start naming the setting
//     and the node, a value that is no node is a config error, and a bound
//     index shows in the startup line and in INFO tiers
//     (cold_index_numa_node, cold_index_placement, ...) (TestColdIndexNode);
//     `tiercache numa` prints the node it resolves to and exits 1 for a
//     node serve would refuse (TestRunNumaColdIndexNode).
//   - C11: tenants (name, prefix, quota) reach tier.Options.Tenants from
//     the YAML file and from TIERCACHE_TENANTS (a YAML flow sequence);
//     an empty name, overlapping prefixes and quotas above hot.bytes +
//     warm.bytes are refused in the one configuration error, each naming
//     its field (TestTenantsConfig); on the real sidecar, go-redis reads
//     one INFO tenants line per tenant with its keys, DRAM bytes, hits,
//     misses and evictions, and /metrics has the same numbers labelled
//     tenant="<name>" (TestTenantsOnTheSidecar).
//   - C12: socket activation: with LISTEN_PID, LISTEN_FDS and
//     LISTEN_FDNAMES (sd_listen_fds(3), descriptors from 3) serve serves
//     the passed listening stream sockets, a Unix one and a TCP one named
//     tcp (AUTH required), and opens none of its own; the passed socket
//     file is left to its owner (TestSocketActivationServes, under
//     systemd-socket-activate). A malformed variable, a LISTEN_PID of
//     another process, a descriptor that is not a listening Unix or TCP
//     stream socket (a regular file, UDP, SOCK_SEQPACKET, a socket not
//     listening), a TCP socket not named tcp or without requirepass each
//     exit 1 with one error naming it, never a hang (TestParseListenEnv,
//     TestCheckPassedSocket, TestSocketActivationRefusesBadSockets).
//   - C13: sd_notify: with NOTIFY_SOCKET set, serve sends READY=1 with the
//     start line as STATUS= only once the cache is open (loading:0), a
//     STATUS= a second with the open's progress before that, with
//     EXTEND_TIMEOUT_USEC= when the progress moved since the last one,
//     STOPPING=1 when the shutdown begins and STATUS=failed: ... on a
//     failed start; a NOTIFY_SOCKET it cannot send to is an error naming
//     it (TestNotifyReadyOnceLoaded, TestNotifyWhileLoading,
//     TestNotifySocketBad).
//   - C14: with stderr on a terminal (logging.format auto or console),
//     a long open's progress (serve's cache, kvtarget's store) is one
//     status line rewritten in place, erased before every log line and
//     drawn again after it, and erased when the open ends; off a
//     terminal it is a log line a second with no control characters
//     (TestProgressOnTerminal on a pty, TestProgressOffTerminal,
//     TestKVTargetProgress).
//   - C15: a metrics.listen address in use exits 1 naming the address and
//     how to choose another, before the RESP socket is created
//     (TestMetricsPortTakenLeavesNoSocket).
//   - C16: `tiercache probe live` exits 0 once the sidecar answers PING
//     with PONG (while it loads too), `probe ready` once INFO says
//     loading:0; otherwise 1 with one line saying why (TestProbe).
//   - C17: every command the server has is in exactly one family of
//     commandFamilies (TestEveryCommandHasAFamily), and each family's
//     tiercache_command_family_duration_seconds is the sum of its
//     commands' tiercache_command_duration_seconds histograms, made when
//     scraped: count, sum and every bucket (TestFamilyHistogramSumsCommands).
//   - C18: the metrics listener serves GET / (the status page, embedded,
//     with no external asset and a Content-Security-Policy that lets it
//     reach only its own origin) and GET /status.json (the stats table's
//     rows and INFO memory's, under their INFO names with INFO's values);
//     other paths answer 404 and /metrics is unchanged (TestStatusPage);
//     while the cache opens both are served and status.json says loading
//     (TestStatusPageWhileLoading).
//     In headless Chromium the page reads status.json every 2 s, and every
//     value it shows is INFO's for that field taken around it: counters
//     between INFO before and after, gauges equal on a quiet sidecar
//     (TestStatusPageInChromium, run by scripts/test.d/40-watch).
//   - C19: through a real Prometheus scraping the sidecar under load, every
//     query of deploy/grafana/tiercache.json returns a finite sample (the
//     remote tier's panels, remotePanels, once the sidecar has one), and
//     every rule of deploy/prometheus/tiercache-rules.yml evaluates without
//     error on metrics the sidecar exports (TestDashboardThroughPrometheus,
//     run by scripts/test.d/40-watch, which also runs promtool check rules
//     and promtool test rules).
//   - C20: with server.cluster emulated (TIERCACHE_SERVER_CLUSTER), which
//     needs server.tcp or, under systemd, a TCP socket passed as tcp
//     (TestSocketActivationCluster), the sidecar is a one-node Redis Cluster (server's
//     CL1-CL4): go-redis's ClusterClient and rueidis in cluster mode
//     (topology from CLUSTER SLOTS and from CLUSTER SHARDS) seeded with its
//     TCP address connect unchanged, and every step of their transcript
//     (MGET of one slot, pipelines over every slot, transactions, and the
//     CROSSSLOT refusals word for word, sharded pub/sub's SSubscribe and
//     SPublish) is a real Redis Cluster's (TestGoRedisClusterClient,
//     TestRueidisClusterClient, TestGoRedisClusterShardedPubSub against
//     redistest's 3-master cluster); redis-py's RedisCluster and ioredis's
//     Cluster likewise in scripts/test.d/30-clients and 35-npm. On the
//     Unix socket the node announces its TCP address: go-redis's
//     ClusterClient with a Dialer that always dials the socket works
//     there, and so does rueidis with ForceSingleClient, with CROSSSLOT
//     refusals as on TCP (TestClusterOnTheUnixSocket). A bad
//     server.cluster, or emulated without server.tcp, is one error naming
//     the key (TestClusterConfig).
//   - C21: kvtarget refuses a -listen address that is not loopback unless
//     -hosts gives every host a DH-HMAC-CHAP secret, a hosts file with a
//     bad secret, with secrets and readable by group or others, or with no
//     host, and an unknown hash or DH group, never repeating a secret
//     (TestKVTargetFlags); with -dir, `tiercache ns` creates a namespace,
//     finds it again by name, refuses to delete one its registry did not
//     create, deletes its own, and is refused without its secret
//     (TestNSCommand).
//   - C22: in writethrough, sets and sorted sets survive SIGKILL: after
//     each of four kills at random moments under four clients' SADD, SREM,
//     ZADD, ZINCRBY and ZREM, every set and sorted set is what its
//     client's acknowledged commands made it, or that with the one command
//     in flight (TestSetsAndSortedSetsSurviveSIGKILL).
//   - C23: a tenant's cold_bytes gives it a cold namespace of its own
//     (coldstore.Config.Tenants) and INFO tenants its cold figures; a
//     tenant removed from the config keeps its namespace and keys until
//     `tiercache tenant drop NAME`, which is refused while the sidecar
//     runs or while NAME is still configured (a tenant's name, or the
//     volume namespace its cold_namespace takes:
//     TestTenantDropRefusesATakenNamespace); a config that no longer
//     matches the device (a quota changed, more than the free capacity,
//     two tenants taking one namespace) fails the start naming it, the
//     store untouched (TestTenantNamespacesOnTheSidecar).
//   - C24: every parameter CONFIG SET changes that has a server.* key
//     (notify_keyspace_events, busy_script_time, pubsub_output_limit,
//     tracking_table_max_keys, slowlog_*, latency_monitor_threshold,
//     latency_tracking, latency_tracking_info_percentiles; max_clients,
//     which CONFIG SET refuses) is set from the file or a TIERCACHE_SERVER_*
//     variable before the socket listens, and CONFIG GET answers it over
//     the socket, a 0 or "" that means something (tracking_table_max_keys
//     0: unbounded; busy_script_time 0: no script busy; slowlog 0; no
//     percentiles) as given, not as the
//     default (TestRuntimeParamsFromConfigFile); a bad value of each
//     makes serve exit 1 without a socket, the error naming the key and
//     the value, a value of the wrong YAML type (latency_tracking: maybe)
//     included (TestRuntimeParamsBadValues); a map or list in a scalar's
//     place is named by its own key, and a line of several values of a
//     flow mapping is left as yaml names it (TestTypeErrorsNameTheirKey).
//
// # Caveats
//
//   - Stats for /metrics and INFO are pulled on each scrape (one
//     server.Snapshot per scrape or INFO); tier.Stats walks the key
//     directory, so a scrape costs O(keys).
//   - The metrics endpoint and the status page have no authentication:
//     keep them on loopback. /status.json costs what a scrape costs (one
//     server.Snapshot); the page asks for it every 2 s while it is open.
//   - startSidecar returns only once the cache is open, so signals are
//     handled after a long open, not during it.
//   - kvtarget authenticates hosts (DH-HMAC-CHAP) but does not encrypt
//     (no TLS): off loopback, the traffic needs a trusted network, IPsec
//     or a tunnel.
package main

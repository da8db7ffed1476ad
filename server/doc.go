// Package server speaks the Redis protocol (RESP2, and RESP3 after HELLO 3)
// for a tier.Cache over a Unix socket and, optionally, TCP. Any Redis client
// (redis-cli, redis-py, go-redis) is a client unchanged. The wire itself
// (requests, replies, protocol errors, the numbers clients send) is
// package resp's; this package gives the commands their meaning.
//
// A Server is built with New(cache, Options), started with Start (or fed
// listeners with Serve) and stopped with Close. A cache that takes long to
// open is handed over later: NewLoading(Options, progress) serves the
// connection commands and INFO and answers -LOADING to the rest, as Redis
// does while it loads its dataset, until Loaded(cache) (loading.go, S27).
// The cache is the concrete *tier.Cache (server → tier is the layering:
// cmd → server → tier); the server calls its methods and reads its
// counters (tier.Stats), and knows nothing of the tiers behind it. Those
// counters and the server's own are one table, statsTable (stats_table.go): INFO's
// clients, stats and tiers sections print it and cmd/tiercache's /metrics
// exports it (StatTable, Stat.Each on a Server.Snapshot).
//
// The command table (table.go) binds each command, and each variant of
// one (LPUSH and RPUSH, INCR and DECRBY, EXPIRE and PEXPIREAT), to its
// handler in a cmd_*.go file by the handler's arguments; the containers'
// subcommands (CONFIG GET...) are subcommands.go's table, checked before
// their container runs (S86); args.go is the
// one grammar of arguments (numbers, times, counts, option words) and
// replies.go holds every error text. Transactions are multi.go and
// watch.go; INFO and the stats table are info.go, stat.go,
// stats_table.go and errorstats.go.
//
// Each connection has one goroutine that reads a command, runs it and
// appends the reply to a buffered writer. The writer is flushed only when
// the reader is about to block for more input, so a pipelined batch of
// requests that arrived together is answered with one write. A GET served
// from the hot tier does not copy the value into that buffer: the cache
// hands out its immutable hot copy (tier.Cache.View) and the writer sends it with
// the buffered bytes around it in one writev (resp.Writer.BulkShared). After a
// flush the goroutine yields once before reading, so that the read usually
// finds the client's next request instead of failing with EAGAIN. A GET
// that had to wait for the cold device answers the GETs pipelined behind it
// together (S11), so a client that pipelines n cold reads waits for the
// device about twice, not n times.
//
// Commands: PING ECHO TIME LASTSAVE SHUTDOWN HELLO AUTH RESET CLIENT(SETNAME GETNAME SETINFO ID INFO LIST KILL
// NO-EVICT REPLY UNBLOCK PAUSE UNPAUSE) COMMAND(COUNT LIST INFO DOCS GETKEYS HELP) SELECT QUIT CONFIG(GET SET RESETSTAT
// REWRITE HELP) SLOWLOG(GET LEN RESET HELP) LATENCY(LATEST HISTORY RESET
// GRAPH DOCTOR HISTOGRAM HELP) MONITOR (slowlog.go, cmd_latency.go,
// latency.go, latency_hist.go, monitor.go) MULTI EXEC DISCARD WATCH UNWATCH GET GETDEL GETEX SET SETEX
// PSETEX SETNX STRLEN TYPE TOUCH DEL UNLINK EXISTS MGET MSET EXPIRE PEXPIRE
// EXPIREAT PEXPIREAT EXPIRETIME PEXPIRETIME TTL PTTL PERSIST RENAME
// RENAMENX COPY DUMP RESTORE(REPLACE ABSTTL IDLETIME FREQ) RESTORE-ASKING MIGRATE(COPY REPLACE AUTH AUTH2 KEYS) RANDOMKEY TIER DBSIZE SCAN(MATCH COUNT TYPE) KEYS FLUSHALL
// FLUSHDB INFO. GETDEL, GETEX, SET ... GET, RENAME and COPY read and
// change keys in one step (tier.Cache.GetDel, tier.Cache.GetEx, tier.Cache.SetGet,
// tier.Cache.Rename, tier.Cache.Copy).
// The string read-modify-writes: INCR DECR INCRBY DECRBY INCRBYFLOAT
// APPEND GETRANGE SUBSTR SETRANGE GETSET MSETNX SETBIT GETBIT BITCOUNT
// BITPOS BITFIELD BITFIELD_RO (cmd_string.go, cmd_bit.go,
// cmd_bitfield.go on bitfield.go), and BITOP and LCS, which read several
// keys (cmd_bitop.go, cmd_lcs.go). HyperLogLogs: PFADD PFCOUNT PFMERGE
// PFDEBUG(GETREG DECODE ENCODING TODENSE) PFSELFTEST (cmd_hll.go,
// cmd_pfdebug.go, on value/hll). The hashes: HSET HMSET HSETNX HGET
// HMGET HGETALL HDEL HEXISTS HLEN HKEYS HVALS HSTRLEN HINCRBY HINCRBYFLOAT
// HRANDFIELD HSCAN (value/hash is the record a hash is stored as, and its
// operations; cmd_hash.go, cmd_hscan.go), and field expiry: HEXPIRE
// HPEXPIRE HEXPIREAT HPEXPIREAT HTTL HPTTL HEXPIRETIME HPEXPIRETIME
// HPERSIST (Redis 7.4) HGETDEL HGETEX HSETEX (Redis 8) (cmd_hfe.go,
// args_hfe.go; the sweeper, fieldexpiry.go). The lists: LPUSH RPUSH LPUSHX
// RPUSHX LPOP RPOP LRANGE LLEN LINDEX LSET LINSERT LREM LTRIM LPOS LMOVE
// RPOPLPUSH LMPOP and the blocking BLPOP BRPOP BLMOVE BRPOPLPUSH BLMPOP
// (value/list is the value a list is stored as, and its operations;
// cmd_list.go, listops.go, block.go, mpop.go). The geo commands, on
// sorted sets: GEOADD GEOPOS GEODIST GEOHASH GEOSEARCH GEOSEARCHSTORE and
// the deprecated GEORADIUS GEORADIUSBYMEMBER GEORADIUS_RO
// GEORADIUSBYMEMBER_RO (cmd_geo.go, geo_search.go, args_geo.go, on
// value/geo). WAIT (wait.go: no
// replicas). OBJECT. Each read-modify-write is one
// tier.Cache.Update. Issue 33's: EVAL EVALSHA EVAL_RO EVALSHA_RO SCRIPT
// (cmd_script.go, on package script), SUBSCRIBE UNSUBSCRIBE PSUBSCRIBE
// PUNSUBSCRIBE PUBLISH, Redis 7.0's sharded SSUBSCRIBE SUNSUBSCRIBE
// SPUBLISH, PUBSUB (CHANNELS NUMSUB NUMPAT SHARDCHANNELS SHARDNUMSUB)
// (cmd_pubsub.go, on package pubsub, pushes through pushes.go),
// keyspace notifications (notify.go, notify_events.go, events.go), CLIENT
// TRACKING CACHING GETREDIR TRACKINGINFO (tracking.go), CONFIG SET at
// runtime (config_set.go);
// FUNCTION, FCALL and FCALL_RO answer an error (FUNCTION FLUSH and LIST
// answer as with no function loaded).
// SORT and SORT_RO (cmd_sort.go, sort_args.go, sort_pattern.go) sort a
// list, set or sorted set by value or by BY pattern keys and hash fields,
// with GET patterns, LIMIT, ALPHA, and SORT's STORE of a list.
//
// With Options.Cluster the server is the one node of an emulated Redis
// Cluster that owns all 16,384 slots (cluster.go, clusterreply.go):
// CLUSTER (INFO MYID SLOTS SHARDS NODES LINKS KEYSLOT COUNTKEYSINSLOT
// GETKEYSINSLOT REPLICAS SLAVES COUNT-FAILURE-REPORTS HELP), READONLY,
// READWRITE and ASKING, and Redis Cluster's CROSSSLOT refusals by the
// table's key positions (crossslot.go; COMMAND GETKEYS reads them too).
//
// # Invariants
//
// The wire's invariants are resp's (R1–R7) and the value encodings' are
// value/hash's (VH1–VH8) and value/list's (VL1–VL5). The S numbers are
// identifiers cited across the repository and keep their values; S25 is
// resp's R6.
//
//   - S1: a client past MaxConns is answered redis-server's error and
//     closed before its connection's buffers exist (TestMaxConnections);
//     the limits of a request (bulk length, argument count, inline length,
//     bytes of one command, and the smaller ones before AUTH) are the
//     resp.Reader's (resp R1), set from Options.
//   - S2: a protocol error (resp R2) is answered "-ERR Protocol error:
//     <what>" and then the connection is closed; the server keeps serving
//     others (TestProtocolErrors). Malformed framing gets redis-server's
//     bytes and ends the connection where redis-server does; a bulk not
//     followed by CRLF, which redis-server reads past unchecked, is an
//     error here (TestFramingMatchesRedis).
//   - S3: an unknown command, a wrong arity or a bad argument gets Redis's
//     error text and never closes the connection (TestCommandReplies).
//     Each error text is spelled once, in replies.go
//     (TestRepliesLiveInRepliesGo), and those given as redis-server's are
//     in its binary (TestRepliesAreRedisTexts); no handler reads its
//     command's name (TestHandlersDoNotReadTheirName).
//     Every number a command takes is read as redis-server reads it
//     (resp R7): integers as string2ll, C ints (SELECT, COPY ... DB) with
//     its range error, floats and timeouts as string2ld (a long double),
//     cursors as strtoul, each case of a table of signs, zeros, spaces,
//     limits, notations and non-ASCII digits answered byte for byte as
//     redis-server 7.0 answers it (TestNumbersMatchRedis).
//   - S4: replies are written in request order, and they are flushed only
//     when no complete request is left buffered: a batch of requests that
//     arrived together is answered with one write (or writev) when its
//     replies fit the write buffer (TestPipelineOneFlush; the bytes are
//     the resp.Writer's, resp R4).
//   - S5: the Unix socket is created with exactly the configured mode (0600
//     by default) — there is no moment with wider permissions — so another
//     user cannot connect (TestSocketModeKeepsOtherUsersOut).
//   - S6: an existing socket file is removed only when connecting to it is
//     refused; a live server's socket and non-socket files are left alone
//     (TestStaleSocketHandling).
//   - S7: a TCP listener requires AUTH; before AUTH only AUTH, HELLO and QUIT
//     run, with at most 10 arguments and 16 KiB bulks in multibulk form
//     (an inline command is bounded by its line, as in redis-server; S64)
//     (TestTCPRequiresAuth).
//   - S8: any argument list gets a reply without a panic (FuzzCommands);
//     any byte stream gets commands or a protocol error (resp R3).
//   - S9: Close stops the listeners, lets each connection finish its
//     current command and flush, waits for every goroutine, and is
//     idempotent (TestCloseIsOrderedAndIdempotent).
//   - S10: SCAN and KEYS match keys with Redis's glob rules (TestGlobMatch),
//     and a whole SCAN returns each key present throughout it exactly once
//     (TestScanAndKeys here; tier's T13 with the real directory).
//   - S11: the one-key GETs wholly buffered behind a GET, up to the first
//     other command, are taken with Reader.NextGet instead of ReadCommand
//     and dispatch (getRun). Once one of them read the cold device
//     (tier.Cache.View's cold), the rest, at most Options.ColdGetBatch, are
//     answered by MGetPrefixAny calls holding at most ColdGetBatchBytes of
//     values each: their device reads overlap instead of waiting one by one
//     (getBatch). The replies, counters and latency observations are those
//     of the GETs one by one (a run's GETs share its time); NextGet never
//     reads, and taking GETs with it leaves the command stream unchanged
//     (resp R3; TestGetRun, TestColdGetBatch, TestColdGetBatchLimits,
//     TestColdGetBatchAfterExec; TestRestartKeepsColdKeys end to end).
//   - S12: a connection never blocks writing replies while its client may
//     be blocked writing requests: a write takes what the socket takes now
//     and waits (poll, readable or writable) only while no request is
//     waiting; once one is, the rest of the replies waits in memory
//     (outConn's spill) and the connection reads on, sending spill as the
//     socket takes it, in order. Past MaxOutputBytes unsent (64 KiB before
//     AUTH, where AUTH is required) the connection is closed without them.
//     When a connection ends with replies unsent, they go out for at most
//     ShutdownTimeout while requests that still arrive are read and dropped,
//     so a client still writing can finish and read them; a client's EOF
//     does not make that wait busy (TestOutputSpill, TestOutputLimit,
//     TestOutputLimitBeforeAuth, TestOutputFlushAtClose, go-redis
//     TestGoRedisLongPipeline: 20,000 pipelined 4 KB SETs, then GETs).
//   - S13: INFO's clients, stats, tiers and tenants sections are exactly the rows of
//     statsTable (a per-tier row once per tier) besides the settings
//     maxclients and blocked_clients, and its persistence and memory
//     sections have the table's loading and number_of_cached_scripts (where
//     Redis 7.0 has them) beside fixed fields (TestInfoHasEveryStat,
//     TestScriptCountInInfoMemory); each row names
//     its INFO field and its metric, by one naming rule but for Redis's
//     own fields and names older than the table (TestStatsTableNames); and
//     every field of tier.Stats (with flusher.Stats and tier.TierLevel) and
//     of Stats is read by a row or listed with the reason it is not
//     exported (TestStatsTableCoversStats). cmd/tiercache's C6 checks the
//     /metrics side. Stats' commands processed and keyspace hits and
//     misses never decrease, also while connections close and their
//     counts move to the server's totals (TestStatsNeverGoBack).
//   - S14: every value has a kind (kind.go: string, hash, list), kept by
//     the cache beside it (tier.Kind). A string command on a key of another
//     kind answers WRONGTYPE and changes nothing, also inside a pipelined
//     GET batch; MGET answers nil for it; TYPE names the kind; SET
//     replaces a value of any kind (TestWrongTypeReplies); every list
//     command does the same on a key that is no list (TestListWrongType).
//   - S15: no command of another connection runs between two commands of
//     an EXEC: every command but the transaction controls holds the
//     server's transaction lock shared, EXEC holds it exclusively
//     (TestExecIsolated). EXEC replies a null array and runs nothing when
//     a key the connection WATCHed was written since WATCH by any
//     connection (a write command naming it that changed something,
//     FLUSHALL while it existed) or existed at WATCH and is gone (expired,
//     or lost); EXEC,
//     DISCARD, UNWATCH and closing the connection unwatch every key
//     (TestWatch; TestWatchRacingTransactions: optimistic increments from
//     six connections lose no update).
//   - S16: max_clients never exceeds what the open-files limit leaves: New
//     lowers it to RLIMIT_NOFILE less the descriptors open then and 32 in
//     reserve, and logs it, as redis-server does; a client past it gets
//     "-ERR max number of clients reached" and is closed. When accept fails
//     for want of a descriptor anyway, a spare one held for the purpose
//     takes the waiting client and refuses it the same way, waiting at
//     most 100 ms for one, so that no client hangs in the backlog and the
//     accept loop neither spins nor stops (TestFdLimitCapsMaxClients,
//     TestAcceptOutOfFdsRefuses, each a child process under a lowered
//     limit).
//   - S17: an idle connection holds no read or write buffer: both are lent
//     by a pool per size while bytes are read or replies written, and the
//     read buffer goes back before the connection waits for input
//     (outConn.ReadIdle: a read that finds nothing gives it back, and the
//     read the poller's wakeup runs takes one again; a command's
//     arguments cost what resp R5 says). After a command of more than 4096
//     arguments, or a grown read buffer, the connection keeps none of it.
//     Once 16 MiB of such buffers (or closed connections, 16 KiB each) were
//     let go and a second passed without more, the free heap pages are
//     returned to the OS (debug.FreeOSMemory, at most every 2 s: Go's own
//     scavenger stops at the last collection's heap goal, and an idle
//     server makes no collection). A big bulk a SET copies into DRAM is
//     received off the heap into a buffer the connection gives back once
//     its reply was flushed, for the next big bulk (resp R6); the same
//     tick unmaps the free ones unused for 10 s (INFO memory
//     big_bulk_buffer_bytes) (TestIdleConnectionsHoldNoBuffers,
//     TestManyArgumentsMemory; scripts/bench-conn-memory measures RSS
//     beside redis-server).
//   - S18: receiving a big bulk shares the CPU: the resp.Reader yields
//     after each MiB received, and copies it a piece of at most a MiB at a time
//     with a yield between pieces (one memmove of tens of MiB cannot be
//     preempted, and would hold up the other goroutines of its P and every
//     stop-the-world of the collector) (TestPingServedDuringBigSet: PINGs
//     from another client are answered while a 64 MiB SET arrives;
//     scripts/bench-big-values measures their latency beside
//     redis-server).
//   - S19: an aggregate value that does not decode (value/hash's VH2,
//     value/list's VL2) is answered with an error by every command that
//     reads it and is left as it is (TestCorruptHashIsRefused).
//   - S20: the hash commands and the string read-modify-writes (INCR..
//     BITPOS) answer as redis-server 7.0 does, reply for reply, errors and
//     argument order included (TestStringsAndHashesMatchRedis, and
//     TestStringsAndHashesModel: random sequences against a redis-server);
//     a write that would pass server.max_hash_fields or max_value is
//     refused with an error before the new value is allocated and changes
//     nothing (TestAggregateLimits); HSCAN returns a field present for the
//     whole scan exactly once (TestHScanLargeHash); HRANDFIELD keeps to its
//     count's contract (TestHRandField); INFO keyspace's expires counts
//     the keys with a TTL (TestInfoKeyspaceExpires).
//   - S21: each read-modify-write is one tier.Cache.Update: concurrent INCR,
//     INCRBY, HINCRBY, HINCRBYFLOAT and HSET from many connections lose no
//     update, and keep the key's TTL (GETSET clears it, as SET)
//     (TestCountersAreAtomic). MSETNX sets all of its keys or none, and
//     holds the transaction lock exclusively (as EXEC) so that no command
//     sees part of it (TestMSetNXAllOrNothing).
//   - S22: the list commands answer as redis-server 7.0 does, byte for
//     byte in RESP2 and RESP3 (TestListDifferential, random sequences run
//     on both); a list write keeps the key's expiry and an emptied list is
//     removed (TestListKeepsTTL); a write past MaxListElements or
//     MaxValueBytes is refused before the value is built and changes
//     nothing (TestListLimits); concurrent pushes lose nothing
//     (TestListConcurrentPush). A client blocked in BLPOP, BRPOP, BLMOVE or
//     BRPOPLPUSH holds no lock while it waits and is woken by the push, not
//     by polling: the clients blocked on a key are served in the order they
//     blocked, each element goes to exactly one of them, a push of several
//     serves several, and the reply is [key, element] (TestBlockingFIFO,
//     TestBlockingExactlyOnce, TestBlockingMove); at the timeout the reply
//     is a nil array, and inside EXEC nothing blocks (TestBlockingTimeout);
//     a client that hangs up while blocked, or a server that closes, ends
//     the wait and takes nothing (TestBlockingClientCloses). A RENAME or
//     COPY that makes a key a list or a sorted set serves its blocked
//     clients as a push does (TestRenameAndCopyWakeBlockedClients). INFO's blocked_clients
//     counts them.
//   - S23: LMOVE and RPOPLPUSH hold the transaction lock exclusively, as
//     MSETNX does, so the element is on one of the two lists for every
//     other connection at every moment (TestLMoveIsOneStep). A move that
//     dst's limits refuse is refused before src is touched: src keeps its
//     element and its TTL (TestLMoveRefusedChangesNothing).
//   - S24: a numeric argument near the int64 limits gets Redis 7.0's
//     answer, never a wrapped sum nor a panic: SETRANGE's offset plus its
//     length, BITCOUNT's and BITPOS's ranges, EXPIRE and PEXPIRE times and
//     the times of SET, SETEX, PSETEX and GETEX up to what Redis takes
//     (milliseconds that do not overflow when added to now; the AT forms
//     from 0), refused beyond (TestHugeArgumentsDoNotOverflow,
//     TestNumbersMatchRedis).
//   - S26: the values MGET replies name by reference (resp.Writer.BulkShared)
//     sit in chunks the connection holds (tier.Chunks) until every byte
//     of those replies is with the socket or copied aside (conn.flush),
//     and only then go back to a pool shared by every connection; a
//     pipelined GET batch's chunks go back once its values are copied into
//     the reply. So a busy MGET path neither clears fresh memory nor makes
//     garbage, and no reply is ever written from a chunk another
//     connection has taken (TestMGetChunksOutliveTheirReply).
//   - S27: a Server made by NewLoading listens before it has its cache.
//     Until Loaded hands it one, it answers PING, ECHO, TIME, INFO and the
//     connection commands (servedWhileLoading), INFO with loading:1 and
//     the progress (Redis's loading_* fields, and tiercache's
//     loading_loaded_keys, loading_elapsed_seconds and loading_method),
//     and every other command, pipelined or queued in MULTI (EXEC then
//     aborts), Redis's "-LOADING Redis is loading the dataset in memory",
//     which clients recognise; nothing reads the cache before Loaded. From
//     Loaded on every command runs, on connections made before it as
//     after, and INFO says loading:0 (TestLoading; clients connecting
//     while Loaded runs, TestLoadedWhileConnecting; cmd/tiercache's
//     TestLoadingSidecar end to end). The check costs a connection one
//     atomic load per command that touches data until it has seen the
//     cache, then a test of its own flag; a server made by New never
//     loads.
//   - S28: INFO's tenants section (after tiers) has one line per tenant of
//     tier.Stats.Tenants, the default tenant first, as Redis prints a
//     keyspace: tenant_<name>:<Info>=<value>,... with every per-tenant row
//     of statsTable (TenantLabel) in table order, none without tenants
//     (TestInfoTenants); /metrics exports the same rows labelled
//     tenant="<name>" (cmd/tiercache C6, C11).
//   - S29: FLUSHALL and FLUSHDB take SYNC or ASYNC (any case) and nothing
//     else; a bad argument answers ERR syntax error and flushes nothing.
//     The next command of any client sees no key; SYNC, and no argument
//     (Redis's default), answer once the cache freed what it removed
//     (tier.Cache.WaitPurge: INFO's flush_purging is 0 and flush_purged counts
//     them), ASYNC at once (TestFlushAllAsyncSync).
//   - S30: with Options.Listeners set, Start serves exactly those
//     listeners (one with RequireAuth as a TCP listener, S7) and opens no
//     socket of its own; Close closes them (TestStartServesGivenListeners,
//     TestListenersValidate).
//   - S31: a Lua script (EVAL, EVALSHA and their _RO forms, package
//     script) runs holding the transaction lock exclusively, as EXEC: no
//     command of another connection runs inside it (TestScriptIsAtomic);
//     its commands run on a connection of its own with Redis's refusals,
//     and every reply and error, sandbox escapes included, is
//     redis-server 7.0's byte for byte in RESP2 and RESP3
//     (TestScriptsMatchRedis, TestScriptSandboxLeaksNothing). Past
//     busy-reply-threshold (each script's own, counted from its start)
//     other commands answer BUSY (those flagged allow_busy excepted),
//     SCRIPT KILL ends a script that called no write command and answers
//     UNKILLABLE otherwise (TestBusyScriptAndKill,
//     TestBusyAfterAnEarlierRun); a threshold is held at most 2^62 ns, so
//     a start plus it stays within an int64 (TestHugeBusyThreshold);
//     Close stops a script still running after ShutdownTimeout.
//   - S32: a publisher never waits for a subscriber: PUBLISH appends to
//     each subscriber's push queue. The queue of a connection that waits
//     for input with nothing unsent (idle: no command running) is written
//     by the server's pusher, as much as the socket takes without
//     blocking, every message queued since its last write at once;
//     otherwise, and for the rest, the connection is woken and its
//     goroutine writes the queue between its replies before each flush
//     (pushes.go, pushwrite.go). Each subscriber gets its messages in
//     order and never ahead of a reply already produced
//     (TestIdleSubscriberWrittenDirectly), also while it is blocked in a
//     command such as BLPOP (TestPushesReachABlockedClient). Replies and messages are
//     Redis's in RESP2 (subscribed mode) and RESP3 (pushes)
//     (TestPubSubMatchesRedis).
//     A subscriber whose unread output passes client-output-buffer-limit
//     pubsub (hard, or soft for its seconds) is closed, counted
//     (pubsub_output_limit_disconnections) and logged, while the others
//     receive every message (TestSlowSubscriberIsDisconnected); a client
//     that subscribes to nothing is bounded by MaxOutputBytes instead
//     (TestTrackingClientIsNotPubSubLimited).
//   - S33: with notify-keyspace-events on, each write command that
//     changed something publishes Redis 7.0's events in its order, inside
//     scripts and EXEC too (notify_events.go; TestKeyspaceNotificationsMatchRedis),
//     and the cache's removals publish expired and evicted (tier T46,
//     events.go; TestRemovalsNotifyAndInvalidate).
//   - S34: a tracking client (CLIENT TRACKING, every mode) is sent an
//     invalidation, as redis-server 7.0 sends it, for every change of a
//     key it tracks: a command's (in a script or EXEC too), FLUSHALL, an
//     expiry, an eviction out of the cache, another sidecar's change
//     through the remote tier (TestTrackingMatchesRedis,
//     TestRemovalsNotifyAndInvalidate, TestTrackingHearsOtherSidecars); a
//     move between tiers sends none. A read-only command's keys are
//     remembered before it reads them, so a write beside the read
//     invalidates what it read (TestTrackingReadBesideWrite). The table keeps at most
//     tracking-table-max-keys keys, invalidating others to make room
//     (TestTrackingTableBounded); the keys a closed client read are
//     forgotten lazily, without keeping its connection alive
//     (TestTrackingForgetsClosedClients). If the cache's removals outrun the
//     events goroutine, every tracking client is told every key changed.
//   - S35: CONFIG SET changes notify-keyspace-events, busy-reply-threshold
//     (lua-time-limit), tracking-table-max-keys and
//     client-output-buffer-limit pubsub at once, accepts and keeps Redis's
//     encoding knobs, applies all of a command's parameters or none, takes
//     each number within Redis's range and answers its range error byte for
//     byte, reads sizes as memtoull does and checks every name before any
//     value (a name given twice is a duplicate; a parameter and its alias
//     are two names, applied in order, as Redis 7.0's alias configs),
//     and refuses every other change naming the parameter and why
//     (TestConfigSet, TestConfigSetValuesAsRedis); CONFIG GET answers an
//     exact name as typed (TestConfigGetEchoesName); a pubsub soft_seconds
//     of any size is a wait, not an overflow (TestPubSubSoftSecondsHuge).
//   - S40: the set commands (SADD ... SSCAN, the algebra and its STORE
//     forms) answer as redis-server 7.0, byte for byte in RESP2 and RESP3,
//     a set's members in any order and random picks by shape
//     (TestSetDifferential). A set is one record (value/set), changed in
//     one Update; a STORE replaces its destination without an expiry;
//     SMOVE and the algebra run exclusively, so they read one moment.
//     SMOVE touches for WATCH its destination only when the member was
//     added there (TestSMoveWatchMatchesRedis).
//   - S41: the sorted-set commands (ZADD with its options ... ZINTERCARD,
//     BZPOPMIN, BZPOPMAX, ZMPOP and BZMPOP) answer as redis-server 7.0,
//     scores printed as 7.0 prints a double ("%.17g", "inf"), a -0 stored
//     as 0 in a small sorted set as its listpack does (TestZSetDifferential;
//     ZSCAN and random picks compared in any order or by shape;
//     TestZMPopMatchesRedis for ZMPOP's argument errors, BZMPOP served,
//     timed out, in EXEC and in scripts, and WATCH).
//   - S42: every expiry time redis-server accepts (int64 milliseconds,
//     past the year 2262 too) orders under EXPIRE's GT and LT and reads
//     back through EXPIRETIME, PEXPIRETIME, TTL and PTTL as in
//     redis-server 7.0 (TestExpiriesPast2262MatchRedis; tier T43), in
//     Redis's unit: PTTL is the expiry's millisecond less the clock's,
//     TTL that rounded to seconds, and GT and LT compare milliseconds
//     (TestTTLInMilliseconds).
//   - S43: hash field expiry: the HEXPIRE family, the HTTL family and
//     HPERSIST answer, and publish their keyspace events, as a Redis 7.4
//     redis-server did, byte for byte in RESP2 and RESP3
//     (TestHashFieldExpiryMatchesRedis74); with HGETDEL, HGETEX, HSETEX
//     and every other hash command, clients at once get the replies of a
//     model in which an expired field is seen by no command, in DRAM and
//     from cold, and once every expiry passed each hash left without
//     fields is gone (TestHashFieldExpiryModel: the sweeper, whose index
//     of hashes is never later than a hash's earliest expiry); expiries
//     survive a restart (TestHashFieldExpiryRestart).
//   - S45: a large hash or list goes to the cold tier in pieces (ColdCut:
//     a hash's fields by their hash bits, a list at its elements, about
//     3 KiB a piece); while only cold holds it, HGET, HMGET, HEXISTS,
//     HSTRLEN, HLEN, LRANGE, LINDEX and LLEN read its piece table and
//     the pieces they need (tier T48): of a 10,000-field hash and a
//     100,000-element list, one to three 4 KiB blocks, and the answers of
//     the whole value (TestColdAggregateReadsItsPieces).
//   - S47: a large hash with field expiries goes to cold in pieces too,
//     each field with its expiry; while only cold holds it, HGET, HMGET,
//     HEXISTS, HSTRLEN, HTTL, HPTTL, HEXPIRETIME and HPEXPIRETIME read
//     the table and the pieces of their fields, HLEN the table and the
//     pieces holding an expiry; an expired field is answered by none
//     (TestColdHashWithFieldExpiryReadsItsPieces).
//   - S48: so are a tenant's large hash and list in its own cold
//     namespace (coldstore CS10), read from that namespace alone
//     (TestTenantColdAggregateReadsItsPieces).
//   - S49: MEMORY reads its arguments as redis-server 7.0 does, every
//     error and an absent key's nil byte for byte, before it looks the key
//     up; USAGE answers tier.Cache.MemoryUsage (tier T51)
//     (TestMemoryMatchesRedis).
//   - S46: an aggregate in the DRAM tiers is a live structure changed in
//     place (tier T44): every hash, list, set and sorted-set command that
//     changes one key is one Cache.Edit, one that reads one key a
//     Cache.Read; a command that answers an error changed nothing (limits
//     are checked before the structure changes; a hash holding expired
//     fields, or an edit that sets field expiries, is changed in a copy
//     that replaces it only once changed and within the limits), a hash's
//     readers skip its expired fields and its writers see it without
//     them, the sweeper purges it in one Cache.Edit, and the differential
//     tests against redis-server run on the live structures
//     (TestListDifferential, TestSetDifferential, TestZSetDifferential,
//     TestStringsAndHashesMatchRedis, TestTypedModelConcurrentCold,
//     TestHashFieldExpiryModel with the hashes evicted to cold and loaded
//     back, TestHashFieldExpiryMatchesRedis74).
//   - S50: no value, key, field, member, queued command or message refers
//     to an off-heap buffer once it went back (resp R6: a big bulk's at
//     the flush after its command; a cold big value's read buffer at the
//     flush after its reply): every command that keeps a big argument
//     copies it. TestBigArgumentsOutliveTheirBuffers sends each such
//     command big arguments with Options.PoisonBigBuffers set (a buffer
//     going back is overwritten) and reads every one back intact.
//   - S51: with Options.ObserveLatency set, a run of the same command
//     pipelined in one read, at most 16 (pendingMax), is observed with one
//     clock read and one call, each of its commands counted once with an
//     equal share of the run's time; a different command, EXEC (whose
//     commands are observed one by one), a command that blocked, and a
//     read end a run, and the wait for input is never part of it. Its
//     commands take the reading before the first as the cache's time
//     (conn.now). A run is observed before the connection reads again or
//     closes (TestPipelinedCommandsObservedTogether).
//   - S52: the SETs of one key to a value with no option, wholly buffered
//     behind a SET, up to the first other command, are taken with
//     Reader.NextSet instead of ReadCommand and dispatch (setRun) and each
//     run as dispatch runs it (runWrite): the replies byte for byte, the
//     errors and limits (max_bulk, max_value), the keys and the command
//     counts are those of the same stream run one by one, for valid and
//     malformed frames and any read boundaries (resp R3;
//     TestSetRunMatchesOneByOne). A push waiting for the client ends the
//     run, so it goes out before the next reply, as dispatch sends it
//     (TestSetRunPushesInOrder); each SET's BCAST invalidations go out
//     before the next SET runs, and tracking (every mode, to the client
//     and to others), WATCH, MULTI, keyspace events and AUTH around a run
//     give every connection what one by one gives (TestSetRunScenarios).
//   - S53: SHUTDOWN takes Redis's arguments and errors (a syntax error,
//     ABORT with nothing to abort, refused in MULTI before queueing as
//     Redis's no_multi commands are, and in scripts), calls
//     Options.Shutdown once and closes its connection without a reply;
//     with no Options.Shutdown it answers an error and the server goes on
//     (TestShutdown). It is served while loading (TestShutdownWhileLoading).
//     While a script runs past busy-reply-threshold only SHUTDOWN NOSAVE
//     is taken; any other answers BUSY, as in Redis
//     (TestShutdownDuringBusyScript).
//   - S54: CLIENT LIST has a line for each open connection (CLIENT INFO's:
//     redis-server 7.0's fields in its order, then lib-name and lib-ver;
//     what it set with SETNAME, SETINFO, HELLO and NO-EVICT read without a
//     lock from other connections: clientMeta; its subscriptions, MULTI
//     queue, blocked command, tracking, idle time and last command (a
//     container's subcommand: "config|get") as others see them; the buffer fields 0 but omem and tot-mem, its unsent
//     replies: TestClientInfoFieldsMatchRedis), TYPE and ID select as in
//     Redis 7.0; CLIENT KILL closes what its filters select (the caller
//     only with SKIPME no, after its reply), ending a blocked command as a
//     hangup does, its waiter out of the registry before KILL answers (no
//     push after it serves the killed client: TestClientListAndKill's
//     RPUSH); a killed client is gone from LIST and KILL at once, and
//     of what it sent only a command already running when killed may
//     still finish: neither what it pipelined behind nor a command waiting
//     for the transaction lock (a SET, EXEC or EVAL behind another
//     client's script) runs (TestClientKillEndsPipeline,
//     TestClientKillWhileWaitingForLock; a lagging blocking pop of a killed
//     client pops nothing, TestKilledClientPopsNothing); their refusals and
//     NO-EVICT's are redis-server's (TestClientListAndKill,
//     TestClientListKillErrorsMatchRedis).
//   - S55: BITOP, BITFIELD, BITFIELD_RO and LCS answer as redis-server
//     7.0 does, byte for byte in RESP2 and RESP3: every argument error's
//     text and order, WRONGTYPE (LCS's own error), OVERFLOW's WRAP, SAT
//     and FAIL with Redis's range checks, # offsets, the replies of IDX
//     and WITHMATCHLEN, in MULTI and in scripts (TestBitOpsMatchRedis;
//     TestBitOpsDifferential: random BITFIELD subcommand lists, BITOP and
//     LCS on random strings, compared reply for reply and string for
//     string). A refused command changes nothing: BITFIELD parses every
//     subcommand before its one Cache.Update. BITFIELD's write that
//     changed no field touches nothing (no WATCH, no event) though it may
//     make or grow the string, as in Redis; BITOP touches only its
//     destination, which it replaces whatever it held, without an expiry,
//     or deletes when the result is empty ("set" or "del";
//     TestKeyspaceNotificationsMatchRedis, TestTrackingMatchesRedis,
//     TestClusterMatchesRedis). BITOP holds at most one source and the
//     result; a BITFIELD offset past max_value gets Redis's bit offset
//     error, a field ending past it the value limit's, and an LCS table
//     past it Redis's proto-max-bulk-len error (TestBitOpsLimits). Their
//     keys are their tenant's (TestBitOpsTenants) and their writes reach
//     other sidecars through the remote tier (TestBitOpsThroughRemote);
//     bitfield.go's arithmetic is checked on its own too
//     (TestBitfieldArithmetic).
//   - S56: RESET, CLIENT REPLY, CLIENT UNBLOCK and LASTSAVE answer as
//     redis-server 7.0 does, reply for reply in RESP2 and RESP3. RESET
//     (cmd_reset.go) discards MULTI, unwatches, leaves every channel,
//     pattern and shard channel without a notification (S58's
//     TestShardedPubSubMatchesRedis), turns tracking off and the
//     connection back to RESP2 with no name and CLIENT REPLY OFF undone,
//     and asks for AUTH again where its listener requires it; it runs at
//     once inside MULTI and on a subscribed RESP2 connection, and CLIENT
//     INFO shows the state it left (TestResetMatchesRedis,
//     TestResetRequiresAuthAgain). Under CLIENT REPLY OFF, and for the one
//     command after SKIP, the connection's resp.Writer is muted (resp R9):
//     no reply, error or QUEUED goes out, errors count as sent, pushes
//     (messages, subscription confirmations, invalidations) still go out,
//     and nothing else changes; the GETs and SETs pipelined behind one are
//     taken together (getRun, setRun) only while no SKIP is pending, so
//     each reply is dropped or sent as one by one
//     (TestClientReplyMatchesRedis). CLIENT UNBLOCK takes the waiter out of
//     the block registry under its mutex, as a push serving it or its
//     timeout does, so exactly one of them answers the blocked client
//     (TestClientUnblockMatchesRedis, TestClientUnblockRacesPush under
//     -race). LASTSAVE, and INFO persistence's rdb_last_save_time, is the
//     server's start time (TestLastSave).
//   - S57: LMPOP and BLMPOP answer as redis-server 7.0, byte for byte in
//     RESP2 and RESP3: every argument error with its text in its order,
//     [key, [element...]] from the first key holding a list (WRONGTYPE for
//     another kind before it), a nil array (RESP3 _) when none does, at
//     BLMPOP's timeout, and at once in MULTI and in scripts
//     (TestLMPopMatchesRedis; TestListDifferential's random sequences). A
//     blocked BLMPOP waits in BLPOP's queue and is woken by another
//     connection's push (after an EXEC's), in the order the clients
//     blocked, with up to its COUNT; LMPOP touches for WATCH only the key
//     it popped, and invalidates it for tracking clients
//     (TestLMPopMatchesRedis); its events are lpop/rpop and del as Redis's
//     (TestKeyspaceNotificationsMatchRedis, TestBlockedPopEventsMatchRedis).
//     What was served to a client that hung up goes back in its order
//     (TestLMPopServedToAGoneClientGoesBack). WAIT answers as a 7.0
//     master without replicas: 0 at once for numreplicas ≤ 0 and in
//     MULTI, else 0 at its timeout, its errors Redis's, refused in scripts
//     (TestWaitMatchesRedis); a blocked BLMPOP or WAIT ends on CLIENT
//     KILL, a hangup and Server.Close, taking nothing
//     (TestBlockedLMPopAndWaitEnd).
//   - S58: sharded pub/sub is Redis 7.0's: shard channels are a namespace
//     of their own (SPUBLISH reaches only SSUBSCRIBE subscribers, as
//     smessage, PUBLISH never them); the count of an ssubscribe or
//     sunsubscribe reply is the connection's shard channels alone, that
//     of the other kinds its channels and patterns; a RESP2 connection
//     with any subscription left, shard channels included, stays in
//     subscribed mode; SSUBSCRIBE inside EXEC is refused, SPUBLISH runs
//     in MULTI and from redis.call; a RESP3 client subscribed to what it
//     publishes gets the message before the answer (of PUBLISH, SPUBLISH,
//     a script; inside EXEC's array); PUBSUB SHARDCHANNELS and SHARDNUMSUB,
//     CLIENT LIST's ssub, INFO's pubsubshard_channels and COMMAND GETKEYS
//     (no key: the channels are not keys) answer as redis-server byte for
//     byte in RESP2 and RESP3 (TestShardedPubSubMatchesRedis), and so
//     does COMMAND INFO of the pub/sub commands, may_replicate hidden as
//     Redis hides it (TestPubSubCommandInfoMatchesRedis). In cluster
//     mode a shard channel hashes as a key (CL2: CROSSSLOT for channels of
//     two slots, a script's slot; TestShardedPubSubClusterMatchesRedis;
//     go-redis's ClusterClient, cmd/tiercache C20). A shard subscriber is
//     bounded by client-output-buffer-limit pubsub as any subscriber
//     (TestSlowSubscriberIsDisconnected/shard) and gets no message of a
//     shard channel after SUNSUBSCRIBE's answer for it, however fast it
//     is published (TestNoMessageAfterUnsubscribe/shard). SPUBLISH, like
//     PUBLISH, reaches this server's subscribers only, not another
//     sidecar's.
//   - S59: SLOWLOG holds, newest first, at most slowlog-max-len entries
//     (trimmed at the next entry, as Redis) of the commands whose time was
//     at least slowlog-log-slower-than µs (-1: none; both CONFIG SET and
//     Options): Redis 7.0's fields, ids going on across RESET, at most 32
//     arguments of at most 128 bytes each cut as Redis cuts them, AUTH's,
//     HELLO's and CONFIG SET requirepass's secrets "(redacted)" where
//     Redis redacts them, a script's commands as Redis's script client
//     ("?:0"), EXEC's commands one by one and not EXEC, commands refused
//     before running (arity, unknown subcommand) not at all; SLOWLOG's
//     replies and errors are redis-server's in RESP2 and RESP3
//     (TestSlowlogMatchesRedis). The time is the latency observation's
//     (S51), with no clock read of its own: a pipelined run of the same
//     command is one entry, its time each command's share, its arguments
//     the run's last command's, kept (32 slice headers, no copy) until
//     the run is observed, before the Reader moves its buffer
//     (TestSlowlogPipelinedRun). While slowlog-log-slower-than is not -1
//     commands are timed without ObserveLatency too.
//   - S60: a MONITOR connection receives, as redis-server 7.0's, a line
//     for every command another client (or a script, "lua") ran, once it
//     ran (EVAL and Redis's other skip_monitor commands before), with
//     sdscatrepr's quoting and redis-server's redactions, and none for
//     admin commands, commands refused before running or queued in MULTI
//     (EXEC shows them after); MONITOR inside MULTI answers Redis's error
//     in EXEC (TestMonitorMatchesRedis, RESP2 and RESP3). The lines go
//     through the monitor's push queue (pushes.go): no client waits for a
//     monitor, and one that reads too slowly is closed once its unsent
//     lines pass MaxOutputBytes, counted in
//     client_output_buffer_limit_disconnections
//     (TestMonitorOutputLimit). With no monitor a command costs one atomic
//     load (the monitors' list, nil), and pipelined GETs are answered
//     together (S11) only then.
//   - S61: PFADD, PFCOUNT and PFMERGE answer as redis-server 7.0 (the
//     7.0.15 of Debian 12, with the CVE-2025-32023 fix) does, byte for
//     byte in RESP2 and RESP3, and store the same strings: a GET of a key
//     they made shows redis-server's bytes, and a string copied from
//     redis-server counts and merges the same (TestHLLMatchesRedis:
//     errors, WRONGTYPE and "Key is not a valid HyperLogLog string value."
//     for strings that are not HyperLogLogs, INVALIDOBJ for corrupt sparse
//     ones, cached cardinalities, MULTI, scripts, WATCH, COMMAND GETKEYS,
//     hll-sparse-max-bytes; TestHLLDifferential: random sequences going
//     dense, with corrupting SETRANGEs, every reply and every key's string
//     compared after each command; TestHLLCorruptSparseDifferential:
//     random valid and corrupt sparse strings through every command;
//     TestHLLStringsCrossServers: strings copied between the servers both
//     ways). A refused PFADD changes nothing (Redis keeps the registers
//     raised before the corrupt spot). PFCOUNT of one
//     key that computes the cardinality stores it in the header as Redis
//     does: WATCH and tracking clients are touched, no event is sent, and
//     its caller remembers the key after the write, so only others are
//     told (TestHLLTrackingMatchesRedis); PFADD sends "pfadd" when it
//     changed something, PFMERGE "pfadd" on its destination only, which
//     alone it touches (TestKeyspaceNotificationsMatchRedis,
//     TestClusterMatchesRedis for CROSSSLOT). Their keys are their
//     tenant's (TestHLLTenants) and their writes, PFCOUNT's cache
//     included, reach other sidecars through the remote tier
//     (TestHLLThroughRemote). PFDEBUG answers as Redis's and, like it,
//     stores GETREG's and TODENSE's dense string silently (no WATCH, no
//     event); PFSELFTEST runs value/hll's check, lighter than Redis's
//     (TestHLLMatchesRedis).
//   - S62: hashes, lists, sets and sorted sets that DRAM cannot hold,
//     small and of thousands of elements, with elements past the hot
//     tier's largest value, read and written in the cold tier's pieces,
//     demoted and promoted, renamed and copied, in a tenant or not, with
//     field expiries, answer every command as redis-server 7.0 does
//     (orderless replies sorted; field expiry as Redis 7.4 defines it),
//     and every key holds what redis-server's holds after every clean
//     restart (drain, writethrough) and every SIGKILL (writethrough), while
//     another connection's reads overlap; deleting every key leaves no
//     key, DRAM byte or cold record behind (TestAggregatesColdModel).
//   - S63: request lines are cut and split where redis-server 7.0 cuts
//     and splits them (resp R11): a long "*"/"$" header is an invalid
//     length, "expected '$'" shows the byte sent, an inline line of
//     64 KiB is read, inline words keep a vertical tab or form feed and
//     take quotes inside them, and an unknown command's error quotes its
//     arguments up to redis-server's 128 bytes; each answered byte for
//     byte as redis-server answers it (TestLinesMatchRedis).
//   - S64: before AUTH, a multibulk count past 10 and a bulk past 16 KiB
//     get redis-server 7.0's "unauthenticated multibulk length" and
//     "unauthenticated bulk length" (resp R10), an inline command has no
//     such limit, and a command is checked as its processCommand does:
//     its name (unknown command), its arity (wrong number of arguments),
//     then the authentication (NOAUTH) (TestPreAuthMatchesRedis).
//   - S66: the geo commands answer as redis-server 7.0 does, byte for byte
//     in RESP2 and RESP3: a GEOADD stores the scores Redis's stores (so
//     ZRANGE, ZSCORE and the rest see the same sorted set) and answers,
//     refuses and notifies as the ZADD it is ("zadd"); GEOPOS, GEODIST and
//     GEOHASH print coordinates, distances and geohashes as Redis does;
//     the searches find the same members in the same order (Redis's nine
//     cells, its stable sort, its pqsort for COUNT, so members at one
//     place too), with every option and every error in Redis's order, and
//     their STORE forms store the same sorted set, publish
//     "georadiusstore" or "geosearchstore" (or "del") on the destination
//     and touch nothing else; GEORADIUS's STORE keys are where Redis's key
//     specs put them (COMMAND GETKEYS, CROSSSLOT, movablekeys); MULTI,
//     scripts and WATCH as Redis (TestGeoDifferential: random points and
//     searches with every option, every reply and every key compared after
//     each command; TestGeoMatchesRedis: edge cases, types, STORE, MULTI,
//     scripts, WATCH, key positions; TestKeyspaceNotificationsMatchRedis;
//     TestGeoTrackingMatchesRedis). A distance may differ in its last bits
//     (value/geo's caveat: glibc's sin, cos and asin): the differential
//     test allows a stored distance's 16th digit and a printed one's 4th
//     decimal to differ by one.
//   - S68: SORT and SORT_RO answer as redis-server 7.0, byte for byte in
//     RESP2 and RESP3, on lists, sets and sorted sets: numeric weights read
//     as its strtod (ERANGE, a subnormal not exact included, refused as
//     "One or more scores can't be converted into double"), ALPHA, ASC and
//     DESC, LIMIT's clamps, BY and GET patterns ('*' and "->" searched up to
//     a NUL, GET #, missing or other-kind keys a weight of 0 or nil), BY
//     nosort keeping a list's or sorted set's order and sorting a set as
//     strings when it is stored or read by a script, STORE of a list (the
//     destination deleted for an empty result, "sortstore", "new" and
//     "del" events, WATCH and tracking of the destination only, a client
//     blocked on it served), option errors in Redis's order, SORT refused
//     in a read-only script and SORT_RO not, COMMAND GETKEYS with the last
//     STORE's destination (TestSortMatchesRedis, TestSortEdgesMatchRedis);
//     in cluster mode a BY pattern with '*' and every GET are refused with
//     7.0's texts, a destination of another slot is CROSSSLOT
//     (TestSortClusterMatchesRedis); the stored list reaches other
//     sidecars through the remote tier (TestSortThroughRemote).
//   - S69: a SORT's result (reply or stored list) is refused, with
//     nothing stored, once it grows past max_value bytes, before it is
//     all built; a stored one past the list elements limit is refused
//     with the list's error (TestSortBounded). SORT holds the transaction
//     lock exclusively only when it stores or reads keys by a BY or GET
//     pattern (sortExclusive, TestSortLocks): a SORT of one key runs
//     beside other commands.
//   - S73: DUMP answers a key's value as a payload redis-server 7.0's
//     RESTORE makes the same value of, and RESTORE makes of redis-server
//     7.0's DUMP payload the value it had, for every type and encoding
//     7.0 writes (strings raw, int-encoded and LZF-compressed; lists as a
//     quicklist of listpacks and plain nodes; intset and hashtable sets;
//     listpack and skiplist sorted sets, scores -inf to +inf; listpack
//     and hashtable hashes), and the ziplist payloads of Redis 3.2 to
//     6.2 that 7.0 still restores; DUMP of a missing key is nil; a TTL,
//     relative or ABSTTL, is the key's; RESTORE-ASKING (a cluster-mode
//     MIGRATE's) is RESTORE (TestDumpRestoreMatchRedis,
//     TestRestoreZiplistsMatchRedis; the payload itself is value V5).
//   - S74: RESTORE answers as redis-server 7.0's restoreCommand, in its
//     order: the options (REPLACE, ABSTTL, IDLETIME, FREQ, their ranges
//     and syntax), BUSYKEY without REPLACE, the TTL, the payload's
//     version and checksum, its data ("Bad data format": an unknown or
//     pre-7.0 type, an empty aggregate, a duplicate member, a NaN score);
//     a TTL already past makes no key and with REPLACE deletes the old
//     one ("del"); the events are Redis's ("new", "restore"; no "expire");
//     a RESTORE that answers an error changes nothing
//     (TestRestoreErrorsMatchRedis, RESP2 and RESP3).
//   - S75: a payload whose value is past tiercache's limits (elements
//     past the largest of the list, set and hash limits, or max_value
//     bytes as it is read; then its kind's own limit) is refused before
//     the value is built, with an error naming the limit, and the key
//     keeps what it held (TestRestoreLimits).
//   - S76: DUMP and RESTORE run in MULTI and in scripts, RESTORE
//     touches WATCHed keys and invalidates tracking clients; DUMP of a
//     hash with a field expiry left (HEXPIRE) is refused with
//     errDumpFieldTTL, since 7.0's payload has no place for it, and of
//     one whose fields were persisted answered (TestDumpRestoreEverywhere).
//   - S77: a command refused before it runs or is queued (its arity,
//     NOAUTH, -LOADING, the subscribed context, a busy script) flags an
//     open MULTI block; a refused EXEC answers EXECABORT with the refusal
//     and discards the block and its WATCHes, as redis-server 7.0's
//     rejectCommand (TestRejectedExecDiscards, TestBusyScriptAndKill).
//   - S78: a BCAST client gets, after each command, one invalidation for
//     each of its prefixes that keys changed under, in the prefixes'
//     order with the keys sorted, as redis-server 7.0 sends one per prefix
//     (TestTrackingMatchesRedis).
//   - S79: INFO commandstats counts each command's calls, rejected calls
//     (refused before it runs or is queued) and failed calls (ran and
//     answered an error of its own: EXEC is not failed by the commands it
//     ran) as redis-server 7.0; the section is in INFO all and
//     everything, not in the default (TestCommandStatsMatchRedis).
//   - S80: a command that blocked is timed, counted and put in the slow
//     log once it is served or times out, with the arguments it was sent
//     with and the time it ran before and after its wait, not the wait;
//     the commands after it are timed from then (TestSlowlogBlockedCommand,
//     after Redis's updateStatsOnUnblock).
//   - S81: a read-only command a script calls makes the script's caller
//     track, in the default mode, the keys the script declared (KEYS),
//     not those the command names; a script that calls none tracks
//     nothing, EVAL_RO and EVALSHA_RO track nothing of their own; other
//     read-only commands track every key they name, after a numkeys
//     argument too (TestTrackingScriptDeclaredKeys, against redis-server).
//   - S83: CONFIG SET tracking-table-max-keys shrinks the tracking table
//     to the new limit at once, its clients told of each key dropped, as
//     Redis's trackingLimitUsedSlots (TestTrackingTableBounded).
//   - S84: INFO's tracking_total_keys, tracking_total_items and
//     tracking_total_prefixes count as redis-server 7.0's
//     (TestTrackingInfoTotals).
//   - S85: FLUSHALL empties the tracking table, and a write drops its
//     keys from it, also while no client tracks, so that one turning
//     tracking on again hears nothing of keys read before
//     (TestTrackingFlushWithNoTracker).
//   - S86: a container command's subcommand (CLIENT, CONFIG, COMMAND,
//     OBJECT, MEMORY, SLOWLOG, SCRIPT, FUNCTION, PUBSUB, CLUSTER: the
//     subcommand table, subcommands.go, with Redis 7.0's arities) is
//     checked before it runs or is queued, as a command of its own: an
//     unknown one answers "unknown subcommand" (before NOAUTH, as an
//     unknown command), a wrong argument count names "config|get"; both
//     flag an open MULTI block, so that EXEC answers EXECABORT; in a
//     script an unknown subcommand is an unknown command, and the
//     subcommand's arity and noscript flag refuse it, as redis-server
//     7.0's (TestSubcommandRefusedWhenQueued, RESP2 and RESP3).
//   - S87: INFO commandstats counts a subcommand's calls, rejected and
//     failed calls, and time, under its own name ("cmdstat_client|list"),
//     the container's own arity refusal under the container, an unknown
//     subcommand nowhere, as redis-server 7.0
//     (TestSubcommandStatsMatchRedis).
//   - S88: COMMAND and COMMAND INFO show a container as redis-server 7.0
//     does (its declared flags, no keys) with its subcommands in the 10th
//     element, each an entry of its own (name, arity, flags and keys as
//     Redis's; empty ACL categories, tips and key specs, which tiercache
//     has none of); COMMAND INFO finds "config|get"; COMMAND LIST lists
//     the subcommands; COMMAND GETKEYS reads a subcommand's keys and
//     arity; COMMAND COUNT counts commands only; key specs and
//     a command's empty subcommands are sets in RESP3, as Redis's; every
//     command both have has Redis's name, arity, flags (in Redis's order)
//     and key positions (TestSubcommandInfoMatchesRedis, RESP2 and RESP3).
//   - S89: SET, GET, DUMP and the commands that write a value answer
//     errEmptyKey for the key "" (the tier takes no zero-length key; Redis
//     does) and change nothing; EXISTS, DEL and EXPIRE of it answer as of
//     a missing key (TestEmptyKeyRefusedClearly; TYPE, MGET and the
//     blocking pops do too, untested).
//   - S90: a tracking client blocked in BLMOVE, BRPOPLPUSH, BLPOP,
//     BZPOPMIN... and served by another client's write gets the
//     invalidations of that write first, then its reply, then those its
//     serve caused (its NOLOOP counts the serve's changes as its own) and
//     the BCAST ones, as redis-server 7.0, which serves a blocked client
//     after the write as its current client: a waiter served while a
//     client tracks is handed its result once the serving command's
//     invalidations are queued, and what its serve caused waits in its
//     push queue for its reply (TestServedWaiterInvalidationAfterReply,
//     byte for byte against redis-server in RESP3 and RESP2 with REDIRECT;
//     Redis's unit "Unblocked BLMOVE gets notification after response").
//   - S91: INFO commandstats counts as redis-server 7.0 what S79 leaves
//     open: an arity error a command finds as it runs (HSET's odd pairs,
//     LPOP's or PING's extra argument, MSETNX) is failed, not rejected, as
//     Redis's addReplyErrorArity (CONFIG SET's odd count is its syntax
//     error); a command answered BUSY, also after it waited for the
//     script, is rejected; a blocked command ended by CLIENT UNBLOCK
//     (TIMEOUT or ERROR) or served an error is failed, not one that timed
//     out, and CLIENT UNBLOCK ERROR fails too, as Redis's
//     updateStatsOnUnblock and call() count them; a command a script's
//     redis.call refuses (arity, noscript, a write from EVAL_RO, cluster)
//     is rejected, a container's on its subcommand, an unknown one
//     nowhere, as script.c scriptCall (TestCommandStatsAfterTheRun).
//   - S93: MIGRATE answers as redis-server 7.0's migrateCommand, in its
//     order: the options (syntax errors, KEYS after a key that is not
//     empty), the timeout, the database; NOKEY when none of the keys
//     exists; then the target's first error passed on ("Target instance
//     replied with error: ..."), or IOERR ("connecting to the client"
//     when the address does not resolve, "writing" when the connect is
//     refused or times out, "reading" when the target does not answer
//     within the timeout), a socket error that is not a timeout retried
//     once on a new connection; a database of -1 sends no SELECT on a
//     connection whose remembered database is -1 (a new one, or one whose
//     target last answered an error; S114), as Redis; COMMAND GETKEYS names its keys as Redis's
//     key specs then migrateGetKeys do, and monitors see AUTH's and
//     AUTH2's arguments redacted (TestMigrateMatchesRedis, against
//     redis-server as the source, RESP2 and RESP3).
//   - S94: the keys of every type and encoding tiercache migrates to
//     redis-server 7.0 arrive with the value and the TTL they had, one
//     key or several (KEYS), to any database; COPY keeps them, REPLACE
//     replaces the target's; a BUSYKEY or a target's AUTH refusal is
//     passed on and the source keeps the key; a target that does not
//     answer, closes, or is not there gets IOERR and the source is
//     unchanged (TestMigrateToRedis).
//   - S95: a key MIGRATE deletes (acknowledged by the target, no COPY) is
//     deleted as DEL deletes it (tier.Cache.Delete: tenants, the remote
//     tier), WATCH touched, "del" published and tracking clients told,
//     also when a later key's error is answered, as Redis deletes each
//     key as its RESTORE is acknowledged; COPY and a MIGRATE that
//     deleted nothing touch nothing; a hash with a field expiry left is
//     refused (errDumpFieldTTL) before anything is sent; MIGRATE runs in
//     MULTI and in scripts, holds the transaction lock exclusively while
//     it waits for the target (as Redis blocks), and in cluster mode is
//     CROSSSLOT for keys of two slots and sends RESTORE-ASKING
//     (TestMigrateEverywhere; MULTI, scripts and the "del" events
//     against redis-server in TestMigrateMatchesRedis).
//   - S96: CONFIG RESETSTAT answers +OK as redis-server 7.0's
//     configResetStatCommand (its extra argument the arity error,
//     rejected): INFO commandstats and errorstats start over, and INFO's
//     counters that resetServerStats zeroes (total_connections_received,
//     total_commands_processed, total_net_input_bytes and
//     total_net_output_bytes, rejected_connections, expired_keys,
//     evicted_keys, keyspace_hits and keyspace_misses, total_error_replies
//     and total_error_replies_protocol, total_reads_processed and
//     total_writes_processed) count from the reset, and the instantaneous
//     rates start over, the ones compared read as redis-server's after the
//     same commands, also in MULTI
//     (TestConfigResetStatMatchesRedis, RESP2 and RESP3); /metrics'
//     counters (Snapshot) never go back: INFO subtracts a baseline taken
//     at the reset (TestConfigResetStatKeepsMetrics).
//   - S97: CLIENT PAUSE timeout [WRITE|ALL] and CLIENT UNPAUSE answer as
//     redis-server 7.0's clientCommand (pause.go): the mode's error before
//     the timeout's, a later PAUSE keeps the more restrictive mode and the
//     later end (PAUSE 0 does not shorten one), UNPAUSE with none is OK. A
//     pause holds a command after every check that may refuse it and
//     before it is queued or runs, as processCommand blocks the client
//     (BLOCKED_POSTPONE): ALL every command, CLIENT UNPAUSE too (only the
//     timeout ends it); WRITE those flagged write or may_replicate (PUBLISH,
//     PFCOUNT, WAIT, EVAL, EVALSHA and FCALL unless the script's shebang
//     says no-writes; EVAL_RO and EVALSHA_RO when their shebang does not),
//     a write inside MULTI, and an EXEC of a
//     queued one. CLIENT PAUSE runs holding the transaction lock
//     exclusively (a command running ends before its +OK) and a command
//     that waited for the lock looks again once it has it (pausedSince),
//     (EXEC and EVAL too, which take the lock themselves), so no command
//     it covers runs after its +OK (TestClientPauseNoWriteAfterOK). A held client is blocked (flag b in CLIENT LIST with the
//     held command as cmd, INFO blocked_clients), sends nothing until the
//     pause ends by UNPAUSE or its timeout, then runs the command in order
//     (TestClientPauseMatchesRedis, RESP2 and RESP3 against redis-server;
//     Redis's unit pause.tcl in scripts/test.d/32-redis-units).
//   - S99: a push by a script's redis.call serves the clients blocked on
//     the list once the script ended (inside EXEC, once the EXEC's
//     commands ran), as redis-server 7.0 serves them after the script;
//     their events follow the script's, their results are handed over
//     after its invalidations (S90) (TestScriptPushServesBlocked, RESP2
//     and RESP3; TestServedWaiterInvalidationAfterReply's EVAL case).
//   - S98: a client killed (CLIENT KILL) or hung up while a pause holds it
//     leaves without its command run; CLIENT UNBLOCK does not end the hold
//     (0; redis-server 7.0 panics on it); Close ends the holds
//     (TestClientPauseHeldKilled). While paused the expiry sweeps stop, as
//     Redis's active expiry does: the cache's (tier.Cache.HoldSweep, T62)
//     and the hash fields' (hfeLoop); an expired key reads as gone but is
//     removed, and its "expired" event sent, only after the pause
//     (TestClientPauseHoldsExpiry).
//   - S102: INFO's expired_keys counts every key the expiry sweep removed
//     and evicted_keys every key the cache dropped because no tier holds
//     it any more (tier T46's Expired and Evicted removals, counted in
//     tierRemoval whether or not notifications or tracking are on; moves
//     between tiers are not evictions); neither grows while a pause holds
//     the sweep; CONFIG RESETSTAT zeroes them in INFO, not on /metrics
//     (TestExpiredAndEvictedKeys, TestClientPauseHoldsExpiry).
//   - S103: total_net_input_bytes and total_net_output_bytes count the
//     bytes read from and written to client sockets (replies and pushes,
//     the pusher's too), total_reads_processed and total_writes_processed
//     the reads and writes that moved bytes, each counted per system call
//     in the connection's ioCounters and summed with the closed
//     connections' under Server.mu (never going back); after CONFIG
//     RESETSTAT the two byte counters read as redis-server's for the same
//     requests (the read and write counts do not: Redis counts each call
//     of its read and write handlers, an empty read at a close too)
//     (TestNetBytesCounters, TestConfigResetStatMatchesRedis). The
//     instantaneous_ops_per_sec and instantaneous_input/output_kbps rates
//     are redis-server 7.0's: 16 samples 100 ms apart, their integer
//     mean, kilobytes as a C float (TestInstantaneousMetricsAsRedis,
//     TestInstantaneousMetricsSample).
//   - S104: INFO stats prints redis-server 7.0's stats fields in its order,
//     in its formats, all but those statsLeftOut lists with the reason
//     (expired_stale_perc, expire_cycle_cpu_milliseconds, the eviction
//     and active defrag times and counts, dump_payload_sanitizations,
//     reply_buffer_*); those tiercache cannot have (replication, forks,
//     I/O threads, client eviction, a time-capped
//     expiry cycle) always read 0, as a fresh redis-server's, and are
//     INFO only (TestInfoStatsMatchesRedis, RESP2 and RESP3).
//   - S105: LATENCY's help, errors (each subcommand's arity, an unknown
//     subcommand, GRAPH of an event without samples), LATEST and HISTORY
//     with no event, RESET's counts, DOCTOR with the monitor never on,
//     LATENCY in MULTI and in a script (refused but HELP: noscript), and
//     CONFIG GET and SET of latency-monitor-threshold, latency-tracking
//     and latency-tracking-info-percentiles with their refusals answer as
//     redis-server 7.0's, byte for byte in RESP2 and RESP3
//     (TestLatencyMatchesRedis; COMMAND INFO, TestSubcommandInfoMatchesRedis).
//   - S106: while latency-tracking is on (the default) each command and
//     subcommand that ran (not one refused before it ran) has a latency
//     histogram, a blocked one counted once served: LATENCY HISTOGRAM, all
//     or of the commands named and their subcommands, lists the commands
//     redis-server 7.0 lists after the same commands, with the same calls,
//     in Redis's shape (a map in RESP3), and INFO latencystats (not in the
//     default INFO) their percentiles in Redis's format; CONFIG RESETSTAT
//     drops the histograms, as Redis 7.0; with latency-tracking off INFO
//     latencystats is empty and nothing is counted
//     (TestLatencyHistogramMatchesRedis).
//   - S107: while latency-monitor-threshold is above 0, a command that ran
//     at least that many ms adds a sample to "command" ("fast-command" for
//     one flagged fast; a blocked one's wake-to-reply time to
//     "command-unblocking"; a script's commands too, S111), one
//     a second (its longest), the last 160 kept, as redis-server 7.0's
//     latency monitor: LATEST, HISTORY, GRAPH, DOCTOR and RESET after a
//     slow script answer as Redis's do (TestLatencyMonitorMatchesRedis,
//     TestLatencyEvents; GRAPH's drawing and DOCTOR's figures of several
//     samples, TestLatencyGraphIsRedis).
//   - S108: a latency histogram has the layout of Redis's hdr_histogram
//     (1 ns to 1 s, 2 significant digits), so that LATENCY HISTOGRAM's
//     buckets and INFO latencystats' percentiles are the values Redis
//     computes for the same times; recording one is one atomic add
//     (TestLatencyHistogramIsRedis).
//   - S109: a client that sent QUIT counts as gone for the clients that
//     redirect their invalidations to it before its +OK is written, so a
//     write after the +OK was read sends them tracking-redir-broken, as
//     Redis frees a quitting client before it serves another's command
//     (TestTrackingRedirectQuitIsBroken).
//   - S110: total_commands_processed counts the commands that ran, as
//     redis-server 7.0's call() counts them: not one refused before it ran
//     or queued in MULTI (counted when EXEC runs it), and a script's
//     redis.call on the script's connection (TestCommandsProcessedAsRedis).
//   - S111: a script's command is timed from its redis.call to its reply
//     (commandstats, the slow log, latency tracking and the latency
//     monitor), not from the script's command before it, as Redis's call()
//     times it (TestScriptCommandTimedAlone).
//   - S112: Options' latency settings (LatencySet: latency-monitor-threshold,
//     latency-tracking, latency-tracking-info-percentiles) are what CONFIG
//     GET answers from the first command and what the server does; unset,
//     they are Redis's defaults (0, yes, 50 99 99.9); a negative threshold
//     or a percentile outside [0, 100] is refused by Validate naming the
//     parameter (TestLatencyOptions).
//   - S114: MIGRATE keeps one connection per host:port as Redis 7.0's
//     socket cache does (migrate_sockets.go): MIGRATE on tiercache and on
//     redis-server 7.0, each to its own redis-server target, answer the
//     same and their targets accept as many connections and run as many
//     SELECTs after each step: two MIGRATEs share one connection (INFO
//     migrate_cached_sockets 1), SELECT only when the database changes and
//     after the target answered an error (the connection kept), a timeout
//     closes the connection and drops it, a connection the target closed
//     is replaced by one retry, and a connection stays authenticated
//     (TestMigrateReusesConnection).
//   - S115: a cached MIGRATE connection unused for longer than
//     migrateSocketTTL (10 s) is closed by the reclaim loop's once-a-second
//     tick; the cache holds at most 64, a 65th target closing one; Close
//     closes them all (TestMigrateSocketCacheBounds).
//   - S116: COMMAND LIST FILTERBY PATTERN (without case, over full names
//     such as config|get) and MODULE (none) list what redis-server 7.0's
//     lists, a misplaced, incomplete or unknown filter is its syntax error,
//     and ACLCAT is refused (no ACL categories) (TestCommandListFilterAsRedis).
//   - S117: Close does not wait past ShutdownTimeout for a MIGRATE whose
//     target accepted and does not answer (its timeout is the client's):
//     at the timeout every MIGRATE connection, in use or not, is closed
//     and dials in progress end (TestCloseEndsWaitingMigrate).
//   - S118: SET's and GETEX's options may repeat, the last expiry given
//     wins and only it is checked, after the options' syntax; ZRANGE's and
//     ZRANGESTORE's REV, BYSCORE and BYLEX may not (a syntax error that
//     stores nothing); without a password, AUTH and HELLO's AUTH take
//     "default" with any password and refuse another user (WRONGPASS),
//     the one-argument AUTH still refused as Redis's; HELLO answers each
//     option's error where it stands: every reply as redis-server 7.0's
//     (TestOptionRepeatsMatchRedis). Unlike Redis, which applies AUTH and
//     SETNAME as it reads them, a HELLO that answers an error has
//     authenticated and named nothing (TestHelloErrorChangesNothing).
//   - S119: COPY touches for WATCH its destination only, and only when
//     it copied: a transaction watching the source runs, as on
//     redis-server 7.0 (TestCopyWatchMatchesRedis).
//   - S120: tiercache has one database: MOVE and SWAPDB answer as a
//     redis-server 7.0 started with `databases 1` (SWAPDB 0 0 is OK and
//     changes nothing; MOVE is always refused), in RESP2 and RESP3
//     (TestMoveSwapDBMatchRedis).
//   - S121: a blocked client (BLPOP, BZPOPMIN, BLMOVE and the rest) that
//     sent more requests while it waited and then closed or shut down its
//     end is seen gone while it waits, as redis-server sees it: it stops
//     being a blocked client, and no push is served to it and lost
//     (TestBlockedPipelinedHangup).
//   - S122: a script's writes to keys its caller tracks reach the caller
//     (RESP3) after the script's reply, or after EXEC's, while what the
//     script published to it comes before, as redis-server 7.0 keeps the
//     current client's invalidations pending until it has answered
//     (TestTrackingScriptWritesAfterReply); a RESP2 client that
//     redirects to itself and subscribes to __redis__:invalidate gets
//     them as messages (TestTrackingRedirectToItself).
//
// The CL numbers are the emulated cluster's (Options.Cluster):
//
//   - CL1: in cluster mode CLUSTER's replies, READONLY, READWRITE, ASKING,
//     SELECT, HELLO's mode, CONFIG GET cluster-enabled and INFO's
//     redis_mode and cluster_enabled are
//     a redis-server 7.0's in cluster mode that alone owns every slot,
//     byte for byte in RESP2 and RESP3, but for the node's id and address
//     (TestClusterMatchesRedis). The node announces the TCP listener's
//     address, for a listener on every address the address each client
//     reached, or Options.ClusterAnnounce's IP and port
//     (TestClusterAnnounce), and a script's CLUSTER answers as its
//     client's (TestClusterScriptsMatchRedis); its id is 40 hex digits derived from the
//     host name and those addresses, the same after a restart
//     (TestClusterNodeID). Cluster mode without a TCP listener, or an
//     announce address that is no IP, is refused, and so is Serve in
//     cluster mode (TestClusterOptions). While the cache loads the
//     topology is served and the subcommands that read keys answer
//     -LOADING (TestClusterWhileLoading).
//   - CL2: in cluster mode a command whose keys hash to more than one
//     slot (remote.KeySlot; a key named twice is one key) is answered
//     Redis's CROSSSLOT and changes nothing, on every connection, the
//     Unix socket's included; inside MULTI it is not queued and EXEC
//     answers EXECABORT; an EXEC whose queued commands span slots is
//     answered CROSSSLOT and runs nothing; each refusal counts in INFO
//     stats crossslot_refusals and errorstat_CROSSSLOT
//     (TestClusterMatchesRedis, TestCrossSlotCounted; key positions,
//     TestEachKey); the shard channels of SSUBSCRIBE, SUNSUBSCRIBE and
//     SPUBLISH are hashed as keys (TestShardedPubSubClusterMatchesRedis). Inside a script a command of several slots is refused
//     with Redis's "non local key" error, and, unless the script has no
//     shebang or flags=allow-cross-slot-keys, one of another slot than the
//     script's declared keys (or its first command's); a no-cluster script
//     does not run (TestClusterScriptsMatchRedis).
//   - CL3: without cluster mode CLUSTER, READONLY, READWRITE and ASKING
//     answer redis-server's "cluster support disabled" and nothing else
//     changes: INFO says cluster_enabled:0, keys of any slots go together
//     (TestClusterOff).
//   - CL4: every command that redis-server 7.0 has names its keys where
//     redis-server's COMMAND INFO says (first key, last key, step), and
//     has a numkeys argument (command.keyNum, COMMAND INFO's movablekeys)
//     exactly where redis-server's keys move (TestKeySpecsMatchRedis);
//     COMMAND GETKEYS answers as redis-server does
//     (TestClusterMatchesRedis).
//
// # Caveats
//
//   - Arguments handed to the cache alias the connection's read buffer and
//     are valid only during the call; the cache copies what it keeps.
//   - There is one database (SELECT 0 only). FLUSHALL and FLUSHDB are the
//     same command: other clients wait for neither, and see no key once it
//     ran; SYNC (the default) answers once the flushed keys' memory is
//     freed, ASYNC at once. In writethrough mode FLUSHALL holds every other
//     command until every key's cold delete is durable (tier T28).
//   - A set or sorted set is one key as a list is: a live structure in hot
//     (tier T44), one record elsewhere, which a write there decodes and
//     rewrites; ZRANGE from a record's head reads only the entries it
//     answers. A lexicographic range over members of different
//     scores, which Redis leaves undefined, may answer otherwise than its
//     skiplist walk. A -0 score in a large sorted set is kept as -0 where
//     Redis keeps 0 if that set was ever small (its encoding's history).
//   - A list is one key: a live structure in hot (tier T44), one record
//     elsewhere, which a write there decodes and rewrites; LLEN and LRANGE
//     of a list only cold holds read its header and the pieces they need
//     (S45). LMOVE and RPOPLPUSH between two keys are two
//     Updates (pop, then push; put back if the push fails): the element is
//     never lost nor duplicated, but another client may see it on neither
//     list for an instant. A push that serves blocked clients pops for them
//     holding the blocking registry's mutex (block.go); the first look of a
//     blocking command takes it too. A client's hangup while blocked is
//     seen by peeking at its socket; one that pipelined more commands
//     behind the blocking one is seen hanging up only once it is answered.
//   - SCAN's cursor is a position in the cache's key directory and, with
//     the emulated cold store, its index (a tag, tier T37: a call returns
//     a range of tags and COUNT is a hint); MATCH is Redis's glob
//     (globMatch). KEYS, as in Redis, walks every key and builds one
//     reply: prefer SCAN on a large cache. DBSIZE reads the cache's
//     per-shard counters and the store's count of its keys (tier T37,
//     O(shards)); with a KV SSD, keys of an earlier run are counted and
//     listed once touched. A key whose expiry passed counts until the
//     sweep removes it, within a second, as Redis counts it until its
//     expiry cycle does; one only the cold store holds (the directory
//     forgot it, tier T37) counts until it is written or deleted, or the
//     store reclaims it.
//   - WATCH counts a write command naming a watched key as a change unless
//     it answered an error or reported that it changed nothing (SET NX of
//     an existing key, DEL of absent keys, an EXPIRE whose condition
//     failed: runWrite), as Redis does (SMOVE, ZMPOP, BZMPOP, LMPOP and
//     BLMPOP touch only the keys they changed, c.touched); what is left is
//     coarser than
//     Redis's: a DEL that removed some of its keys touches all of them,
//     GETEX PERSIST of a key without an expiry touches it. Such an EXEC
//     aborts where Redis's would run, which an optimistic client retries.
//   - A command that blocks while holding the
//     transaction lock shared (a reply to a client that reads nothing,
//     S12) makes an EXEC, and every command behind it, wait for it.
//   - A hash is one key: a live structure in hot, one record elsewhere,
//     stored in pieces in cold so that a read of one field reads a few
//     blocks (docs/DESIGN.md, "Data types"; S45). INCRBYFLOAT and HINCRBYFLOAT compute
//     as Redis's long double does (a 64-bit mantissa big.Float), so their
//     replies are Redis's digits.
//   - A BITFIELD write whose field ends past max_value is refused with
//     the value limit's error, where Redis, whose offsets are bounded by
//     proto-max-bulk-len as here, stores up to 8 bytes past it. BITOP and
//     LCS hold the transaction lock exclusively while they compute, as
//     Redis's one thread does: an LCS of two long strings (its table up
//     to max_value bytes) holds every other command meanwhile.
//   - OBJECT ENCODING answers "raw" for every string (a value is stored as
//     the bytes given, never as an integer or inline) and "listpack" for a
//     hash, list, set or sorted set whatever its size; OBJECT FREQ is the promotion policy's read estimate, 0
//     to 16 (tier.Cache.Frequency), not Redis's logarithmic counter; OBJECT
//     IDLETIME answers Redis's error for an LFU policy.
//   - Hash field expiry: an expired field is seen by no command, where
//     Redis 7.4 still counts one it has not reclaimed yet in HLEN and
//     deletes it with HDEL (answering 1); a hash whose every field expired
//     still exists for EXISTS, TYPE, SCAN and DBSIZE until the sweeper
//     removes it (within its 100 ms tick once due), as until Redis's
//     active expiry does. A read that finds expired fields does not remove
//     them (Redis's HGET does, with "hexpired"): it makes the hash due, and
//     the sweeper publishes "hexpired" an instant later. The sweeper knows
//     the hashes a command wrote or read since the server started (at most
//     1,048,576); one written before a restart, or by another sidecar, and
//     not touched since, keeps its expired fields out of sight until a
//     command touches it, as a key only cold holds keeps its own expiry.
//   - The emulated cluster has no cluster bus (CLUSTER NODES gives its
//     port as 0), no replica and no failover; the CLUSTER subcommands
//     that change a cluster (MEET, ADDSLOTS, FAILOVER...) are refused.
//     Its topology is served while the cache loads, where Redis answers
//     -LOADING, so that a cluster client connects and retries -LOADING;
//     COUNTKEYSINSLOT and GETKEYSINSLOT hash every key (Redis indexes
//     keys by slot), O(keys) like KEYS, and answer -LOADING then.
//   - SORT: a set's elements come in tiercache's set order where Redis's
//     come in its hash table's (BY nosort outside a script and without
//     STORE); elements whose ALPHA weights tie (equal or missing BY
//     values) keep their input order (a stable sort, as glibc's qsort),
//     which for a set or sorted set is tiercache's own, and Redis's
//     partial quicksort under BY with LIMIT may order them otherwise.
//     ALPHA without STORE compares as strcmp (Redis's strcoll in the C
//     and C.UTF-8 locales), not by another locale's collation. Redis
//     reads strtod's errno without clearing it, so after one weight it
//     refused with ERANGE it may refuse later numeric SORTs that are
//     valid: tiercache judges each weight alone. A result past max_value
//     bytes is refused (S69) where Redis answers it. LIMIT whose end
//     passes int64 (Redis's long overflows) runs to the end.
//   - RESTORE refuses zipmaps (RDB type 9, Redis before 2.6), modules and
//     streams with "Bad data format", where redis-server 7.0 reads them;
//     and, reading every listpack and ziplist entry, it refuses one with
//     a duplicate field, an odd entry count or an entry past its end
//     where Redis without sanitize-dump-payload takes it. IDLETIME and FREQ are checked and then ignored (no LRU clock or
//     LFU counter to give a key). DUMP writes the plain encodings (a
//     count and strings; RDB_TYPE_LIST, SET, ZSET_2, HASH), not byte for
//     byte Redis's payload.
//   - MIGRATE's cached connection is closed at the first once-a-second
//     tick more than 10 s after the call that last used it began, so 10
//     to 11 s (Redis's cron compares whole seconds: up to 12 s). The
//     RESTOREs follow the SELECT in the
//     same write, as Redis's: a target that refuses the SELECT (a
//     database other than 0 on tiercache, which is single-database)
//     restores the keys in its current database while the source keeps
//     them and answers the SELECT's error. Its wait for the target is
//     bounded by the timeout for the connect, each 64 KiB written and each
//     reply line; meanwhile it holds the transaction lock exclusively,
//     so no other command that touches keys runs, as Redis blocks.
//   - SCAN ... TYPE with a type name Redis 7.0 does not know is an error,
//     as in Redis 7.2 (7.0 matches nothing).
//   - The umask is narrowed process-wide for the instant of bind(2);
//     files created concurrently by other goroutines get the narrower mask.
//   - Between probing a stale socket and removing it, another process could
//     bind the path; the window is microseconds.
//   - HELLO reports server "tiercache" and version 7.2.0, the Redis version
//     whose protocol is implemented.
//   - RESET asks for AUTH again only on a listener that requires AUTH
//     (TCP, S7): a Unix-socket client never had to AUTH. It keeps CLIENT
//     NO-EVICT on, as Redis 7.0 does (7.2 turns it off). LASTSAVE is the
//     start time: there is no RDB save, and the cold store's checkpoint is
//     written only as it closes.
//   - A command that needs the transaction lock exclusively (EXEC, EVAL,
//     MSETNX, LMOVE) and arrived before a script passed
//     busy-reply-threshold waits for the script instead of answering BUSY.
//   - Keyspace events: keymiss (m) is accepted and publishes nothing; expired
//     keys are published (and invalidated) when the cache's sweep removes
//     them, within its second, not when a read finds them expired. The
//     write commands of families without events here invalidate their
//     keys for tracking clients and publish nothing.
//   - SLOWLOG and MONITOR differ from Redis's where S51 times commands: a
//     pipelined run of one command is one slow log entry (Redis logs each
//     slow command), with the run's last arguments, or the name alone if
//     a read without the Reader's BeforeBlock came between (a big bulk's
//     rest); a CONFIG SET that turns the slow log on from -1 (with no
//     ObserveLatency) is not itself logged, since it ran untimed. MONITOR
//     ends only with its connection (no RESET). The MONITOR line's time
//     is read when the line is made (Redis's too).
//   - While loading (S27), PING answers PONG where Redis answers -LOADING,
//     and WATCH and CONFIG answer -LOADING although COMMAND INFO lists
//     Redis's "loading" flag for them. The cache's rows of INFO and
//     /metrics read 0 then (no tiers). INFO persistence alone takes a
//     whole Snapshot (tier.Stats) for its loading row.
package server

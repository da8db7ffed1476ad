// Package tier composes the three tiers of tiercache into one cache:
// hot and warm, the DRAM tiers — two logs of off-heap records (tier/dram),
// hot in plain memory and warm in an arena that may be bound to a CXL NUMA
// node — and cold (an nvmekv.KV over the emulated namespace or a KV SSD),
// behind tier.Cache.
//
// A directory (a sharded map key → entry) is the authority on which keys
// exist, their newest version and their expiry. Every write gets a new
// cache-wide version; a copy is served only if its version is the one the
// directory names. An entry names its DRAM record (the value alone, in
// the hot or the warm log), so a DRAM hit is one map lookup and one copy
// under the key's shard read lock. One eviction policy, policy.LFU (a
// weighted W-TinyLFU with an adaptive window, its Nodes embedded in the
// entries), decides which keys DRAM keeps, over both logs, each key
// weighing its key and value bytes; where a kept key's record is, hot or
// warm, is placement (mem.go): new values go to hot, cleaning hot's oldest
// segment demotes what was not read since it was written, and a warm hit
// the promotion policy (policy.Promotion) deems frequent moves up. A
// writer makes room before it takes its shard lock (makeRoom: one
// segment cleaned at a time, each record moved under its own shard lock).
// Keys the LFU evicts go to cold, written from where they are (the
// flusher batches them into linked chains), or are lost without a cold
// tier; values no log takes go straight to cold. MGet sends its cold
// lookups as one KV.GetMany per MGetColdBatch keys. Durability is cache
// (write-back), drain or writethrough.
//
// # Invariants
//
// (Tests: model_test.go, concurrent_test.go, cold_test.go, api_test.go.)
//
//   - T1: a value returned by Get/MGet is byte for byte the value of one
//     Set of that key: never torn, never another key's (the concurrency test
//     decodes key, seq and length from every value it reads).
//   - T2: a read returns the version the directory named for the key at
//     some instant during the read: never a version older than the newest
//     Set acknowledged before the read began, never a value deleted before
//     it began.
//   - T3: an overwrite or delete of a key whose copy may be in cold queues a
//     cold delete in the flusher (in writethrough mode a delete runs it
//     before it returns and an overwrite's put replaces the copy, T28); the flusher keeps each key's writes in
//     enqueue order, never has two in flight, and skips a put whose version
//     is no longer the newest, so cold never ends up with an older version
//     than the newest one written there.
//   - T4: a deleted key whose copy may be in cold stays as a tombstone until
//     the cold delete completed, and a key read from a cold store left by an
//     earlier run (or forgotten, T15) is adopted only if no cold delete of
//     it is queued (flusher F8) and no directory entry of its shard was
//     removed meanwhile, so a deleted value never comes back. (The queued
//     delete check came late: an overwrite queues the old copy's delete and
//     clears coldMay, so a delete right after removed the entry at once,
//     and until the cold delete ran a reader could adopt the overwritten
//     copy; TestConcurrentOnAnEarlierRunsStore caught it.)
//   - T5: a value no DRAM log takes (larger than a segment, or no room
//     after makeRoom) is in the transit map from its Set until its cold
//     write completed; a DRAM record evicted to cold stays named by its
//     entry and readable until its cold write completed (T32). A reader
//     checks the entry's DRAM record, transit, then cold — and cold only
//     for a version whose cold write completed.
//   - T6: no client call blocks on the flusher but for room: a full
//     flusher queue drops (and counts) the oldest droppable copy instead,
//     writers wait only while the flusher holds more than half its bound
//     (T25), for room that records being flushed hold (makeRoom), or for
//     their own cold write (writethrough, values no log takes). Evictions
//     are synchronous: the write that needs room cleans a segment and
//     releases the LFU's victims itself, so a burst of writes never
//     outruns them.
//   - T7: Len counts the live keys of the directory exactly; a key whose
//     only copy was dropped, failed or reclaimed is removed from it (counted
//     in Stats.Lost) — immediately for a failed or dropped cold write or a
//     hot victim no lower tier takes, on the next read for a copy the cold
//     store reclaimed by itself (TestDroppedVictimsLeaveNoEntry). The cold
//     tier's Evictions count the records the store reclaimed, those of
//     keys the directory forgot (T15) included (TestColdEvictionsCounted).
//   - T8: in drain mode Close writes every live hot and warm value that is
//     not already in cold, durably, before closing the store; in writethrough
//     mode every change is durable before it returns (T28).
//   - T9: Close is idempotent and ordered: drain, background goroutine,
//     flusher drained, lost-copy checks (their cold deletes still queued),
//     flusher closed (every completion callback returned, so no DRAM record
//     is pinned any more), lost-copy checks again, the hot and warm logs
//     unmapped, cold (synced, closed): nothing touches a tier after it is
//     closed.
//     Calls after Close return ErrClosed (TestCloseDeletesForLostKeys).
//   - T10: MGet sends the cold lookups of a batch as one KV.GetMany
//     submission per MGetColdBatch keys (default 128); concurrent MGets
//     submit side by side. Every cold read of a key the directory knows
//     passes the directory's size of its value (Cold.Get, Cold.GetMany), so
//     a value above the KV's default first read still takes one device
//     round trip; MGetPrefix holds at most its byte budget by those sizes.
//     The values memory serves are copied once, into chunks of 64 KiB
//     (a larger value its own): fresh memory for MGet, taken from a pool
//     and held by the caller's Chunks until Release for MGetIn, which
//     also keeps an MGet's arrays for the next one, those of at most 4096
//     keys (TestMGetValuesSpanChunks, TestChunksKeepOnlySmallArrays).
//   - T11: a DRAM record is written before its entry names it, never
//     written again while named (an overwrite of the same size writes in
//     place under the shard's write lock, which no reader holds then), and
//     freed or moved only under its entry's shard write lock; a reader
//     holding the read lock copies it whole (TestRecordsNeverOverlap in
//     tier/dram, the concurrency tests' value checks, T1).
//   - T12: Stats.DirectoryKeys equals the number of directory entries
//     that are not tombstones, and Keys (what DBSIZE answers, and
//     Stats.Keys) adds the keys only cold holds (T37), kept by per-shard
//     counters instead of a walk, so they cost O(shards) at any number of keys
//     (checkKeyCount in the model, concurrency and restart tests); a key
//     whose expiry passed counts until the sweep removes it, but one only
//     cold holds (forgotten, T37), which the sweep does not know: it
//     counts until a write or delete of it, or cold reclaiming it. Len walks and
//     also leaves out expired keys (TestExpirySweepAndLen).
//   - T13: a whole Scan (from cursor 0 until it returns 0) returns each key
//     that stays live through it exactly once, and never a deleted or
//     expired key that stayed so; a match is given each key's kind, so a
//     scan filtered by kind keeps this (TestScan, also with writers running).
//   - T14: after Flush returns nil no key written before it is readable,
//     counted or listed, in this run or after a restart, and every key
//     written after it keeps its value through the purge and a restart.
//     Flush records a version floor in the cold store (Cold.SetFloor,
//     synced) before it flushes, and keeps a later one in memory (recorded
//     too once its purge ended); Open starts versions above the recorded
//     one (they start at the wall clock's UnixNano and only grow), so
//     every entry and cold record at or below the floor is flushed: a cold
//     record of a key the directory does not name (an earlier run's, a
//     forgotten one, T15) at or below it reads as absent and its delete is
//     queued (flush.go), and no cold store is walked or cleared inline.
//     If the floor cannot be recorded while cold may hold keys the
//     directory does not name, Flush returns the error and changes
//     nothing; a cold delete of the purge that fails leaves a record the
//     floor hides. In writethrough mode Flush blocks (flushBlocking, T28):
//     every key's cold delete is durable before it returns, and an
//     earlier run's keys are hidden by a floor recorded the same way
//     (TestFlushWritethroughHidesAnEarlierRunsKeys). Tests:
//     TestFlushClearsAnEarlierRunsKeys, TestFlushKeepsLaterWrites,
//     TestFlushedKeysStayGoneAfterRestart, TestFlushFloorError,
//     TestFlushColdDeleteErrors, and Flush steps in TestModelMemoryTiers,
//     TestModelEmulatedCold and TestModelLifecycle (checkEntries: no entry
//     of the directory is at or below the floor).
//   - T15: with MaxKeys set (without it, see T37), the background goroutine keeps the directory
//     at most MaxKeys plus what is written between two passes (100 ms):
//     above it, it forgets live keys whose newest version is durable in
//     cold and held by no memory tier, down to 90% of MaxKeys, skipping once
//     any key a caller looked up since the last pass (second chance, for
//     callers that decide from a lookup before taking the shard lock). From
//     the first such pass on, a key missing from the directory is looked up
//     in cold and adopted, as for an earlier run's store (T4), so a
//     forgotten key reads, refuses SET NX, and is overwritten and deleted
//     as if remembered. A key whose TTL Expire or Persist changed is kept
//     until it is rewritten (its cold copy has the old expiry), a DEL
//     of a key forgotten between its lookup and the shard lock deletes it
//     in cold, and SET NX/XX/KEEPTTL, EXPIRE, PERSIST, TTL and TIER look
//     such a key up again (lockEntry, up to twice more). Tests:
//     TestDirectoryTrim, TestConcurrentDirectoryTrim,
//     TestTrimBetweenLookupAndLock.
//   - T16: GetDel, GetEx and SetGet read the value, then delete the key,
//     change its expiry or store the new value under the shard's write lock
//     only if the entry still has the version read (SetGet: or is still
//     absent): the value returned is the version deleted, retimed or
//     replaced, and a write in between makes them read again (at most
//     getThenTries times, then ErrKeyBusy). SetGet whose old value fails to
//     read from cold twice, the key keeping its version, stores nothing
//     (ErrUnreadable): a miss would tell NX that it may set. Tests:
//     TestGetDelGetEx, TestConcurrentGetDel, TestConcurrentSetGet,
//     TestSetGetColdReadError.
//   - T17: the directory decides expiry. The cold KV keeps expired records
//     (nvmekv KeepExpired), and a cold copy is served at the entry's
//     version whatever expiry it was written with, so Expire, Persist and
//     GetEx hold for a key only cold has. The expiry a copy carries is read
//     only by adoption (T4, T15), which checks it, so every cold write
//     takes the entry's expiry when the flusher submits it (flushCurrent;
//     warm copies carry none), and a completed write with the entry's
//     expiry clears expMoved. In drain mode Close sweeps expired keys
//     (their cold copies are deleted) and rewrites the cold copy of a key
//     whose expiry moved since it was written, so a restart brings back
//     each key with its expiry, and no expired key. Tests:
//     TestExpiryMovedOnColdCopy, TestDrainRewritesChangedExpiry,
//     TestColdCopyCarriesTheExpiry, TestDrainDeletesExpiredColdCopies. The
//     cold store keeps expired records (coldstore CS1).
//   - T18: an evicted hot or warm copy of a version cold already holds
//     (the entry's cold version, its expiry unchanged) is not written to
//     cold again (Stats.ColdKept): a read promoted from cold costs no flash
//     write (TestPromotedReadsWriteNothing). If the store reclaimed that
//     record meanwhile, the key is lost at its next read (T7), as any
//     record the store reclaims.
//   - T19: the values of the DRAM tiers live off the Go heap, in the logs'
//     arenas (HotBytes + WarmBytes, mapped once): filling them grows the
//     heap by the directory's cost alone (TestValuesLiveOffHeap); a key
//     held in DRAM takes at most DirEntryBytes of heap in all
//     (TestDirectoryCostCoversHeap). Memory reports the heap budget that
//     follows: directory, the copies the flusher holds on the heap now
//     (records evicted from DRAM are written from their log: OffHeap),
//     the LFU's sketch, slack (a fixed part, a twentieth of the DRAM
//     budget and a quarter of the heap held, as GOGC 25); an open cache's
//     own heap leaves the slack free (TestHeapBudgetLeavesSlack).
//   - T20: a key just written stays readable while DRAM holds keys the
//     LFU values less or no more (P9): with no cold tier, or one that
//     takes no writes, keys written once and never read fill DRAM, and a
//     burst of them keeps the newest (TestFreshWritesStayWhileDRAMHasRoom,
//     TestNewestWritesKeptWhenColdUnwritable).
//   - T21: one function decides what a read of a key does, under the
//     key's shard lock: planRead (lookup.go) answers serve this copy (the
//     entry's DRAM record, else its copy in transit: memLookup), read cold
//     at version v, adopt, miss or retry. Get,
//     View, MGet (which batches only the cold reads and adoptions), Where,
//     GetDel/GetEx/SetGet (through get) and Exists execute its decision;
//     drain and the lost-copy checks use its memLookup. (Tests: the model
//     tests, TestModelLifecycle.)
//   - T22: a key has at most one DRAM record: a warm hit the promotion
//     policy deems frequent moves to hot (its warm record freed), and
//     cleaning hot moves records to warm; neither changes what the LFU
//     keeps (TestPromotionLeavesWarm).
//   - T56: a warm hit moves to hot only if the LFU counts its key more
//     often than the records hot's cleaning demoted to warm lately (a
//     moving average over about 64 demotions, mem.demotedFreq): swapping
//     a record for one read as often gains nothing and costs copies
//     (TestPromotionOutranksDemoted). While hot holds a free segment
//     beyond those its writers keep, a promotion demotes nothing and
//     every warm hit the policy deems frequent moves up, however high
//     the average that hot's last demotions left (TestPromotionWhileHotHasRoom).
//   - T23: every version of a key has one Kind, opaque to the cache: the
//     entry holds it (entry.kind), every cold write carries it in the
//     record's flags (set at enqueue, stamped again by flushCurrent), and an
//     adoption takes it from there, so it survives tiers and restarts. The
//     string reads (Get, View, MGet, MGetPrefix, GetDel, GetEx, SetGet)
//     serve KindString only: another kind answers ErrWrongKind (MGet: nil)
//     and changes nothing; ViewAny, MGetPrefixAny and KindOf serve any
//     kind (TestKindTravelsThroughTiersAndRestarts).
//   - T24: Update is a read-modify-write in one step: its function's
//     decision (Store keeping the expiry, Remove, Keep) applies only to the
//     version it was shown (set's version check, deleteAt), else it runs
//     again on the newer value; Updates of one key are serialized by a
//     striped lock, or, one in place, by the key's shard write lock while
//     no Update holds the stripe's lock (its busy count, read under the
//     shard lock, raised before that Update's first read), so they never
//     retry against one another; an error from the function changes
//     nothing (TestUpdateIsAtomic, TestCountersAreAtomic in server).
//   - T25: a burst of writes faster than the device drops nothing
//     (TestWritersWaitForTheFlusher). In Backpressure mode (the default)
//     the flusher never drops (flusher F2): before its write, outside every
//     lock, a writer waits while the flusher holds more than half its
//     QueueBytes (admitWrite), and while records on their way to cold hold
//     the DRAM room it needs (awaitRoom); past Flusher.Wait in all it gets
//     ErrColdBehind and nothing changed (TestBackpressureRefusesAfterWait).
//     One Flusher.Wait from the start of the write bounds its waits for
//     room over all its tries, and for the cold write of a value no DRAM
//     log took (past it that write stays queued and readable in transit,
//     T5, and the write is acknowledged) (TestBackpressureWaitBoundsEachWrite).
//     In Shed mode a writer waits after its write instead (throttle, at
//     most throttleWait), the flusher drops its oldest copies when full,
//     and after a wait that timed out writers do not wait for
//     throttleOffFor.
//   - T60: in Backpressure mode an MSET stores every pair or, refused
//     with ErrColdBehind, none: it is admitted once for all its pairs
//     (admitWrite), and once a pair is stored no later pair is refused
//     for want of DRAM room (awaitRoom): it goes where room is, else
//     straight to cold (queued, readable in transit, never dropped). One
//     Flusher.Wait from the MSET's start (and from a SET's, its wait to
//     be admitted included) bounds all its waits for the flusher, not
//     one per pair (TestMSetBehindStoresAllOrNone).
//   - T26: Rename and Copy read the source's value, then, under both keys'
//     shard write locks (the lower shard first), write it to the
//     destination as a new version with the source's expiry and kind and
//     (Rename) delete the source, only if the source still has the version
//     read: no reader sees both keys or neither, a token renamed between
//     keys from many goroutines is never lost nor duplicated, and a key
//     only cold (or an earlier run's store) holds is carried like any
//     other (in writethrough mode both steps are durable first, T28, and a
//     move waits for a change of either key in flight). With NX (and
//     Copy without replace) a destination only cold holds is adopted first
//     and refuses the change. ExpireAtIf and ExpireTime act on the
//     directory's expiry (T17). Tests: TestKeyspaceModelMemoryTiers,
//     TestKeyspaceModelEmulatedCold, TestRenameColdOnlyKeys,
//     TestRenameCarriesKind, TestConcurrentRename.
//   - T27: overwrites of a key in quick succession leave the last value
//     (TestQuickOverwritesKeepTheLast).
//   - T28: in writethrough mode a change is durable in cold before it is
//     published or answered, and a change that cannot be made durable is
//     not published and answers an error. A Set writes and syncs its value
//     while readers still see the old one (the entry, its copies and cold's
//     old record are untouched until then: an overwrite queues no delete of
//     the old copy, its put replaces it); DEL, GETDEL, EXPIRE with a time
//     past, GETEX with a past time, SET with a past expiry and Flush (every
//     key's, sent together; the keys whose delete failed remain, and Flush
//     answers an error) run their cold delete and a sync first; Rename
//     and Copy write dst and sync, then (Rename) delete src and sync, and
//     publish both at once; a failed delete of src puts dst back
//     (carrydurable.go); EXPIRE, PERSIST and GETEX with a TTL
//     or PERSIST write the value again with the new expiry. The key's newest pending version is in its
//     shard's pend map: only the newest pending change publishes, only its
//     put reaches cold (flushCurrent), and the sweep and lost-copy checks
//     skip the key meanwhile; a reader that finds the pending version in
//     cold serves it. After a SIGKILL at any moment a key reads what its
//     last acknowledged change left, or what its change in flight would
//     have; after a cold error it reads as before, now and after a restart
//     (the store undoes the failed write, emu E21). Tests:
//     TestWriteThroughDeleteDurableBeforeReply,
//     TestInterruptedOverwriteKeepsOldValue,
//     TestWriteThroughErrorChangesNothing, TestModelWriteThroughRestarts,
//     TestWriteThroughExpiryDurableBeforeReply,
//     TestWriteThroughExpiryErrorChangesNothing,
//     TestWriteThroughFlushDurableBeforeReply, TestWriteThroughFlushError,
//     TestWriteThroughRenameDurableBeforeReply,
//     TestWriteThroughRenameErrorChangesNothing, TestWriteThroughRenameUndo,
//     TestConcurrentRenameWriteThrough, TestWriteThroughMultiKeyReadOnly,
//     TestWriteThroughPartialDelete, TestMSetChecksEveryPairFirst,
//     and cmd/tiercache TestCrashLoop. A key named twice in one DEL is
//     deleted and counted once, as in redis-server
//     (TestWriteThroughDeleteCountsEachKeyOnce). A delete that failed
//     leaves the key readable, also once forgotten and adopted again: its
//     failed Sync delete is not pending (F8)
//     (TestWriteThroughFailedDeleteKeepsKeyReadable).
//   - T29: in writethrough mode Open asks the cold store to be strict
//     (backend.Params.Strict) and refuses one whose Stats.Strict is false:
//     the emulated store then copies live records forward instead of
//     reclaiming its oldest region (coldstore CS3), so no acknowledged
//     write is dropped to make room (TestWriteThroughStoreKeepsOldKeys,
//     TestWriteThroughRefusesALossyStore).
//   - T30: in writethrough mode the changes of one key run one at a time:
//     each holds the key's Update stripe from its decision (NX/XX, an
//     expiry's condition, an INCR's value) to its publication, so a change
//     never decides against a state another change in flight is about to
//     replace, and none is acknowledged and then superseded by one that
//     fails (TestWriteThroughChangesOfOneKeyAreSerialized). A PERSIST that
//     cannot be made durable answers its error
//     (TestWriteThroughPersistErrorIsReported). A cold read that finds
//     nothing while the key's change is in flight (a chunked overwrite
//     deleting the chunks being read) reads again instead of answering a
//     miss.
//   - T31: the LFU alone decides which keys DRAM keeps (one LFU per
//     tenant with Tenants, T35): its weight is the sum of its resident
//     entries' key and value bytes and stays within its capacity (the logs
//     less the segments their cleanings keep free, less 1%; a tenant's
//     LFU its share of that); every key it evicts is released once (processVictims): not
//     written again if cold holds its version (T18), written to cold from
//     DRAM if cold takes writes, else lost and counted (T7). A cleaning
//     that finds no room for a record in either log evicts it and counts
//     it (DRAMStats.Dropped). The hit ratio does not depend on timing:
//     evictions are decided in the calls that cause them (P10).
//     (TestDroppedVictimsLeaveNoEntry, TestModelMemoryTiers,
//     bench/ BenchmarkHitRatio.)
//   - T32: a DRAM record evicted to cold is pinned while it is written
//     there (entry.flushing): not moved nor freed, and served, until the
//     write completes; then, if it is still the entry's, cold holds that
//     version and the record goes; a failed or dropped write loses the key
//     (T7); a record its entry let go meanwhile (an overwrite, a delete) is
//     freed by the write's end (TestEvictedRecordServedWhileFlushing).
//   - T33: Open tells the cold store the warm arena's configured node
//     (backend.Params.WarmNode, Options.WarmNode: -1 without warm or with
//     warm unbound), where the emulated store's index goes by default
//     (coldstore CS2), and Stats reports the node, the index's bytes and
//     those bound, the tables that could not be, and the fraction of
//     their resident pages on the node as the store reports them
//     (TestWarmNodeReachesTheColdStore; guest TestColdIndexOnNode1).
//   - T34: the default Clock reads the monotonic clock alone, on top of
//     the wall clock at its last sync, and syncs again once a second has
//     passed (or the monotonic reading went back): it stays within the
//     slew of one second of time.Now, and follows a step of the system
//     clock within a second (TestWallClockFollowsTheWallClock). NowOf
//     turns a caller's earlier monotonic reading into the same time
//     without a clock read (a test Clock is read instead)
//     (TestNowOfIsNowAtTheReading).
//   - T35: with Options.Tenants, a key belongs to the tenant whose prefix
//     it starts with, else to the default tenant; no prefix starts another,
//     so the match is a binary search over the sorted prefixes, without a
//     map lookup or an allocation, made once when the entry is created
//     and kept in it (entry.tenant), also for a key adopted from cold
//     after a restart (TestTenantOf, TestTenantSurvivesRestart;
//     checkEntries checks every entry's tenant and each tenant's live
//     count after every model step, TestModelTenants). Each tenant has an LFU of its own, whose
//     capacity is its quota's share of what the DRAM tiers may keep
//     (Quota × memCapacity / (HotBytes + WarmBytes); the default tenant
//     has the rest), so a tenant's keys never keep more than that in DRAM
//     and a tenant past it evicts its own least valued keys, to cold if
//     there is one, each eviction counted to it; a write that needs room
//     no segment cleaning gives evicts its own tenant's keys too
//     (forceEvict), all tenants' in proportion only when its tenant holds
//     nothing in DRAM. Quotas summing above HotBytes + WarmBytes, an
//     empty or reserved name, overlapping prefixes are refused by
//     Validate, every problem at once (TestTenantsValidate). Under
//     another tenant's flood of 20 times its quota, a tenant's DRAM hit
//     ratio on a hot/cold mix stays within four standard deviations of
//     the quiet phase's and all but 2% of its hot keys stay in DRAM
//     (its own LFU may let one go; b's flood takes none, T61); the tenants'
//     evictions add up to the DRAM tiers' (TestTenantQuotaEvictsItsOwn,
//     TestTenantFloodKeepsOthersHitRatio). Writers of several tenants
//     racing for room are never refused and no tenant ends over its
//     capacity (TestConcurrentWritersFindRoom/tenants).
//   - T61: while DRAM records are on their way to cold (evictions the
//     flusher has not written, pinned in their segments), the last
//     resorts of a cleaning for a tenant's room evict none of another
//     tenant's keys: makeRoom's evictSegment evicts only that tenant's
//     records, and a record of another tenant that a cleaning finds no
//     room for in either log stays where it is (as one being flushed
//     does). The room comes back as those writes complete; the writer
//     waits for them (awaitRoom, T25) or writes straight to cold. Under
//     b's writes far past its quota into a stalled device, a's keys
//     within its quota all stay in DRAM and a counts no eviction
//     (TestTenantKeepsDRAMWhileOthersFlushLag); before, b's writers'
//     evictSegment took a's hot keys (TestTenantFloodKeepsOthersHitRatio
//     found up to 7 of its 200 in cold). With no record pinned (no cold
//     tier, or a flusher that keeps up) the last resorts evict whatever
//     the segment holds, as without tenants.
//   - T62: while HoldSweep's function reports true the background
//     expiry sweep removes nothing (redis-server 7.0 stops active expiry
//     during CLIENT PAUSE): an expired key stays in the directory, read
//     as gone, and no removal is told; a sweep under way when the hold
//     begins stops at its next shard; once it reports false the next
//     sweep purges it (TestHoldSweep).
//   - T65: with forgetCold (T37), a key only cold holds is forgotten as
//     the write of its evicted copy completes while the directory is
//     above the trim pass's target, 90% of its bound (trimTarget), the
//     forgettable conditions of T15 unchanged: a load that evicts keys to
//     cold stays under the bound by these forgets, each with its entry in
//     hand, and trim passes, which walk the shards' maps, are left the
//     keys adopted by reads (TestCompletionForgetsDownToTrimTarget).
//   - T71: Frequency (OBJECT FREQ) counts a key's reads from DRAM: the
//     larger of the promotion policy's estimate and its tenant's LFU's
//     (TestFrequencyCountsHotReads).
//   - T36: Flush holds other calls off only while it swaps each shard's
//     map for an empty one, made before (O(shards), not O(keys), nothing
//     allocated meanwhile; BenchmarkFlushGetWait), and before it waits for
//     the calls in flight it ends their waits for the flusher (holdOff: a
//     writer throttled by a stalled device, T25, would hold it up to a
//     second; TestFlushDoesNotWaitForThrottledWriters; one waiting for
//     the cold write of a value no DRAM log took, up to Flusher.Wait,
//     and every call behind Flush with it: its write stays queued and
//     readable in transit, and is acknowledged, as past Flusher.Wait;
//     TestFlushDoesNotWaitForStraightWrites). The entries of the
//     old maps are stale (at or below the floor, T14) and a background
//     purge takes them, purgeBatch at a time under their shard's write
//     lock, with a yield after each: their DRAM records are freed, they
//     leave the LFU, and the cold delete of a key is queued only if the
//     directory does not name the key again (flusher F3 runs a later put
//     of it after the delete), paced on the flusher (purgePace: its queue
//     under half its items and half what makes writers wait, flusher
//     F11), so that the purge's deletes neither overflow the queue, which
//     would drop evictions, nor make writers wait (T25). An eviction or a
//     cleaning that meets a stale entry frees its record without writing
//     it anywhere or counting it lost. A Flush while a purge runs hands it
//     more maps (one purge at a time); Close lets it finish before the
//     flusher drains; WaitPurge waits for it. Memory counts the stale
//     entries until purged, Stats reports Purging, PurgePending and
//     Purged. Tests: TestFlushServesCallsWhilePurging (SET, GET and MGET
//     served, DBSIZE and Len right, while a hook holds the purge),
//     TestFlushTwiceWhilePurging, TestStaleEntriesLeaveDRAMQuietly,
//     TestPurgePacedByFlusher, TestFlushedKeysStayGoneAfterRestart (Close
//     during a purge), server TestFlushAllAsyncSync.
//   - T37: with a cold store that counts and walks its user keys
//     (ColdKeyspace: the emulated store, logstore E31, nvmekv K16) the
//     directory keeps an entry for at most twice the keys DRAM holds plus
//     trimSlack (4096): unless MaxKeys is set, a key only cold holds is
//     forgotten (T15's forget, its conditions) as the write of its
//     evicted copy completes above 90% of that bound (T65), and above
//     the bound a trim pass forgets the rest
//     (keys adopted by a read and not kept in DRAM); the keys evicted or
//     read last keep their entries, so their reads are sized and need no
//     adoption. Each entry knows whether cold holds a
//     record header of its key (entry.hdr: set when a put of the key
//     completed or the key was adopted, or when a new entry's key has an
//     index entry of its tag, MayHold; cleared when a cold delete of it
//     completed or a read found no record; a tombstone waits for its
//     delete whenever hdr is set, and a DEL of a cold-only key leaves
//     one), and each shard counts those entries (hdrs; checkEntries
//     checks the counts after every model step). Keys is then the
//     directory's live keys − hdrs + cold's user keys: exact once no cold
//     write or delete is in flight, O(shards); after a restart it counts
//     every key of the store (TestColdKeyspaceExact). The directory's
//     shard of a key is the top byte of its cold index tag (hashKey), so
//     Scan walks tags in order: a call takes one shard's range of tags,
//     reads the user keys cold holds there (ScanUserKeys, without the
//     shard lock unless a removal from the map raced it three times), and
//     under the shard's read lock returns each key of the range once,
//     from the directory's entry if it has one, else from cold (not at or
//     below the flush floor, not expired): a key live through a whole
//     scan is returned exactly once however it moves between tiers
//     (TestColdKeyspaceScanWhileKeysMove). A cold Get or GetMany skips
//     the command for a key the index has no entry of (MayHold), so a
//     miss or a new key's SET costs no device command. The per-tenant key
//     counts (T35) count the directory's keys only.
//   - T38: with a remote tier (Options.OpenRemote), every change a caller
//     makes (Set and its variants, MSet, Update, Rename and Copy, Delete,
//     GetDel, an expiry change or a past expiry) is queued for the remote
//     under the key's shard write lock, so a key's changes reach it in the
//     order they were made (behind W2); the expiry sweep, evictions, lost
//     copies and drops change nothing remote. Write-through
//     (RemoteOptions.WriteThrough) returns once the remote answered, at
//     most Wait later in all for a call of many keys, else counts the wait
//     once; while the remote is unavailable it gives the wait up at once,
//     counted (TestRemoteTier/Model, /WriteThrough;
//     TestRemoteWriteThroughMSetWaitsOnce,
//     TestRemoteWriteThroughUnavailableWaitsNot; server
//     TestMSetNXWaitsForTheRemoteOnce).
//   - T39: another sidecar's change of a key (the store's Watch) drops the
//     key's local copies, DRAM and cold, and changes nothing remote; it is
//     ignored while a put or delete of the key made here is queued (it
//     comes after, and decides), and waits for a change in flight to be
//     answered (the other write may have landed after it) and for a
//     queued new expiry, which carries no value
//     (TestRemoteInvalidationWhileInFlight,
//     TestRemoteInvalidationWhileRetimeQueued).
//     Every sidecar reads a change within a
//     second of its write reaching the remote (TestRemoteTier/Model: 300
//     changes through three sidecars, each read back on all three).
//   - T40: a read the local tiers miss asks the remote, unless a change of
//     the key made here is pending: a hit is served (policy.Remote) and
//     admitted locally only if the promotion policy takes it as a cold hit
//     and no change of the key was made or heard of since the read began
//     (per-class epochs, resync generation); a call that decides on a
//     key's entry (lockEntry with adopt: NX, XX, INCR, GETDEL, EXPIRE,
//     TTL, TYPE, DEL) first admits a key only the remote holds; EXISTS
//     asks the remote for headers alone and admits nothing
//     (TestRemoteExistsReadsNoValue). A remote error or timeout is a
//     miss, counted (TestRemoteTier/ReadThroughWriteBehind,
//     /ConditionalWritesSeeTheRemote).
//   - T41: Flush clears the remote for every sidecar (backend.Shared.Clear)
//     and drops the changes queued for it; if the remote cannot clear, it
//     is neither read nor written until a retry does
//     (TestRemoteTier/FlushAllIsFleetWide).
//   - T42: when invalidations may have been lost (the store's Lost: a
//     connection closed and the cluster is whole again; or the
//     invalidation backlog overflowed), every local copy becomes suspect
//     (its entry's remote generation is behind): at its next use (a read,
//     or a call that decides on its entry) it is checked against the
//     remote and kept if unchanged, replaced if changed, dropped if the
//     remote no longer holds it, and served unchecked while the remote
//     does not answer. An entry adopted from an earlier run's cold store
//     is suspect from the start. Another sidecar's Clear (Cleared) drops
//     every local copy at once (a local flush). RemoteOptions.KeepOnResync
//     serves suspect copies unchecked (TestRemoteTier/ResyncAtStart,
//     /LostInvalidationsRevalidate; cmd/tiercache TestSharedSidecars/
//     MasterKilledUnderLoad: local hits keep being served through a
//     failover).
//   - T57: a change the remote failed (a master killed, its replica not
//     yet promoted) stays pending and is sent again (behind W7) until it
//     lands on the new master: the writer's own copy, pending, is never
//     "checked" back to the remote's older value by T42, and the other
//     sidecars, whose tracking connection to the dead master closed,
//     check their copies (T42) and read the new value once the writer's
//     queue is empty; after a CLUSTER FAILOVER the demoted master keeps
//     the connections and sends the invalidations of the writes it
//     replicates (TestRemoteFailover/MasterKilled, /ManualFailover).
//   - T43: an expiry is kept as backend.Meta.Expiry encodes it (B3): every
//     time up to int64 milliseconds, past 2262 too, is kept exactly,
//     ordered under ExpireAtIf's GT and LT by its millisecond (rounded
//     down, Redis's unit; a past time before every live expiry:
//     TestExpireGTInOneMillisecond), never expires before its time,
//     and survives demotion to cold, adoption back and a restart
//     (TestFarExpiriesAcrossColdAndRestart).
//   - T46: OnRemoval's function is told of every key that leaves the
//     cache or changes without a caller's command: Expired by the sweep,
//     Evicted when no tier holds it any more (T7's losses), RemoteChanged
//     for every invalidation another sidecar's change sends (T39), also of
//     a key only read through the remote, and for a suspect copy replaced
//     or dropped by its check (T42); Flushed after another sidecar's Clear
//     and when invalidations may have been lost (T42: what a tracking
//     client holds may be stale too); never for a move between tiers. It
//     runs under the key's shard lock (hooks.go; server
//     TestRemovalsNotifyAndInvalidate, TestTrackingHearsOtherSidecars).
//   - T47: a value Set with SetOptions.Owned that goes to cold (one no
//     DRAM log takes, or any in writethrough) is written from the
//     caller's slice, not from a copy: a value of hundreds of MiB is on
//     the Go heap once (TestOwnedBigValueIsNotCopied).
//   - T49: the cold store gets the tenants (backend.Params.Tenants) and
//     each tenant's row carries its cold figures (TenantStats.Cold, by
//     name; a namespace kept from a tenant no longer configured gets a
//     row of its own). With coldstore's tenant namespaces, a tenant's
//     cold keys survive another tenant's flood of 20 times its cold
//     quota, its hit ratio counting cold hits stays within 0.01, and the
//     reclaims are the flooding tenant's, counted to it; on one shared
//     cold store the same flood takes them
//     (TestTenantColdFloodKeepsOthersKeys).
//   - T50: with tenants, the write-behind flusher is shared by their
//     FlushWeight (the default tenant weighs 1; flusher F14, keys classed
//     by tenant): in shed mode a tenant whose evictions overflow the queue
//     drops its own, and a tenant within its share keeps every key through the
//     flood (TestTenantFlushShareKeepsOthersWrites).
//   - T51: MemoryUsage is the DRAM a key holds from measured per-key
//     costs (directory entry, expiry index slot, DRAM record or live
//     structure's heap, the cold index's entry); added up over 20,000
//     keys (200,000 with an expiry) it is within +25% / -10% of the heap
//     growth and hot log bytes measured for them, for values in the hot
//     log, with an expiry and without, and for live structures
//     (TestMemoryUsageIsMeasured); a key only the emulated cold store
//     holds costs its entry and index entry alone
//     (TestMemoryUsageOfAColdKey).
//   - T52: ViewBig reads a value of more than 1 MiB from cold into the
//     buffer its caller lends (big), not into a new slice of its size;
//     declined, as View does (TestViewBigReadsColdIntoLentBuffer).
//     KeepsOwned reports which sizes a Set with SetOptions.Owned keeps
//     (T47), so the caller knows when its slice is free again once Set
//     returned.
//   - T53: ViewBigAt decides expiry by the caller's time for its first
//     look (a retry reads the clock), and a Set with SetOptions.Now
//     counts a TTL from it; 0 reads the cache's clock
//     (TestReadsAndWritesAtTheCallersTime).
//   - T55: the expiry sweep visits the keys whose expiry's second came,
//     not every key: each shard files each live entry with an expiry
//     (before 2262) once in its expiry index (expindex.go), in a timing
//     wheel slot visited at or before its expiry's second, or in the
//     shard's late list once that second was visited; nothing else is
//     filed (checkExpiryIndex, checked at every step of the model tests).
//     Every write, retime, delete, eviction, forgetting and Flush keeps
//     it so (an expiry moved later leaves the entry where it is: its slot
//     is visited earlier still). A sweep at now purges every live key expired at now but one
//     with a writethrough change in flight (the next sweep takes it), even
//     with another sweep beside it (one runs at a time:
//     TestOverlappingSweepsPurgeEveryExpiredKey): a
//     key goes within SweepInterval of its expiry, never before. It
//     visits an entry, for each expiry within the wheel's 194 days it is
//     filed for, at most wheelLevels+1 times (once a level it moves down,
//     once more if filed at the start of its slot's span), plus once a
//     sweep while it is late, and holds a shard's lock for at most sweepBatch entries at a
//     time. The index takes 16 bytes a key with an expiry and the entry
//     none, and a sweep that leaves a shard no key with an expiry drops
//     its index (TestExpiryIndexDroppedWhenEmpty, TestSizeSlotPacking,
//     TestSweepVisitsOnlyDueKeys,
//     TestSweepModel, TestSweepLetsGoBetweenBatches, TestSweepBesideWriters,
//     TestExpirySweepAndLen, TestDirectoryCostCoversHeap).
//   - T44: an aggregate the layer above edits and reads through Edit and
//     Read (a LiveKind says how its structures are made) is, in the DRAM
//     tiers, a live structure on the Go heap that changes in place:
//     Edit runs its function once under the key's shard write lock on the
//     structure (made from the key's record where it had none), so a
//     change is one step; Changed gives a new version keeping the expiry
//     (the old version's cold copy deleted, T3), Emptied removes the key.
//     The structure is the DRAM copy of its version, reached from the
//     entry by a handle into its shard's table (entry.where memLive, no
//     Go pointer in the entry): reads that want bytes get its serialized
//     form (memLookup), an eviction writes that form to cold through
//     transit (T5), a demotion makes it a warm record, drain and the
//     remote tier take it like any value (a change queues a lazy put,
//     behind W6: its record is built once per send, not per change). In
//     writethrough mode Edit
//     stores the changed structure's record durably as Update does (T28).
//     Tests: TestLiveEditInPlace, TestLiveKeepsTTL, TestRemoteTier/
//     LiveAggregates, and the model tests' live operations (modelLiveOp;
//     checkLiveShard after every step).
//   - T45: a live structure's heap bytes, measured by the structure
//     (Live.HeapBytes), are its weight in the LFU and are charged to hot:
//     the hot log withholds whole segments covering them (their pages
//     given back to the kernel, dram A7), within one command's growth and
//     two segments of slack; structures past what hot can withhold are
//     demoted, least recently used first (a clock), to warm records or
//     out of DRAM (TestLiveWithheldFromHot). A record's writer that finds
//     hot wedged (its open segment full, no sealed one to clean, the rest
//     withheld) gets a segment back after structures are demoted
//     (yieldLive; cmd TestPeakRSSWithinBudgetAggregates, whose hashes are
//     records among live lists, sets and sorted sets). Memory reports them
//     (LiveBytes) beside the heap budget, which hot covers them for, and
//     GoLimit, which the Go memory limit follows, adds them.
//   - T48: ReadPieces reads only the pieces of an aggregate its caller
//     chooses (backend.Pieces) while the cold tier alone holds its
//     version, and answers done false, reading nothing, otherwise (in a
//     memory tier or transit, suspect, of another kind, absent) or when
//     the promotion policy wants the key in DRAM, so a frequent key still
//     comes up whole; the pieces are of the version the directory names
//     (server TestColdAggregateReadsItsPieces).
//
// # Entry lifecycle
//
// A directory entry has an explicit state and an explicit account of what
// cold holds (entry.go); they change only through entry's methods, each
// called with the shard's write lock held:
//
//	state  live ──purge, cold may hold a copy──▶ tomb ──its cold delete done──▶ gone
//	       live ──purge, no cold copy; trim────▶ gone
//	       tomb ──Set of the key──▶ live
//	       live, tomb ──Flush takes its map: stale, out of the map (T36)──▶
//	                    gone, once the background purge took it
//	cold   none ──a copy may reach cold (write queued, warm copy)──▶ maybe
//	       none, maybe ──cold acknowledged this version──▶ holds
//	       maybe, holds ──overwrite or delete queues a cold delete──▶ none
//
// checkEntries (model_test.go) checks after every step of the model tests
// (TestModelMemoryTiers, TestModelEmulatedCold, TestModelLifecycle: Set,
// Delete, Expire, Persist, reads, clock steps, evictions, flusher
// completions, injected cold read errors and restarts) that:
//
//   - L1: every entry in the map is live or a tombstone; an entry that
//     leaves the map is gone for good (a Set makes a new one).
//   - L2: every entry in the map has a version (never 0).
//   - L3: a tombstone has cold none (its delete is queued), no DRAM
//     record and no moved expiry.
//   - L4: cold is one of none, maybe, holds; holds means cold has the
//     entry's own version (coldHas), never an older one.
//   - L5: an entry names its own key; one without a DRAM record is not
//     flushing and names no log; one with a record names the hot or the
//     warm log and a record of exactly its value's size.
//   - L6: an entry resident in the LFU has a DRAM record it is not
//     flushing (checked under mem.mu).
//   - and the shard's live count equals its live entries (T12).
//
// # Caveats
//
//   - With a KV SSD (a store without backend.Keyspace), Len and Scan are
//     exact for the keys this process wrote or read. Keys left in it by an
//     earlier run are counted and listed once touched (adopted): the KV
//     layer maps keys to hashes and cannot list user keys. For the same
//     reason Flush leaves such keys' records in
//     the store, hidden by the floor (T14), until a read of the key deletes
//     them or the store reclaims them; in Strict mode (writethrough) they
//     would hold capacity, and writethrough clears such a store whole.
//   - While a purge runs (0.2 s for a million keys on 2 cores,
//     BenchmarkFlushGetWait), the flushed keys' DRAM records
//     still take room and their LFU nodes still compete with new keys (an
//     eviction that picks one frees it, T36). After a crash in cache or
//     drain mode, a key written while Flush recorded its first floor may
//     come back if the purge had not deleted its cold copy yet (the later
//     floor was not recorded yet).
//   - The directory costs DirEntryBytes (200) of Go heap per key of up to
//     16 bytes, longer keys their length more (T19), on top of the tiers'
//     budgets; MaxKeys bounds it (T15), at the price of a cold
//     lookup for each miss and each forgotten key's next read, and of Len
//     and Scan counting only the keys the directory holds.
//   - After a crash in cache or drain mode cold may still hold a version
//     that a later acknowledged write replaced or a delete removed (its cold
//     delete was still queued), and an overwrite cut short may leave nothing
//     (the old copy's delete runs ahead of the new value, which is only in
//     memory); a clean Close always drains the queue. Writethrough has
//     neither (T28).
//   - Writethrough costs a device sync per change (group-committed across
//     concurrent writers), and a DEL of n keys waits for n cold deletes
//     (sent together, as are MSET's writes). There is no transaction across
//     keys: once the store turned read-only DEL, MSET and FLUSHALL answer
//     ErrColdReadOnly and change nothing, but a failure that first shows
//     during one of them leaves the keys whose change was durable changed
//     and the others unchanged, and the error (*PartialError) says how
//     many of each.
//   - A TTL changed with Expire/Persist/GetEx is not rewritten to a cold
//     copy while the cache runs (T17): the copy keeps the expiry it was
//     written with, and an adoption reads that one. It matters after a
//     crash, after a restart in cache durability, and for a key the
//     directory forgot (T15 keeps such keys until they are rewritten).
//   - A value the cache dropped (queues full, flash budget, device error)
//     reads as a miss: it is a cache, and Stats counts every drop.
//   - The emulated namespace takes one 8 KiB read slot per key of a batched
//     read and blocks while none is free, and one submission must fit its
//     ring: coldstore.Open sizes both from backend.Params.Batch
//     (MGetColdBatch); another store passed through OpenCold must do the
//     same.
//   - Returned slices are the caller's (Get and View append to dst; MGet's
//     values share one allocation).
//   - The cold index's tag segments under 64 KiB and extent tables under
//     2 MiB live on the Go heap and are not bound whatever
//     coldstore.Config.IndexNode says (Stats.ColdIndexBoundBytes stays below ColdIndexBytes). AutoNode
//     follows the warm arena's configuration, resolved before the arena
//     is mapped (the cold store opens first): if the arena then falls
//     back to unbound (warm.fallback preferred, e.g. EPERM), the index
//     still tries the node, and its failures are counted.
//   - The directory's cost per key (DirEntryBytes) is outside HotBytes and
//     WarmBytes: many keys of tiny values take heap beside the DRAM
//     budget (the LFU charges each its key and value bytes).
//   - Tenants partition DRAM, not the logs' segments: a tenant's quota
//     bounds the key and value bytes its keys keep, while where their
//     records sit (hot or warm) is placement, shared (§3.1), the flusher is
//     shared by weight (T50), and the cold tier is shared but by the
//     tenants with a namespace of their own (T49). Two last resorts evict whatever a
//     segment holds, of any tenant: a cleaning that finds no room for a
//     record in either log (DRAMStats.Dropped) and makeRoom's
//     evictSegment after memRounds rounds; but while DRAM records are on
//     their way to cold they take only the keys of the tenant the room
//     is for (T61).
//     A quota unused by its tenant is not lent to others. Cold keys and
//     bytes are counted per tenant only for a namespace of its own (T49).
package tier

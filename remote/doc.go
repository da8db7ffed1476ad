// Package remote is the remote tier: a backend.Shared on an existing Redis
// Cluster, Valkey cluster or single Redis server (7.0 or later), shared by
// every replica's sidecar, through the rueidis client (slots, MOVED/ASK,
// topology refresh, auto-pipelining, RESP3 client tracking). It never runs
// a cluster of its own.
//
// Every key lives under Config.Prefix (keys.go): a value is a record of
// ours (record.go: header, CRC-32C, put ID) under P+"d<gen>:"+key, pieces
// of values above ChunkBytes under their own keys spread over the cluster.
// Reads are MGETs grouped by slot with each key's PEXPIRETIME, one
// pipeline a node; each write of a key is a MULTI/EXEC of the write and
// a PEXPIRETIME of the key, many in flight together. Other sidecars'
// writes reach this one as RESP3 invalidation pushes (CLIENT TRACKING in
// the default mode, NOLOOP: the server tracks the keys each connection
// read, and a write re-reads its key in its transaction), which Watch
// hands to the tier.
//
// # Invariants
//
//   - R1: a round trip is bounded by Config.Timeout (writes, and the
//     read of a chunked value's pieces, by the deadline plus 10 ns a
//     byte): past it, or on any error, a read is a miss carrying the
//     error and a write fails, both counted; nothing blocks longer
//     (TestSlowRemoteIsAMiss, TestBigValueReadsWithinItsBound).
//   - R2: a value read is exactly a value stored under that key, with its
//     flags and expiry, and never past its expiry: bytes under the prefix
//     that are not a record of ours, or whose CRC does not match, are a
//     miss counted as foreign; HasMany reads headers and expiries alone,
//     never a value (TestStoreOnACluster: RoundTrip, ForeignValueIsAMiss;
//     TestHasManyReadsNoValues).
//   - R3: a put, delete or expiry change of a key through one store reaches
//     the Watch of every other store that read or wrote the key since its
//     last change, as that key, and never the writer's own (NOLOOP, and a
//     write tracks its key again in its own transaction, so no other
//     write comes between); a Clear of another store reaches Watch as
//     Cleared, and a connection that closed (its pushes may be lost) as
//     Lost, once every node answers again and a cluster serves every slot
//     (TestStoreOnACluster: WatchSeesOtherWriters, ClearIsFleetWide;
//     TestResyncAfterLostConnection, TestClearAfterOwnClear).
//   - R4: a chunked value is read whole or not at all: its pieces are
//     written before its header and named by the header's put ID, so a
//     reader racing an overwrite or delete reads the old value, the new
//     one, or a miss, never a mix
//     (TestStoreOnACluster/ChunkedValueNeverMixes); the pieces of a
//     replaced or deleted value expire after chunkGrace
//     (TestStoreOnACluster/ReplacedPiecesExpire).
//   - R5: Open never fails for an unreachable store or refused
//     credentials: the store starts unavailable, logs why once (refused
//     credentials, or no seed answering, with TLS's likely cause), and
//     connects in the background; while unavailable or while its breaker
//     is open (BreakerFailures round trips in a row failed), calls make no
//     round trip and say ErrUnavailable; the health probe closes the
//     breaker once every node answers (TestUnreachableAtStart,
//     TestWrongPassword, TestBreakerOpensAndCloses).
//   - R6: Clear makes every key stored so far absent for every store at
//     once (a new generation), and the keys of earlier generations are
//     removed in the background (TestStoreOnACluster/ClearIsFleetWide;
//     TestClearBesideResync).
//   - R7: a write the remote refuses while it serves reads (-OOM at
//     maxmemory with noeviction, -READONLY from a replica, -MISCONF,
//     -NOREPLICAS) fails that key's write and is counted (Refused, and
//     OOM or ReadOnly), never as a failure of the remote: it does not
//     count toward the breaker, so reads go on; a store opened meanwhile
//     connects on the generation another store made
//     (TestOOMKeepsReadsOpen).
//   - R8: a put or new expiry refused for memory removes the key's record
//     instead (GETDEL, outside a transaction: at maxmemory Redis refuses
//     every command queued in a MULTI), and a delete refused so is done
//     that way, so no store reads the value a refused write replaced
//     (TestOOMKeepsReadsOpen).
//   - R9: the generation never goes back: a store that finds the
//     generation key absent (never made, evicted by an allkeys-* policy,
//     lost in a failover) makes one above every generation before (the
//     microseconds since 1970, at least one more than the store's own),
//     reports Cleared, and sweeps the keys of the generations before;
//     each health round reads the key, so a change of it that no
//     invalidation reported is found within a round
//     (TestGenerationNeverGoesBack).
//   - R10: a write answered READONLY (the master was demoted under the
//     store's connections, or a seed is a replica) makes the health loop
//     connect to the seeds again, at most once a BreakerBackoff, counted
//     as a redial: a seed that names the master (a DNS name, a provider's
//     primary endpoint) reaches the new one, and writes land there; a
//     cluster client reads the topology again (TestReadOnlyAfterFailover).
//   - R11: a Clear refused for memory (its INCR, at maxmemory under
//     noeviction) unlinks the current generation's keys too, in the
//     background, so that a retry finds room: a FLUSHALL is never lost
//     for good to a full remote (TestClearAtMaxmemory).
//
// # Caveats
//
//   - The server keeps the keys each connection tracks in a table of at
//     most tracking-table-max-keys (Redis's default 1,000,000 over all
//     clients); past it, it invalidates keys to make room, which the tier
//     reads as changes: local copies dropped, read again later.
//   - Redis replication is asynchronous: a write a master acknowledged and
//     lost in a failover is gone. The remote tier is a cache; a lost write
//     costs a recompute.
//   - R9's fresh generation is above the ones before as long as the
//     clocks of the sidecars that remake it differ by less than the time
//     between two losses of the key; a store that saw a higher generation
//     than the one remade follows the remade one.
//   - A piece left by a writer that died between its pieces and its header
//     has no header to find it: it expires with its value's expiry, if
//     any, or is removed with its generation by a later Clear's sweep.
package remote

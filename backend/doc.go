// Package backend is the seam between the tier and the stores below its
// DRAM tiers: the cold store (package coldstore, on an NVMe KV namespace or
// the emulated one) and the remote tier (package remote, on a Redis
// Cluster, a Valkey cluster or one Redis server). tier.Cache talks to both
// through Store and the optional interfaces here alone, and imports
// neither implementation; cmd/tiercache opens them and hands them over
// (tier.Options.OpenCold, OpenRemote).
//
// A Store keeps values with their Meta under user keys; what a value means
// (its kind, in Meta.Flags) is the tier's. The flusher writes to a Store
// (flusher.Store: PutMany, Delete), so a store is written in batches; reads
// are single (Get) or batched (GetMany: one device submission, or one
// pipeline per remote node).
//
// # Invariants
//
//   - B1: a Store reports a key it does not hold as not found, never as an
//     error, and a Delete of a key it does not hold succeeds: a miss is
//     not a failure (coldstore TestMissIsNotAnError, remote
//     TestMissIsNotAnError).
//   - B2: a value Get or GetMany returns is exactly one value PutMany
//     stored for that key, with the Meta it was stored with (Expiry as the
//     flusher last stamped it): never another key's, never a mix of two
//     puts (coldstore TestRoundTrip, remote TestStoreOnACluster/ForeignValueIsAMiss,
//     remote TestStoreOnACluster/ChunkedValueNeverMixes).
//   - B3: an expiry is unix nanoseconds up to the year 2262 and, past it,
//     math.MinInt64 plus unix milliseconds: every time up to int64
//     milliseconds (all Redis accepts) round-trips, expiries order by
//     time, one past 2262 never expires, and an expiry before 2262 is
//     stored as older records stored it (TestExpiryEncoding).
//
// # Caveats
//
//   - GetMany's results are in the order of its keys; a value appended to
//     a caller's dst may reuse that dst's memory.
//   - Stats is called on every INFO and scrape: it must not do I/O.
package backend

// Package coldstore is the cold tier: an NVMe KV namespace (a KV SSD
// through io_uring passthrough, or the emulated namespace on a file, a
// block device or an ordinary NVMe namespace) with nvmekv.KV on top, as a
// backend.Store. cmd/tiercache opens it (Open) and hands it to the tier
// (tier.Options.OpenCold); the tier sees only backend's interfaces.
//
// Beside backend.Store a Store records the tier's flush floor
// (backend.Floors, floor.go) and, over the emulated namespace, counts and
// walks its user keys (backend.Keyspace, keyspace.go).
//
// # Invariants
//
//   - CS1: every Store keeps expired records (nvmekv
//     KVOptions.KeepExpired): the tier's directory decides expiry (tier
//     T17), so a copy whose TTL moved after it was written is served at the
//     entry's expiry. New refuses a KV that hides them
//     (TestNewRefusesKVHidingExpired).
//   - CS2: with the emulated namespace, IndexNode decides where its
//     index's off-heap tables live: AutoNode is Params.WarmNode (unbound
//     when that is -1), Unbound leaves them, a node id binds them; a node
//     that does not exist or has no memory fails Open naming it; every
//     off-heap table, the first and each growth makes, is bound with mbind
//     before it is touched (logstore E28), and Stats reports the node, the
//     index's bytes and those bound, the tables that could not be, and the
//     fraction of their resident pages on the node (TestIndexBoundToNode,
//     TestIndexNodeResolution; guest TestColdIndexOnNode1: placement 1 on
//     the CPU-less node).
//   - CS3: the emulated namespace runs Strict (it copies live records
//     forward and fails writes when full, never reclaims a live one) when
//     Config.Strict or Params.Strict says so, and Stats.Strict is true then
//     and for a KV SSD, false otherwise (TestStrictFollowsParams; tier
//     TestWriteThroughStoreKeepsOldKeys: such a store keeps every
//     acknowledged record).
//   - CS4: the flush floor is one record under an 8-byte device key, which
//     no user key or chunk maps to (their device keys are 16 and 15 bytes);
//     SetFloor syncs it before returning and Floor reads it back after a
//     reopen; a record there that is not a floor is ErrBadFloor
//     (TestFloorSurvivesReopen).
//   - CS5: with Config.Cut, PutMany writes a value the cut lays out for
//     pieces as a pieced record (nvmekv K20), and GetPieces reads the
//     pieces its caller chooses (backend.Pieces); a value the cut leaves
//     whole is stored, and read, as before (server
//     TestColdAggregateReadsItsPieces).
//
// # Caveats
//
//   - Store.KV is the KV the store runs on, for tests and tools; writing
//     through it bypasses the tier.
package coldstore

// Package coldstore is the cold tier: an NVMe KV namespace (a KV SSD
// through io_uring passthrough, or the emulated namespace on a file, a
// block device or an ordinary NVMe namespace) with nvmekv.KV on top, as a
// backend.Store. cmd/tiercache opens it (Open) and hands it to the tier
// (tier.Options.OpenCold); the tier sees only backend's interfaces.
//
// With tenants given cold capacity (Config.Tenants), Open returns a Multi
// instead: one namespace per such tenant beside the default one, on a
// volume of emulated namespaces (nvmekv/emu/volume: one file, block
// device or NVM namespace's LBA range each) or as KV namespaces of a KV
// SSD made through Namespace Management (nvmekv/nsadmin), each key routed
// by its prefix (multi.go).
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
//   - CS5: with tenant namespaces (Multi), a key is read from and written
//     to the namespace its prefix selects (a tenant's own, or one kept
//     from a tenant no longer configured), else the default namespace,
//     and nowhere else; the keyspace is every namespace's, the flush floor
//     the default namespace's, and each tenant's reads and writes are
//     counted to it (TestMultiRoutesByPrefix).
//   - CS6: Open checks the tenants' configuration against the device
//     before it makes or drops anything: a namespace asked with another
//     size (namespaces do not grow), taken by two tenants, missing, the
//     default one, of a changed prefix, below the smallest size or past
//     the free space, a kept namespace whose prefix overlaps a tenant's
//     or whose tenant is configured without one
//     (TestKeptNamespaceOfAConfiguredTenantRefused), and a single
//     emulated namespace asked to give tenants their own, are refused
//     with every problem named (ErrTenantMismatch) and nothing made,
//     moved or dropped (TestMultiRefusesMismatch; a size
//     below the smallest is refused by Validate, before any file is made,
//     TestTinyTenantSpaceRefusedByValidate; so are an emulated Capacity
//     below four log regions and a fresh volume whose tenants leave the
//     default namespace below the smallest, TestTinyCapacityRefusedByValidate,
//     or whose DefaultBytes is below the smallest or does not fit beside
//     them, TestDefaultBytesRefusedByValidate; a KV
//     SSD's through nsadmin NA4: a claimed namespace of another command
//     set, two claims of one NSID, sizes past the unallocated capacity).
//   - CS7: a tenant namespace is recorded as its tenant's (name and
//     prefix, under an 8-byte device key) and takes, before it is used,
//     the keys of its prefix the default namespace holds: each batch
//     written and synced there before it is deleted here, the record then
//     saying the move is done; a move cut short is done again at the next
//     Open (TestNewNamespaceTakesItsKeys).
//   - CS8: the namespace of a tenant no longer configured is kept, and
//     its prefix's keys still go there, until DropTenant (or DropRemoved
//     at Open) deletes it; DropTenant is refused while a store is open on
//     it, and never drops the default namespace or a KV namespace this
//     host did not make (TestRemovedTenantKept).
//   - CS9: with Config.Cut, PutMany writes a value the cut lays out for
//     pieces as a pieced record (nvmekv K21), and GetPieces reads the
//     pieces its caller chooses (backend.Pieces); a value the cut leaves
//     whole is stored, and read, as before (server
//     TestColdAggregateReadsItsPieces).
//   - CS10: with tenant namespaces, Multi reads pieces too (backend.Pieces):
//     from the namespace the key's prefix selects (CS5), a few blocks of
//     it and none of another, counted as a read of its tenant
//     (TestMultiReadsPieces; server TestTenantColdAggregateReadsItsPieces).
//
// # Caveats
//
//   - Store.KV is the KV the store runs on, for tests and tools; writing
//     through it bypasses the tier.
package coldstore

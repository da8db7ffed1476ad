package backend

import (
	"context"
	"time"

	"github.com/tiercache/tiercache/flusher"
)

// Meta is what a store keeps beside a value (the DRAM tiers keep it in the
// directory entry).
type Meta struct {
	Expiry  int64  // unix ns, 0 = none; past 2262, math.MinInt64 + unix ms (expiry.go)
	Version uint64 // the cache-wide version of the write that produced the value
	Flags   uint32 // the writer's flags (the tier keeps the value's kind here)
}

// Result is one GetMany result.
type Result struct {
	Value []byte
	Meta  Meta
	Found bool
	Err   error
}

// Store is a tier below DRAM: the cold store or the remote tier.
type Store interface {
	flusher.Store // PutMany (one batch: one submission, or one pipeline per node); Delete (B1)
	// Get appends key's value to dst; found is false on a miss (B1). size
	// is the value's expected length (< 0: unknown), which lets a device
	// read it in one round trip; a wrong size only costs a second one.
	Get(ctx context.Context, dst, key []byte, size int) (value []byte, m Meta, found bool, err error)
	// GetMany looks every key up together; sizes (nil, or one per key) are
	// as Get's; each value is appended to dsts[i] (dsts nil, or one per
	// key: a nil one is fresh memory).
	GetMany(ctx context.Context, keys [][]byte, sizes []int, dsts [][]byte) []Result
	// Stats are the store's counters; no I/O.
	Stats() Stats
	Close() error
}

// Stats are a store's counters. A field a store cannot tell is zero (or
// as its comment says).
type Stats struct {
	Backend                 string // "emulated:<path>", "passthrough:<dev>", "remote:<addrs>", ...
	Items                   int64  // records the store holds (a chunked value counts once per chunk); -1 if unknown
	FreeBytes               uint64
	BytesRead, BytesWritten uint64
	Submissions             uint64 // device submissions (GetMany counts one)
	// Evictions counts the records the store dropped by itself to make
	// room (an emulated store in cache mode reclaiming its oldest region;
	// a chunked value counts once per chunk); 0 if unknown.
	Evictions   uint64
	MaxValue    int  // largest value the store takes
	PreExisting bool // the store held data when opened
	// Strict: the store never drops a live record to make room (a full
	// store fails writes), as writethrough needs (tier T29).
	Strict bool
	// I/O in flight longer than the store's stall bound, and the age of the
	// oldest I/O in flight; 0 when the store has no ring.
	StalledIO uint64
	OldestIO  time.Duration
	// WriteError is why the store takes no more writes (an emulated
	// store after a failed region write, until reopened); nil while
	// writable or unknown.
	WriteError error
	// The emulated store's index (tier T33): the node its off-heap tables
	// are bound to (-1 unbound), its bytes (tables on the Go heap
	// included), the bytes of its tables bound there, the tables that
	// could not be bound, and the fraction of its off-heap tables'
	// resident pages on the node (-1 when unbound or nothing to measure).
	// 0 (node -1, placement -1) for other stores.
	IndexNode                   int
	IndexBytes, IndexBoundBytes int64
	IndexBindErrors             uint64
	IndexPlacement              float64
	// Remote is a Shared store's own figures (nil for others).
	Remote *RemoteStats
	// Tenants are each tenant's figures in the store, by name (nil when
	// the store keeps none): the default tenant, Params.Tenants, then the
	// namespaces of tenants no longer configured.
	Tenants []TenantStats
}

package tier

import (
	"context"
	"time"

	"github.com/tiercache/tiercache/flusher"
)

// Meta is what the cold tier stores beside a value (the DRAM tiers keep it
// in the directory entry).
type Meta struct {
	Expiry  int64  // unix ns, 0 = none
	Version uint64 // the cache-wide version of the write that produced the value
	Kind    Kind   // the value's kind (the record's flags)
}

// Cold is what the cache needs from the cold tier (an *nvmekv.KV adapts to
// it). It is also the flusher's store.
type Cold interface {
	flusher.Store // PutMany (one submission of linked chains), Delete (missing key is not an error)
	// Get appends the value to dst; found is false on a miss. size is the
	// value's expected length (< 0: unknown), which lets the backend read
	// it in one device round trip; a wrong size only costs a second one.
	Get(ctx context.Context, dst, key []byte, size int) (value []byte, m Meta, found bool, err error)
	// GetMany looks every key up in one device submission; sizes (nil, or
	// one per key) are as Get's; each value is appended to dsts[i] (dsts
	// nil, or one per key: a nil one is fresh memory).
	GetMany(ctx context.Context, keys [][]byte, sizes []int, dsts [][]byte) []ColdItem
	// Floor returns the flush floor the store recorded (0: none): every
	// record of a version at or below it was flushed and reads as absent
	// (T14).
	Floor(ctx context.Context) (uint64, error)
	// SetFloor records floor durably (synced before it returns), in a
	// place no user key maps to.
	SetFloor(ctx context.Context, floor uint64) error
	Stats() ColdStats
	Close() error
}

// ColdItem is one GetMany result.
type ColdItem struct {
	Value []byte
	Meta  Meta
	Found bool
	Err   error
}

// ColdStats are the cold tier's counters.
type ColdStats struct {
	Backend                 string // "emulated:<path>", "passthrough:<dev>", ...
	Items                   int64  // device records (a chunked value counts once per chunk); -1 if unknown
	FreeBytes               uint64
	BytesRead, BytesWritten uint64
	Submissions             uint64 // device submissions (GetMany counts one)
	// Evictions counts the records the store dropped by itself to make
	// room (an emulated store in cache mode reclaiming its oldest region;
	// a chunked value counts once per chunk); 0 if unknown.
	Evictions   uint64
	MaxValue    int  // largest value the store takes
	PreExisting bool // the store held data when opened
	// Device I/O in flight longer than the ring's StallAfter (ColdStallAfter), and
	// the age of the oldest I/O in flight; 0 when the backend has no ring.
	StalledIO uint64
	OldestIO  time.Duration
	// WriteError is why the store takes no more writes (an emulated
	// store after a failed region write, until reopened); nil while
	// writable or unknown.
	WriteError error
	// The emulated store's index (T33): the node its off-heap tables are
	// bound to (-1 unbound), its bytes (tables on the Go heap included),
	// the bytes of its tables bound there, the tables that could not be
	// bound, and the fraction of its off-heap tables' resident pages on
	// the node (sampled at most once a second; -1 when unbound or nothing
	// to measure). 0 (node -1, placement -1) for other backends.
	IndexNode                   int
	IndexBytes, IndexBoundBytes int64
	IndexBindErrors             uint64
	IndexPlacement              float64
}

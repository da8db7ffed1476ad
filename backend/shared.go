package backend

import (
	"context"
	"time"
)

// Shared is a store other sidecars read and write too: the remote tier, on
// a Redis Cluster, a Valkey cluster or one Redis server. Beside Store it
// changes a stored copy's expiry alone, tells the tier which keys another
// writer changed, and empties itself for every sidecar at once.
type Shared interface {
	Store
	// DeleteMany deletes keys together; errs[i] is keys[i]'s outcome (B1:
	// an absent key is not an error).
	DeleteMany(ctx context.Context, keys [][]byte) (errs []error)
	// HasMany reports which keys the store holds, live, without reading
	// their values (EXISTS); errs[i] is keys[i]'s outcome (an error: not
	// known to be held).
	HasMany(ctx context.Context, keys [][]byte) (has []bool, errs []error)
	// RetimeMany sets the expiry of each key's stored copy (unix ns, 0:
	// none) without sending its value; an absent key is not an error.
	RetimeMany(ctx context.Context, keys [][]byte, exps []int64) (errs []error)
	// Watch sets fn, which the store calls with what other writers
	// changed (Change). fn runs on the store's goroutine and must not
	// block.
	Watch(fn func(Change))
	// Clear makes every key stored so far absent for every sidecar at once
	// (FLUSHALL), and removes them in the background.
	Clear(ctx context.Context) error
	// Available reports whether the store is worth asking now: false
	// while it is unreachable or its circuit breaker is open, so that a
	// read costs nothing then.
	Available() bool
}

// Change is what a Shared store tells its watcher.
type Change struct {
	// Keys another writer changed or deleted.
	Keys [][]byte
	// Lost: changes may have been missed (a connection to the store closed
	// and is back): any key may have changed.
	Lost bool
	// Cleared: another writer emptied the store (Clear).
	Cleared bool
}

// RemoteStats are a Shared store's own figures.
type RemoteStats struct {
	Connected     bool   // the client is connected (a seed answered)
	Breaker       string // "closed", "open" or "half-open"
	BreakerOpens  uint64 // times the breaker opened
	Nodes         int    // nodes the client knows
	ClientBytes   int64  // Go heap the client's connection buffers take (an estimate: buffers a node times nodes)
	Errors        uint64 // round trips that failed (connection, server error)
	Timeouts      uint64 // round trips past the deadline
	Skipped       uint64 // calls answered without a round trip while unavailable
	Foreign       uint64 // values under the prefix that are not records of ours (read as misses)
	Torn          uint64 // chunked values whose pieces did not match their header (read as misses)
	Invalidations uint64 // keys another writer changed, reported to Watch
	Resyncs       uint64 // times Watch was told that any key may have changed
	Generation    uint64 // the store's current generation (each Clear starts a new one)
	Swept         uint64 // keys of earlier generations removed
	Refused       uint64 // writes of a key the remote refused while serving reads (OOM, READONLY, MISCONF, NOREPLICAS)
	OOM           uint64 // of which refused for maxmemory (noeviction)
	ReadOnly      uint64 // of which refused by a replica (READONLY)
	Redials       uint64 // new clients made from the seeds after a READONLY (the master moved)
	// Latency of round trips (reads and writes): cumulative counts of
	// those at most LatencyBounds[i], and their number and sum.
	LatencyBounds []time.Duration
	LatencyCounts []uint64
	LatencyCount  uint64
	LatencySum    time.Duration
}

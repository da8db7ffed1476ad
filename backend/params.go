package backend

import "go.uber.org/zap"

// Params is what the tier asks of a store it opens (tier.Options.OpenCold):
// the limits and guarantees its own options imply.
type Params struct {
	// MaxValue is the largest value the tier stores, in bytes.
	MaxValue int
	// Batch is the most keys one GetMany asks for (the tier's
	// MGetColdBatch); a device store sizes its read buffers for it.
	Batch int
	// Strict: the store must never drop a live record to make room
	// (writethrough durability, tier T29); Stats.Strict says it does not.
	Strict bool
	// WarmNode is the NUMA node the warm tier is configured for, -1 if
	// none: where a store's index goes when told to follow warm.
	WarmNode int
	// Tenants are the tier's tenants, in its order (tier.Options.Tenants):
	// the prefixes a store routes by when it gives tenants namespaces of
	// their own, and the rows of Stats.Tenants.
	Tenants []Tenant
	Logger  *zap.Logger
}

package warm

import (
	"errors"
	"fmt"
	"math/bits"
	"time"

	"github.com/tiercache/tiercache/numa"
	"go.uber.org/zap"
)

// Meta is the per-item metadata kept with the value.
type Meta struct {
	Expiry  int64  // unix ns; 0 = never expires
	Version uint64 // caller's version; later copies win in tier/
}

// Options configures New.
type Options struct {
	// Bytes is the arena size in bytes, rounded down to whole segments. Required.
	Bytes int64
	// SegmentBytes is the log segment size in bytes: the eviction unit and
	// the largest record (32-byte header + key + value). Default 4 MiB, or
	// Bytes/16 rounded down to 4 KiB (at least 64 KiB) when Bytes < 64 MiB;
	// a multiple of 4096.
	SegmentBytes int
	// Shards is the number of independently locked shards, a power of two.
	// Default: the largest power of two <= 64 leaving each shard >= 8
	// segments (at least 1). Each shard needs >= 2 segments.
	Shards int
	// Arena places the arena (node, policy, mode, fallback, huge pages).
	// Its Bytes is set from Bytes. The zero value binds to node 0, strict;
	// a deployment wants Node: numa.AutoNode (the best CXL node) with
	// Fallback: numa.FallbackPreferred (run unbound where there is none).
	Arena numa.ArenaOptions
	// OnEvict receives every live item of an evicted segment (and an item
	// displaced by a hash collision). It runs under a shard lock: it MUST
	// NOT block and MUST NOT call the Cache; the slices are valid only
	// during the call. Nil drops evicted items (counted in Stats).
	OnEvict func(key, value []byte, m Meta)
	// Clock returns unix nanoseconds (test seam); default time.Now().UnixNano.
	Clock func() int64
	// PlacementSamples is how many pages New samples to verify placement;
	// default 1024, -1 skips the check.
	PlacementSamples int
	// Logger defaults to zap.NewNop().
	Logger *zap.Logger
}

// Defaults.
const (
	DefaultSegmentBytes     = 4 << 20
	DefaultPlacementSamples = 1024
	maxShards               = 64
	minShardSegments        = 2
	locOffsetBits           = 40 // offsets within a shard: 1 TiB
)

// EnsureDefaults fills zero fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.SegmentBytes == 0 {
		o.SegmentBytes = DefaultSegmentBytes
		if o.Bytes < 16*DefaultSegmentBytes {
			o.SegmentBytes = max(64<<10, int(o.Bytes/16)&^4095)
		}
	}
	if o.Shards == 0 && o.SegmentBytes > 0 {
		segs := o.Bytes / int64(o.SegmentBytes)
		o.Shards = 1
		for o.Shards < maxShards && segs/int64(o.Shards*2) >= 8 {
			o.Shards *= 2
		}
	}
	if o.Clock == nil {
		o.Clock = func() int64 { return time.Now().UnixNano() }
	}
	if o.PlacementSamples == 0 {
		o.PlacementSamples = DefaultPlacementSamples
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.Arena.Logger == nil {
		o.Arena.Logger = o.Logger
	}
}

// Validate reports every problem at once.
func (o *Options) Validate() error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidOptions}, a...)...))
	}
	if o.SegmentBytes <= 0 || o.SegmentBytes%4096 != 0 {
		bad("SegmentBytes %d must be a positive multiple of 4096", o.SegmentBytes)
	}
	if o.Shards <= 0 || bits.OnesCount(uint(o.Shards)) != 1 {
		bad("Shards %d must be a power of two", o.Shards)
	}
	if o.Bytes <= 0 {
		bad("Bytes %d must be positive", o.Bytes)
	} else if o.SegmentBytes > 0 && o.Shards > 0 {
		per := o.Bytes / int64(o.SegmentBytes) / int64(o.Shards)
		if per < minShardSegments {
			bad("Bytes %d gives %d segments of %d bytes per shard over %d shards; need at least %d",
				o.Bytes, per, o.SegmentBytes, o.Shards, minShardSegments)
		}
		if per*int64(o.SegmentBytes) >= 1<<locOffsetBits {
			bad("Bytes %d puts more than 1 TiB in one shard; use more Shards", o.Bytes)
		}
	}
	if o.PlacementSamples < -1 {
		bad("PlacementSamples %d must be >= -1", o.PlacementSamples)
	}
	return errors.Join(errs...)
}

package tier

import (
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/flusher"
	"github.com/tiercache/tiercache/policy"
)

// Durability says when a write reaches the cold tier.
type Durability string

// Durability modes.
const (
	// DurabilityCache (default) is write-back: values reach cold only when
	// warm evicts them; a crash loses what was only in DRAM or warm.
	DurabilityCache Durability = "cache"
	// DurabilityDrain is write-back plus: Close writes every hot and warm
	// value to cold, so the next Open on the same store is warm.
	DurabilityDrain Durability = "drain"
	// DurabilityWriteThrough acknowledges a Set only after its cold copy is
	// durable.
	DurabilityWriteThrough Durability = "writethrough"
)

// Options configure a Cache. Zero values take the defaults.
type Options struct {
	// HotBytes is the hot tier's arena: values off the Go heap, in
	// HotSegmentBytes segments (T19). Default 64 MiB.
	HotBytes int64
	// HotMaxValue: values larger than this many bytes skip hot and go to warm
	// (or cold if warm cannot take them). Default 1 MiB, or a quarter of
	// HotBytes if that is less.
	HotMaxValue int
	// HotNoHugePages leaves the hot arena on small pages; by default it
	// asks for transparent huge pages (MADV_HUGEPAGE): a big value written
	// into fresh pages takes a 512th of the page faults.
	HotNoHugePages bool
	// HotSegmentBytes is the hot log's segment, the largest value hot
	// takes (default: HotBytes/64 within [4 KiB, 4 MiB], at least
	// HotMaxValue, at most half of HotBytes).
	HotSegmentBytes int

	// Warm configures the warm tier (see warm_open.go); WarmBytes 0 disables it.
	WarmConfig
	// OpenCold opens the cold tier, a backend.Store below the DRAM tiers
	// (the sidecar's: coldstore.Open), with what the cache asks of it; nil:
	// no cold tier. Open calls it once, before the DRAM logs are made.
	OpenCold func(p backend.Params) (backend.Store, error)
	// OpenRemote opens the remote tier, a backend.Shared the sidecars of
	// many hosts share (the sidecar's: remote.Open); nil: none. Open calls
	// it once the local tiers are open.
	OpenRemote func(p backend.Params) (backend.Shared, error)
	// Remote tunes the remote tier.
	Remote RemoteOptions

	// MaxValue is the largest value Set accepts, in bytes (default 8 MiB).
	MaxValue int
	// Durability: cache (default), drain or writethrough.
	Durability Durability
	// Flusher tunes the warm → cold pipeline (Store and callbacks are set by
	// the cache).
	Flusher flusher.Options
	// Promotion tunes which warm and cold hits move up.
	Promotion policy.PromotionOptions
	// Flash is the cold admission budget (BytesPerSec 0 = unlimited).
	Flash policy.FlashOptions
	// MGetColdBatch is the most cold lookups one MGet sends in one device
	// submission (default 128); larger batches take several. The emulated
	// namespace is sized for it (2 × 8 KiB read slots per key,
	// coldstore's readSlots).
	MGetColdBatch int
	// MaxKeys bounds the directory, which keeps the keys it knows on the
	// Go heap (DirEntryBytes each, T19): above it, keys whose only copy is
	// in cold are forgotten until the directory is back at 90% of it, and
	// found again by their next read, a cold lookup (T15). 0 (the default)
	// with a cold store that counts and lists its user keys (the emulated
	// store, ColdKeyspace) bounds the directory to twice the keys DRAM
	// holds plus 4096, forgetting keys only cold holds beyond it (T37); 0
	// with any other cold store (a KV SSD) keeps every key. Needs a cold
	// tier.
	MaxKeys int64
	// Tenants are named namespaces sharing the cache, each the keys that
	// start with its prefix, with its own DRAM quota and counters (T35;
	// tenant.go). Keys no prefix matches are the default tenant's, which
	// has the DRAM the quotas leave. None (the default): every key is the
	// default tenant's, and it has all of DRAM.
	Tenants []Tenant
	// SweepInterval is how often expired keys are purged (default 1 s).
	SweepInterval time.Duration
	// Clock returns unix nanoseconds; it decides TTLs (test seam; default
	// the wall clock read through the monotonic one, synced every second:
	// wallClock).
	Clock  func() int64
	wall   *wallClock // the default Clock's own (Cache.NowOf), nil with another
	Logger *zap.Logger
}

// EnsureDefaults fills zero fields with their defaults.
// autoQueueBytes is the flusher queue's default bound for a DRAM budget:
// an eighth of it, within [8 MiB, 64 MiB], and at least four of the largest
// copies it takes (a hot value, or a warm segment's worth).
func autoQueueBytes(dram, largest int64) int64 {
	return max(min(max(dram/8, 8<<20), 64<<20), 4*largest)
}

func (o *Options) EnsureDefaults() {
	if o.HotBytes == 0 {
		o.HotBytes = 64 << 20
	}
	if o.HotMaxValue == 0 {
		// 1 MiB, but a hot log keeps at least four segments, each of at
		// least HotMaxValue bytes.
		o.HotMaxValue = int(max(min(1<<20, o.HotBytes/4), 1))
	}
	if o.MaxValue == 0 {
		o.MaxValue = 8 << 20
	}
	if o.Durability == "" {
		o.Durability = DurabilityCache
	}
	if o.MGetColdBatch == 0 {
		o.MGetColdBatch = 128
	}
	if o.SweepInterval == 0 {
		o.SweepInterval = time.Second
	}
	if o.Clock == nil {
		o.wall = newWallClock()
		o.Clock = o.wall.now
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	o.WarmConfig.ensureDefaults()
	o.Remote.ensureDefaults()
	// The flusher's queue and batches hold copies of values on the Go heap
	// beside the DRAM budget; Memory counts them in the heap budget
	// (docs/DESIGN.md, "Memory"). Unset, they follow the budget: writers
	// wait for the device once the flusher holds half its queue (T25), so
	// a queue of an eighth of the DRAM budget loses nothing in write
	// bursts.
	if o.Flusher.QueueBytes == 0 {
		o.Flusher.QueueBytes = autoQueueBytes(o.HotBytes+o.WarmBytes, int64(max(o.HotMaxValue, o.WarmSegmentBytes)))
	}
	if o.Flusher.BatchBytes == 0 {
		o.Flusher.BatchBytes = min(max(o.Flusher.QueueBytes/8, 512<<10), 4<<20)
	}
	if o.Promotion.Counters == 0 {
		// Keys worth tracking for promotion: what DRAM holds at 1 KiB a
		// key, within [4096, 1<<20] (2 bytes a counter and its doorkeeper).
		o.Promotion.Counters = int(min(max((o.HotBytes+o.WarmBytes)/1024, 4096), 1<<20))
	}
	o.Promotion.EnsureDefaults()
	if o.Promotion.MaxHotValue > o.HotMaxValue {
		o.Promotion.MaxHotValue = o.HotMaxValue
	}
	o.Flash.EnsureDefaults()
	if o.Flusher.Logger == nil {
		o.Flusher.Logger = o.Logger
	}
}

// Validate reports every invalid field at once.
func (o *Options) Validate() error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidOptions}, a...)...))
	}
	if o.HotBytes < 8192 {
		bad("HotBytes %d is below 8192 (two 4 KiB segments)", o.HotBytes)
	}
	if o.HotMaxValue < 1 || int64(o.HotMaxValue) > o.HotBytes {
		bad("HotMaxValue %d is outside [1, HotBytes]", o.HotMaxValue)
	}
	if o.HotBytes >= 8192 && int64(o.hotSegmentBytes())*2 > o.HotBytes {
		bad("HotBytes %d holds fewer than 2 segments of HotSegmentBytes %d", o.HotBytes, o.hotSegmentBytes())
	}
	if o.MaxValue < 1 || o.MaxValue > 1<<30 {
		bad("MaxValue %d is outside [1, 1 GiB]", o.MaxValue)
	}
	switch o.Durability {
	case DurabilityCache, DurabilityDrain, DurabilityWriteThrough:
	default:
		bad("Durability %q is not cache, drain or writethrough", o.Durability)
	}
	if o.MGetColdBatch < 1 || o.MGetColdBatch > 4096 {
		bad("MGetColdBatch %d is outside [1, 4096]", o.MGetColdBatch)
	}
	if o.MaxKeys < 0 {
		bad("MaxKeys %d must not be negative", o.MaxKeys)
	}
	if o.SweepInterval < 0 {
		bad("SweepInterval %v must not be negative", o.SweepInterval)
	}
	if q := o.Flusher.QueueBytes; q > 0 && (q < int64(o.HotMaxValue) || o.WarmBytes > 0 && q < int64(o.WarmSegmentBytes)) {
		bad("Flusher.QueueBytes %d is below the largest copy it must take (HotMaxValue %d, WarmSegmentBytes %d): such copies would be dropped",
			q, o.HotMaxValue, o.WarmSegmentBytes)
	}
	errs = append(errs, o.WarmConfig.validate()...)
	errs = append(errs, validateTenants(o.Tenants, o.HotBytes+o.WarmBytes)...)
	if o.OpenCold == nil && o.Durability != DurabilityCache {
		bad("Durability %q needs a cold tier", o.Durability)
	}
	if o.OpenCold == nil && o.MaxKeys > 0 {
		bad("MaxKeys %d needs a cold tier (only keys held in cold can be forgotten)", o.MaxKeys)
	}
	if err := o.Promotion.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := o.Flash.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// SetOptions are the SET modifiers.
type SetOptions struct {
	TTL      time.Duration // relative expiry; 0 = none
	ExpireAt time.Time     // absolute expiry; zero = none
	NX       bool          // store only if the key does not exist
	XX       bool          // store only if the key exists
	KeepTTL  bool          // keep the existing expiry
	Kind     Kind          // the value's kind (KindString unless the layer above encodes an aggregate)
	// Owned gives value to the cache: a big value on its way to cold
	// (writethrough, or one no DRAM log takes) is kept as it is instead
	// of copied, so a value of hundreds of MiB is on the Go heap once.
	// The caller must not change value once Set was called. KeepsOwned
	// tells whether the cache would keep a value of a size.
	Owned bool
	// Now is the write's time (unix nanoseconds, from NowOf: the server's
	// reading before the command), which saves a clock read; 0: the
	// cache reads its clock.
	Now int64
	// NoRemoteWait: with a write-through remote tier, Set returns without
	// waiting for the remote; the caller of a command of many keys waits
	// once for all of them (AwaitRemote), at most RemoteOptions.Wait.
	NoRemoteWait bool
}

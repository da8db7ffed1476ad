package tier

import (
	"fmt"

	"github.com/tiercache/tiercache/numa"
	"github.com/tiercache/tiercache/tier/warm"
)

// WarmConfig configures the built-in warm tier (tier/warm).
type WarmConfig struct {
	// WarmBytes is the warm arena size in bytes; 0 disables the warm tier.
	WarmBytes int64
	// WarmSegmentBytes is the warm segment size (default 4 MiB, a multiple of
	// 4096); it bounds the largest value warm takes (see warm.Options).
	WarmSegmentBytes int
	// WarmShards is warm's lock shard count (0 = warm's default).
	WarmShards int
	// WarmArena places the arena (node, policy, fallback, huge pages); its
	// Bytes is set from WarmBytes. The zero value binds to node 0, strict.
	WarmArena numa.ArenaOptions
}

func (w *WarmConfig) ensureDefaults() {
	if w.WarmSegmentBytes == 0 {
		w.WarmSegmentBytes = 4 << 20
	}
}

func (w *WarmConfig) validate() []error {
	var errs []error
	if w.WarmBytes < 0 {
		errs = append(errs, fmt.Errorf("%w: WarmBytes %d must not be negative", ErrInvalidOptions, w.WarmBytes))
	}
	if w.WarmBytes > 0 && int64(w.WarmSegmentBytes)*2 > w.WarmBytes {
		errs = append(errs, fmt.Errorf("%w: WarmBytes %d holds fewer than 2 segments of %d bytes", ErrInvalidOptions, w.WarmBytes, w.WarmSegmentBytes))
	}
	return errs
}

// warmTier adapts a *warm.Cache to Warm.
type warmTier struct{ c *warm.Cache }

// NewWarm wraps an open *warm.Cache as the cache's warm tier (for callers
// that build it themselves through Options.OpenWarm); its OnEvict must
// forward to the onEvict OpenWarm received, via WarmOnEvict.
func NewWarm(c *warm.Cache) Warm { return warmTier{c} }

// WarmOnEvict converts the callback OpenWarm receives to warm.Options.OnEvict.
func WarmOnEvict(onEvict func(key, value []byte, m Meta)) func(key, value []byte, m warm.Meta) {
	return func(key, value []byte, m warm.Meta) {
		onEvict(key, value, Meta{Expiry: m.Expiry, Version: m.Version})
	}
}

func (w warmTier) Get(dst, key []byte) ([]byte, Meta, bool) {
	v, m, ok := w.c.Get(dst, key)
	return v, Meta{Expiry: m.Expiry, Version: m.Version}, ok
}

func (w warmTier) Has(key []byte) (Meta, bool) {
	m, ok := w.c.Has(key)
	return Meta{Expiry: m.Expiry, Version: m.Version}, ok
}

func (w warmTier) Set(key, value []byte, m Meta) error {
	return w.c.Set(key, value, warm.Meta{Expiry: m.Expiry, Version: m.Version})
}

func (w warmTier) Delete(key []byte) bool { return w.c.Delete(key) }

func (w warmTier) Stats() WarmStats {
	s := w.c.Stats()
	return WarmStats{Items: s.Items, Bytes: s.Bytes, Evictions: s.Evictions, Node: s.Node, Placement: s.Placement,
		Capacity: s.ArenaBytes, Segments: int64(s.Segments), MaxValue: s.SegmentBytes, IndexBytes: s.IndexBytes}
}

func (w warmTier) Close() error { return w.c.Close() }

// openWarm opens the built-in warm tier.
func (o *Options) openWarm(onEvict func(key, value []byte, m Meta)) (Warm, error) {
	c, err := warm.New(warm.Options{Bytes: o.WarmBytes, SegmentBytes: o.WarmSegmentBytes, Shards: o.WarmShards,
		Arena: o.WarmArena, OnEvict: WarmOnEvict(onEvict), Clock: o.Clock, Logger: o.Logger})
	if err != nil {
		return nil, err
	}
	return warmTier{c}, nil
}

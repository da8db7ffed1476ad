package main

import (
	"time"

	"github.com/tiercache/tiercache/server"
	"github.com/tiercache/tiercache/tier"
)

// tierCache adapts a *tier.Cache to server.Cache.
type tierCache struct{ *tier.Cache }

var _ server.Cache = tierCache{}

func (t tierCache) Set(key, value []byte, o server.SetOptions) (bool, error) {
	return t.Cache.Set(key, value, tier.SetOptions(o))
}

func (t tierCache) SetGet(dst, key, value []byte, o server.SetOptions) ([]byte, bool, bool, error) {
	return t.Cache.SetGet(dst, key, value, tier.SetOptions(o))
}

func (t tierCache) ExpireIf(key []byte, ttl time.Duration, c server.ExpireCond) bool {
	var tc tier.ExpireCond
	for _, b := range [...]struct {
		s server.ExpireCond
		t tier.ExpireCond
	}{{server.ExpireNX, tier.ExpireNX}, {server.ExpireXX, tier.ExpireXX}, {server.ExpireGT, tier.ExpireGT}, {server.ExpireLT, tier.ExpireLT}} {
		if c&b.s != 0 {
			tc |= b.t
		}
	}
	return t.Cache.ExpireIf(key, ttl, tc)
}

func (t tierCache) GetEx(dst, key []byte, x server.Expiry) ([]byte, bool, error) {
	return t.Cache.GetEx(dst, key, tier.Expiry(x))
}

func (t tierCache) TierStats() server.TierStats {
	s := t.Cache.Stats()
	out := server.TierStats{Keys: s.Keys,
		FlusherQueue: s.Flusher.Queue, FlusherBytes: s.Flusher.Bytes, FlusherBatches: s.Flusher.Batches,
		FlusherDrops: s.Flusher.Drops, WarmNode: s.WarmNode, WarmPlacement: s.WarmPlacement,
		ColdBackend: s.ColdBackend, ColdFreeBytes: s.ColdFreeBytes,
		ColdBytesRead: s.ColdBytesRead, ColdBytesWritten: s.ColdBytesWritten,
		ColdStalledIO: s.ColdStalledIO, ColdOldestIO: s.ColdOldestIO,
		ColdErrors: s.ColdErrors, FlusherErrors: s.Flusher.Errors, Lost: s.Lost, Forgotten: s.Forgotten, ColdWritable: s.ColdWritable(),
	}
	if s.ColdWriteError != nil {
		out.ColdWriteError = s.ColdWriteError.Error()
	}
	for _, l := range s.Tiers {
		out.Tiers = append(out.Tiers, server.TierLevel{Name: l.Name, Items: l.Items, Bytes: l.Bytes,
			Hits: l.Hits, Misses: l.Misses, Evictions: l.Evictions})
	}
	return out
}

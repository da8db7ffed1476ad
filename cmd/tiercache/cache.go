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

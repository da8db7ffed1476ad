package coldstore

import (
	"context"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/nvmekv"
)

// The keyspace of the emulated namespace (backend.Keyspace, tier T37):
// KV.UserKeys and ScanUserKeys need a namespace that counts and walks its
// user keys (nvmekv K16, K17); a KV SSD cannot, and says so (not ok,
// errNoKeyspace).

func (c *Store) UserKeys() (int64, bool) {
	u, ok := any(c.kv).(interface{ UserKeys() (int64, bool) })
	if !ok {
		return 0, false
	}
	return u.UserKeys()
}

func (c *Store) MayHold(key []byte) bool { return c.kv.MayHold(key) }

func (c *Store) Clear(ctx context.Context) error {
	cl, ok := c.kv.Namespace().(interface{ Clear(context.Context) error })
	if !ok {
		return errNoKeyspace
	}
	return cl.Clear(ctx)
}

func (c *Store) ScanUserKeys(ctx context.Context, from uint64, n int, fn func(key []byte, m backend.Meta)) (uint64, error) {
	s, ok := any(c.kv).(interface {
		ScanUserKeys(ctx context.Context, from uint64, n int, fn func(key []byte, m nvmekv.Meta)) (uint64, error)
	})
	if !ok {
		return 0, errNoKeyspace
	}
	return s.ScanUserKeys(ctx, from, n, func(key []byte, m nvmekv.Meta) {
		fn(key, meta(m))
	})
}

package tier

import (
	"context"
	"errors"

	"github.com/tiercache/tiercache/nvmekv"
)

// ColdKeyspace is what a Cold may also do so that the directory need not
// remember the keys only cold holds (T37): count its user keys in O(1),
// walk them in the order of their tags, and say from memory that it does
// not hold a key. NewColdKV's cold tier does over the emulated namespace
// (ColdMode emulated or nvme); a KV SSD cannot list by tag.
type ColdKeyspace interface {
	// UserKeys is the number of user keys whose record header cold holds,
	// O(1); ok is false when the store cannot count them.
	UserKeys() (n int64, ok bool)
	// ScanUserKeys calls fn with the user key and Meta of every record
	// header whose device key's index tag t has from ≤ t < next, about n
	// of them, and returns next (1<<32 once the walk reached the end). The
	// tag of a user key is tagOfHash(hashKey(key)).
	ScanUserKeys(ctx context.Context, from uint64, n int, fn func(key []byte, m Meta)) (next uint64, err error)
	// MayHold reports false only if cold holds no record of key, known
	// from memory without device I/O.
	MayHold(key []byte) bool
	// Clear drops every record the store holds, durably, at a cost that
	// does not grow with the keys (Flush, T14): none of them counts, is
	// walked or read after it returns nil, in this run or the next.
	Clear(ctx context.Context) error
}

// errNoKeyspace: the store cannot count or walk its user keys.
var errNoKeyspace = errors.New("tier: the cold store cannot count or list its user keys")

// coldKeyspace returns cold's keyspace if it can count and walk its user
// keys, else nil.
func coldKeyspace(cold Cold) ColdKeyspace {
	ks, ok := cold.(ColdKeyspace)
	if !ok {
		return nil
	}
	if _, ok := ks.UserKeys(); !ok {
		return nil
	}
	return ks
}

func (c *coldKV) UserKeys() (int64, bool) {
	u, ok := any(c.kv).(interface{ UserKeys() (int64, bool) })
	if !ok {
		return 0, false
	}
	return u.UserKeys()
}

func (c *coldKV) MayHold(key []byte) bool { return c.kv.MayHold(key) }

func (c *coldKV) Clear(ctx context.Context) error {
	cl, ok := c.kv.Namespace().(interface{ Clear(context.Context) error })
	if !ok {
		return errNoKeyspace
	}
	return cl.Clear(ctx)
}

func (c *coldKV) ScanUserKeys(ctx context.Context, from uint64, n int, fn func(key []byte, m Meta)) (uint64, error) {
	s, ok := any(c.kv).(interface {
		ScanUserKeys(ctx context.Context, from uint64, n int, fn func(key []byte, m nvmekv.Meta)) (uint64, error)
	})
	if !ok {
		return 0, errNoKeyspace
	}
	return s.ScanUserKeys(ctx, from, n, func(key []byte, m nvmekv.Meta) {
		fn(key, Meta{Expiry: m.Expiry, Version: m.Version, Kind: kindOfFlags(m.Flags)})
	})
}

package server

import (
	"context"
	"time"

	"github.com/tiercache/tiercache/tier"
)

// Cache is what the server needs from the storage engine. Its method set
// mirrors tier.Cache; cmd/tiercache adapts a *tier.Cache to it, and the
// server knows nothing about the tiers behind it but their counters
// (tier.Stats, which the stats table reads).
//
// Every method is called concurrently from many connections. Slices passed
// in are only valid during the call; a returned value may alias dst.
type Cache interface {
	// Get appends the value of key to dst. ok is false on a miss.
	Get(dst, key []byte) (value []byte, ok bool, err error)
	// View is Get for a reader that only writes the value out: when into
	// (if not nil) gives a slice of the value's size, the value may be
	// copied straight there (filled is true; into may return nil to
	// decline, and must not block: the cache may call it holding a lock),
	// else it is appended to dst. cold reports that the answer took a read
	// of a slow device, so that reads lined up behind it are better sent
	// together (MGetPrefixAnyIn).
	View(dst, key []byte, into func(n int) []byte) (value []byte, filled, ok, cold bool, err error)
	// GetDel is Get that also deletes the key, in one step: the value
	// returned is the one deleted.
	GetDel(dst, key []byte) (value []byte, ok bool, err error)
	// GetEx is Get that also changes the key's expiry, in one step; an
	// absolute expiry in the past deletes the key (its value is returned).
	GetEx(dst, key []byte, x Expiry) (value []byte, ok bool, err error)
	// ViewAny is View for a value of any kind, which it returns beside it;
	// View, Get, GetDel, GetEx and SetGet answer tier.ErrWrongKind for a key
	// that is not a string, and MGet a nil.
	ViewAny(dst, key []byte) (value []byte, kind tier.Kind, shared, ok, cold bool, err error)
	// KindOf is the kind of key's value; ok is false if the key is absent.
	KindOf(key []byte) (kind tier.Kind, ok bool)
	// Update is a read-modify-write of key in one step (tier.Cache.Update).
	Update(key []byte, f func(cur tier.Current) (tier.Change, error)) error
	// MGetIn returns one value per key, nil for a miss. Values may be the
	// cache's own immutable copies: they must not be modified. Those it
	// copied into ch's chunks are valid until ch.Release, the slice of
	// them until the next call with ch.
	MGetIn(ch *tier.Chunks, keys [][]byte) ([][]byte, error)
	// MGetPrefixAnyIn is MGetIn, of values of any kind, of the longest prefix
	// keys[:n] whose values fit in maxBytes (at least one key; all when
	// maxBytes < 0); it returns n
	// values, and each one's kind (GET answers WRONGTYPE for another kind).
	// Values it copied into ch's chunks are valid until ch.Release, the
	// slices until the next call with ch.
	MGetPrefixAnyIn(ch *tier.Chunks, keys [][]byte, maxBytes int64) ([][]byte, []tier.Kind, int, error)
	// Set stores key=value; stored is false when NX/XX prevented it. An
	// expiry at or before now deletes the key instead, in the same step.
	Set(key, value []byte, o SetOptions) (stored bool, err error)
	// SetGet is Set that also returns the value it replaced, in one step
	// (SET ... GET): had is false if the key was absent.
	SetGet(dst, key, value []byte, o SetOptions) (old []byte, had, stored bool, err error)
	// MSet stores every pair.
	MSet(kvs [][2][]byte) error
	// Delete removes keys and returns how many existed. An error means a
	// delete could not be made durable (writethrough) and that key is
	// unchanged.
	Delete(keys ...[]byte) (int, error)
	// Exists counts the keys that exist (a key named twice counts twice).
	Exists(keys ...[]byte) int
	// Expire sets a positive ttl on an existing key; false if the key is absent.
	Expire(key []byte, ttl time.Duration) bool
	// ExpireIf is Expire (a ttl ≤ 0 deletes the key) that applies only when
	// cond holds for the key's current expiry, checked and applied in one
	// step; false if the key is absent or cond does not hold. An error is
	// a delete that could not be made durable: the key is unchanged.
	ExpireIf(key []byte, ttl time.Duration, cond ExpireCond) (bool, error)
	// ExpireAtIf is ExpireIf with an absolute expiry; one at or before
	// now deletes the key (when cond holds).
	ExpireAtIf(key []byte, at time.Time, cond ExpireCond) (bool, error)
	// ExpireTime returns the key's expiry, the zero Time for none; exists
	// is false when the key is absent.
	ExpireTime(key []byte) (at time.Time, exists bool)
	// Rename gives src's value and expiry to dst and deletes src, in one
	// step; with nx only if dst is absent (renamed false otherwise).
	// tier.ErrNoSuchKey when src is absent; a key renamed to itself
	// changes nothing.
	Rename(src, dst []byte, nx bool) (renamed bool, err error)
	// Copy gives dst a copy of src's value and expiry, in one step; dst is
	// overwritten only with replace. copied is false when src is absent or
	// dst exists. src and dst differ.
	Copy(src, dst []byte, replace bool) (copied bool, err error)
	// TTL returns the remaining time to live; ttl < 0 means no expiry.
	// exists is false when the key is absent.
	TTL(key []byte) (ttl time.Duration, exists bool)
	// Persist removes the expiry; false if the key is absent or had none.
	Persist(key []byte) (bool, error)
	// Keys is the number of keys, read from counters in O(1) of the
	// keyspace (tier.Cache.Keys): a key whose expiry passed counts until
	// the cache's sweep removes it, as Redis's DBSIZE counts it until its
	// expiry cycle does.
	Keys() int
	// Scan returns keys from cursor on (count is a hint) that match
	// accepts, given each key's kind (all when match is nil), and the cursor to continue from, 0
	// when the scan is complete; a key present for a whole scan is returned
	// exactly once (Redis's SCAN contract). match must not call the cache.
	Scan(cursor uint64, count int, match func(key string, kind tier.Kind) bool) (next uint64, keys [][]byte)
	// Frequency is the cache policy's estimate of how often key was read
	// lately (tier.Cache.Frequency), and whether it exists.
	Frequency(key []byte) (freq int, ok bool)
	// Flush removes every key from every tier: calls after it see none.
	// Freeing what they held may go on in the background (FLUSHALL ASYNC);
	// WaitPurge waits until it is done (FLUSHALL SYNC).
	Flush() error
	WaitPurge(ctx context.Context) error
	// Where names the tier holding key: "hot", "warm", "cold", or "" if absent.
	Where(key []byte) string
	// Stats is the cache's counters, which the stats table reads for INFO
	// and /metrics (Server.Snapshot).
	Stats() tier.Stats
	// Memory is the cache's account of its memory (INFO memory).
	Memory() tier.Memory
}

// SetOptions, ExpireCond and Expiry are tier's: *tier.Cache is a Cache.
type (
	SetOptions = tier.SetOptions
	ExpireCond = tier.ExpireCond
	Expiry     = tier.Expiry
)

// The EXPIRE options.
const (
	ExpireNX = tier.ExpireNX // only if the key has no expiry
	ExpireXX = tier.ExpireXX // only if the key has an expiry
	ExpireGT = tier.ExpireGT // only if the new expiry is later
	ExpireLT = tier.ExpireLT // only if the new expiry is earlier
)

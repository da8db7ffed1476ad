package nvmekv

import (
	"context"
	"errors"
	"fmt"
	"reflect"
)

// Counting and listing the user keys a KV holds, for a namespace that can
// tell record headers from chunks: a header's device key is 16 bytes and
// a chunk's 15 (K16), so a namespace that counts its 16-byte device keys
// counts user keys.

// KeyCounter is a namespace that counts its live 16-byte device keys in
// O(1): the emulated namespace (nvmekv/emu, logstore E31). A KV SSD is
// not one.
type KeyCounter interface {
	FullKeyItems() int64
}

// defaultHashed reports whether h is DefaultHasher: only then is a
// namespace's device key of a user key the one the tier (and UserKeys,
// ScanUserKeys) compute.
func defaultHashed(h Hasher) bool {
	return h != nil && reflect.ValueOf(h).Pointer() == reflect.ValueOf(DefaultHasher).Pointer()
}

// UserKeys is the number of user keys kv's namespace holds, in O(1): its
// live 16-byte device keys (K16), when the namespace counts them
// (KeyCounter) and kv's Hasher is DefaultHasher; ok is false otherwise
// (a KV SSD, a test hasher). Expired records count until they are
// deleted or reclaimed; a chunked record written before K16 counts as
// one key for its header and one for each of its chunks, whose device
// keys are 16 bytes too, until a Put or Delete of its key replaces it.
func (kv *KV) UserKeys() (n int64, ok bool) {
	c, isCounter := kv.ns.(KeyCounter)
	if !isCounter || !kv.defHash {
		return 0, false
	}
	return c.FullKeyItems(), true
}

// TagScanner is a namespace that walks its live records in the order of
// their device keys' tags (the emulated namespace: logstore.TagOf, E32,
// E33): for every record with a klen-byte device key whose tag is in
// [from, next), fn gets the key and at least the first prefix bytes of
// its value (valid during the call only); next is about n records'
// worth of tags further, 1<<32 at the end.
type TagScanner interface {
	ScanTags(ctx context.Context, from uint64, n int, klen int, prefix int, fn func(key [16]byte, value []byte)) (next uint64, err error)
}

// ScanUserKeys calls fn with the user key and Meta of every record
// header whose device key's tag (logstore.TagOf(DefaultHasher(key)),
// computed by the namespace) is in [from, next), each key once per
// call, and returns next: about n keys' worth of tags further, 1<<32
// when the walk reached the end. A walk from 0 that resumes at each next
// returns every key live throughout it exactly once (a key's tag never
// changes), in a stable order. A record that is not a header (a chunk of
// a record written before K16, a bad magic) or whose key does not hash
// to the device key it is stored under is skipped; an expired record is
// returned with its Expiry (the caller decides). Only the header is read,
// so the value's CRC is not checked. key is valid during the call only.
// It fails with errors.ErrUnsupported (wrapped) when the namespace
// cannot scan tags (TagScanner) or the hasher is not DefaultHasher.
func (kv *KV) ScanUserKeys(ctx context.Context, from uint64, n int, fn func(key []byte, m Meta)) (next uint64, err error) {
	if kv.closed.Load() {
		return from, ErrClosed
	}
	s, ok := kv.ns.(TagScanner)
	if !ok || !kv.defHash {
		return from, fmt.Errorf("nvmekv: scan user keys: %w: the namespace cannot walk its keys by tag, or the KV's hasher is not DefaultHasher", errors.ErrUnsupported)
	}
	next, err = s.ScanTags(ctx, from, n, MaxKeyLen, HeaderBytes+kv.opts.MaxKeyBytes, func(dk [16]byte, v []byte) {
		hd, err := parseHeader(v)
		if err != nil || hd.keyLen == 0 || len(v) < HeaderBytes+hd.keyLen {
			return
		}
		key := v[HeaderBytes : HeaderBytes+hd.keyLen]
		if DefaultHasher(key) != dk {
			return
		}
		fn(key, Meta{Expiry: hd.expiry, Version: hd.version, Flags: hd.flags})
	})
	if err != nil {
		return next, fmt.Errorf("nvmekv: scan user keys from tag %#x: %w", from, err)
	}
	return next, nil
}

package nvmekv

import (
	"context"
	"fmt"
)

// ListUserKeys walks the user keys of any namespace with the KV List
// command, for a namespace that cannot walk tags (a KV SSD): the device
// keys from start (inclusive; nil: the first) in the namespace's List
// order, a page of about n, and for each 16-byte one its header's first
// HeaderBytes+MaxKeyBytes bytes, giving fn each user key whose device
// key it hashes to (K20). next is where the following page starts (just
// above the last device key listed), nil once the walk reached the end.
// It costs a List and a Retrieve per key; deleting keys already given
// does not disturb a walk.
func (kv *KV) ListUserKeys(ctx context.Context, start []byte, n int, fn func(key []byte, m Meta)) (next []byte, err error) {
	if kv.closed.Load() {
		return start, ErrClosed
	}
	if !kv.defHash {
		return start, fmt.Errorf("nvmekv: list user keys: the KV's hasher is not DefaultHasher")
	}
	keys, _, err := kv.ns.List(ctx, start, max(ListEntryBytes(MaxKeyLen)*n+4, 4096))
	if err != nil {
		return start, fmt.Errorf("nvmekv: list user keys from %x: %w", start, err)
	}
	if len(keys) == 0 {
		return nil, nil
	}
	var ops []*Op
	for _, k := range keys {
		if len(k) == MaxKeyLen {
			ops = append(ops, &Op{Code: OpRetrieve, Key: append([]byte(nil), k...), Buf: make([]byte, HeaderBytes+kv.opts.MaxKeyBytes)})
		}
	}
	if err := kv.doBatched(ctx, ops); err != nil {
		return start, fmt.Errorf("nvmekv: list user keys: read headers: %w", err)
	}
	for _, op := range ops {
		if op.Err != nil { // gone meanwhile, or not readable as a record: not a user key
			continue
		}
		v := op.Buf[:min(int(op.DW0), len(op.Buf))]
		hd, err := parseHeader(v)
		if err != nil || hd.keyLen == 0 || len(v) < HeaderBytes+hd.keyLen {
			continue
		}
		key := v[HeaderBytes : HeaderBytes+hd.keyLen]
		if h := DefaultHasher(key); string(h[:]) != string(op.Key) {
			continue
		}
		fn(key, Meta{Expiry: hd.expiry, Version: hd.version, Flags: hd.flags})
	}
	// The least key above the last one listed: it with a zero byte after
	// it, or, at the longest key length, its increment.
	last := keys[len(keys)-1]
	next = append([]byte(nil), last...)
	if len(next) < MaxKeyLen {
		return append(next, 0), nil
	}
	for i := len(next) - 1; i >= 0; i-- {
		if next[i]++; next[i] != 0 {
			return next, nil
		}
		next = next[:i]
	}
	return nil, nil // the last key was all 0xff: nothing is above it
}

package coldstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/flusher"
	"github.com/tiercache/tiercache/nvmekv"
)

// moveBatch is how many keys moveKeys moves at a time.
const moveBatch = 256

// moveKeys moves the keys of prefix from one store into another (CS7):
// each batch is read, written and synced there, then deleted here, so a
// key is in at least one of them at every moment, and a move cut short is
// done again from the start (a key moved twice is written twice, at its
// version). It walks the store's keys by tag (the emulated namespace) or
// by List (a KV SSD), and returns how many keys it moved.
func moveKeys(ctx context.Context, from, to *Store, prefix string) (int, error) {
	if n, ok := from.UserKeys(); ok && n == 0 {
		return 0, nil
	}
	moved := 0
	var batch [][]byte
	flush := func() error {
		n, err := moveSome(ctx, from, to, batch)
		moved += n
		batch = batch[:0]
		return err
	}
	pick := func(key []byte) {
		if len(key) >= len(prefix) && string(key[:len(prefix)]) == prefix {
			batch = append(batch, append([]byte(nil), key...))
		}
	}
	if _, ok := from.UserKeys(); ok {
		for next := uint64(0); next < 1<<32; {
			var err error
			if next, err = from.ScanUserKeys(ctx, next, moveBatch, func(key []byte, _ backend.Meta) { pick(key) }); err != nil {
				return moved, err
			}
			if err := flush(); err != nil {
				return moved, err
			}
		}
		return moved, nil
	}
	var start []byte
	for first := true; first || start != nil; first = false {
		var err error
		if start, err = from.kv.ListUserKeys(ctx, start, moveBatch, func(key []byte, _ nvmekv.Meta) { pick(key) }); err != nil {
			return moved, err
		}
		if err := flush(); err != nil {
			return moved, err
		}
	}
	return moved, nil
}

// moveSome moves keys: read, written and synced in to, deleted in from.
func moveSome(ctx context.Context, from, to *Store, keys [][]byte) (int, error) {
	if len(keys) == 0 {
		return 0, nil
	}
	var items []*flusher.Item
	var found [][]byte
	for i, r := range from.GetMany(ctx, keys, nil, nil) {
		switch {
		case r.Err != nil:
			return 0, fmt.Errorf("read %q: %w", keys[i], r.Err)
		case r.Found:
			items = append(items, &flusher.Item{Key: keys[i], Value: r.Value, Version: r.Meta.Version, Expiry: r.Meta.Expiry, Flags: r.Meta.Flags})
			found = append(found, keys[i])
		}
	}
	if len(items) == 0 {
		return 0, nil
	}
	err := to.PutMany(ctx, items)
	for _, it := range items {
		err = errors.Join(err, it.Err)
	}
	if err == nil {
		err = to.Sync(ctx)
	}
	if err != nil {
		return 0, fmt.Errorf("write: %w", err)
	}
	if err := errors.Join(from.DeleteMany(ctx, found)...); err != nil {
		return len(found), fmt.Errorf("delete from the default namespace: %w", err)
	}
	return len(found), from.Sync(ctx)
}

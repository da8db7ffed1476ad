package coldstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/nvmekv"
)

// The keyspace of a Multi (backend.Keyspace, tier T37) is its spaces'
// together, when every space has one (emulated namespaces); a space of a
// KV SSD has none, and UserKeys then says so.

func (m *Multi) UserKeys() (int64, bool) {
	if !m.keyspace {
		return 0, false
	}
	var n int64
	for _, s := range m.spaces {
		k, ok := s.st.UserKeys()
		if !ok {
			return 0, false
		}
		n += k
	}
	return n, true
}

func (m *Multi) MayHold(key []byte) bool { return m.spaces[m.route(key)].st.MayHold(key) }

// Clear clears every space, then writes each tenant namespace's record
// again: the namespace stays its tenant's (CS7).
func (m *Multi) Clear(ctx context.Context) error {
	if !m.keyspace {
		return errNoKeyspace
	}
	var errs []error
	for _, s := range m.spaces {
		if err := s.st.Clear(ctx); err != nil {
			errs = append(errs, fmt.Errorf("clear namespace %s: %w", s.name, err))
			continue
		}
		if s.rec.Name != "" {
			if err := storeTenantRec(ctx, s.st.kv.Namespace(), s.rec); err != nil {
				errs = append(errs, fmt.Errorf("namespace %s: %w", s.name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// ScanUserKeys walks every space's keys of tags [from, next) together:
// each space is asked from from, next is the least of their nexts, and
// the keys a space gave past it wait for the call that starts there, so
// every key is given once in a walk from 0 (as one space's walk).
func (m *Multi) ScanUserKeys(ctx context.Context, from uint64, n int, fn func(key []byte, mt backend.Meta)) (uint64, error) {
	if !m.keyspace {
		return from, errNoKeyspace
	}
	if len(m.spaces) == 1 {
		return m.spaces[0].st.ScanUserKeys(ctx, from, n, fn)
	}
	type found struct {
		key []byte
		m   backend.Meta
		tag uint64
	}
	var got []found
	next := uint64(1) << 32
	for _, s := range m.spaces {
		nx, err := s.st.ScanUserKeys(ctx, from, n, func(key []byte, mt backend.Meta) {
			h := nvmekv.DefaultHasher(key)
			got = append(got, found{append([]byte(nil), key...), mt, uint64(nvmekv.TagOf(&h))})
		})
		if err != nil {
			return from, err
		}
		next = min(next, nx)
	}
	for _, f := range got {
		if f.tag < next {
			fn(f.key, f.m)
		}
	}
	return next, nil
}

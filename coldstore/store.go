package coldstore

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/flusher"
	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu"
	"github.com/tiercache/tiercache/uring"
)

// Store is the cold store: an *nvmekv.KV as a backend.Store (and so a
// flusher.Store), with the flush floor (backend.Floors) and, over the
// emulated namespace, its keyspace (backend.Keyspace).
type Store struct {
	kv          *nvmekv.KV
	name        string
	preExisting bool
	strict      bool
	maxValue    int
	index       *indexPlace // where an emulated store's index is; nil for a KV SSD or New
	// cut lays out a large aggregate for pieces (Config.Cut); nil: every
	// value whole.
	cut backend.CutFunc
}

// New wraps kv as a cold store (a test seam: Open builds one). kv must keep
// expired records (KVOptions.KeepExpired: the tier's directory decides
// expiry, tier T17); New refuses one that does not (CS1). name names it in
// Stats; preExisting says the store may hold keys from an earlier run,
// which makes the tier consult it for keys it does not know; strict says
// it never drops a live record to make room.
func New(kv *nvmekv.KV, name string, preExisting, strict bool, maxValue int) (*Store, error) {
	if !kv.KeepsExpired() {
		return nil, ErrHidesExpired
	}
	return &Store{kv: kv, name: name, preExisting: preExisting, strict: strict, maxValue: maxValue}, nil
}

// KV is the store's nvmekv.KV.
func (c *Store) KV() *nvmekv.KV { return c.kv }

// meta is the backend.Meta of an nvmekv.Meta.
func meta(m nvmekv.Meta) backend.Meta {
	return backend.Meta{Expiry: m.Expiry, Version: m.Version, Flags: m.Flags}
}

func (c *Store) Get(ctx context.Context, dst, key []byte, size int) ([]byte, backend.Meta, bool, error) {
	size, found := c.sizeOf(key, size)
	if !found {
		return dst, backend.Meta{}, false, nil // the index has no entry of it: no command (T37)
	}
	v, m, err := c.kv.GetSized(ctx, dst, key, size)
	if errors.Is(err, nvmekv.ErrKeyNotFound) {
		return dst, backend.Meta{}, false, nil
	}
	if err != nil {
		return dst, backend.Meta{}, false, err
	}
	return v, meta(m), true, nil
}

// sizeOf is the value size to read key with: size when the caller knows
// it, else what the store's index says (nvmekv ValueLenHint), so that a
// key the directory does not know (T37) is read in one round trip of its
// record's size; found is false when the index has no entry of the key,
// which a Get then skips (T37).
func (c *Store) sizeOf(key []byte, size int) (n int, found bool) {
	if size >= 0 {
		return size, c.kv.MayHold(key)
	}
	n, ok, found := c.kv.ValueLenHint(key)
	if !ok {
		n = size
	}
	return n, found
}

func (c *Store) GetMany(ctx context.Context, keys [][]byte, sizes []int, dsts [][]byte) []backend.Result {
	out := make([]backend.Result, len(keys))
	var idx []int
	var ks [][]byte
	var ds [][]byte
	ss := make([]int, 0, len(keys))
	for i, k := range keys {
		size := -1
		if sizes != nil {
			size = sizes[i]
		}
		n, found := c.sizeOf(k, size)
		if !found {
			continue // not found, as GetMany answers a miss, and no command (T37)
		}
		idx, ks, ss = append(idx, i), append(ks, k), append(ss, n)
		if dsts != nil {
			ds = append(ds, dsts[i])
		}
	}
	if len(ks) == 0 {
		return out
	}
	for j, it := range c.kv.GetManyInto(ctx, ks, ss, ds) {
		i := idx[j]
		switch {
		case errors.Is(it.Err, nvmekv.ErrKeyNotFound):
		case it.Err != nil:
			out[i].Err = it.Err
		default:
			out[i] = backend.Result{Value: it.Value, Meta: meta(it.Meta), Found: true}
		}
	}
	return out
}

// PutMany is flusher.Store's: the batch goes to the KV as one PutMany,
// through a slice of KV items reused from batch to batch.
func (c *Store) PutMany(ctx context.Context, items []*flusher.Item) error {
	bp := kvItems.Get().(*[]nvmekv.Item)
	kvs := slices.Grow((*bp)[:0], len(items))[:len(items)]
	for i, it := range items {
		// A strict store (writethrough) reads the record each put
		// replaces, so that an inline value put over a chunked one (an
		// aggregate or a string that shrank) deletes its chunks: nothing
		// else would (nvmekv K22).
		kvs[i] = nvmekv.Item{Key: it.Key, Value: it.Value, Meta: nvmekv.Meta{Expiry: it.Expiry, Version: it.Version, Flags: it.Flags}, Replaces: c.strict}
		if c.cut == nil || it.Flags == 0 {
			continue
		}
		if out, ends, metas := c.cut(it.Flags, it.Value); out != nil && len(ends) > 1 {
			kvs[i].Value = out
			kvs[i].Pieces = make([]nvmekv.Piece, len(ends))
			for j := range ends {
				kvs[i].Pieces[j] = nvmekv.Piece{End: ends[j], Meta: metas[j]}
			}
		}
	}
	err := c.kv.PutMany(ctx, kvs)
	for i := range items {
		items[i].Err = kvs[i].Err
	}
	clear(kvs) // no key or value kept alive
	*bp = kvs[:0]
	kvItems.Put(bp)
	return err
}

// kvItems lends PutMany its slices of KV items.
var kvItems = sync.Pool{New: func() any { return new([]nvmekv.Item) }}

// GetPieces reads pieces of key's value (backend.Pieces, nvmekv K20).
func (c *Store) GetPieces(ctx context.Context, key []byte, choose func(t []backend.PieceInfo) []int) ([][]byte, []backend.PieceInfo, backend.Meta, bool, error) {
	if !c.kv.MayHold(key) {
		return nil, nil, backend.Meta{}, false, nil // the index has no entry of it: no command (T37)
	}
	var t []backend.PieceInfo
	ps, nt, m, pieced, err := c.kv.GetPieces(ctx, key, -1, func(nt []nvmekv.PieceInfo) []int {
		t = make([]backend.PieceInfo, len(nt))
		for i, p := range nt {
			t[i] = backend.PieceInfo{Off: p.Off, Len: p.Len, Meta: p.Meta}
		}
		return choose(t)
	})
	switch {
	case errors.Is(err, nvmekv.ErrKeyNotFound):
		return nil, nil, backend.Meta{}, false, nil
	case err != nil:
		return nil, nil, backend.Meta{}, false, err
	case !pieced || nt == nil:
		t = nil
	}
	return ps, t, meta(m), true, nil
}

func (c *Store) Delete(ctx context.Context, key []byte) error {
	if err := c.kv.Delete(ctx, key); err != nil && !errors.Is(err, nvmekv.ErrKeyNotFound) {
		return err
	}
	return nil
}

// DeleteMany makes the flusher send a batch's deletes as one batch of
// header reads and one of delete chains (flusher.ManyDeleter).
func (c *Store) DeleteMany(ctx context.Context, keys [][]byte) []error {
	errs := c.kv.DeleteMany(ctx, keys)
	for i, err := range errs {
		if errors.Is(err, nvmekv.ErrKeyNotFound) {
			errs[i] = nil
		}
	}
	return errs
}

func (c *Store) Sync(ctx context.Context) error { return c.kv.Sync(ctx) }

func (c *Store) Stats() backend.Stats {
	s := c.kv.Stats()
	lim := c.kv.Namespace().Limits()
	free := uint64(0)
	if lim.Capacity > lim.Utilization {
		free = lim.Capacity - lim.Utilization
	}
	items := int64(-1)
	var werr error
	var evicted uint64
	cs := backend.Stats{Backend: c.name, Strict: c.strict, FreeBytes: free, BytesRead: s.BytesRead, BytesWritten: s.BytesWritten,
		MaxValue: c.maxValue, PreExisting: c.preExisting, IndexNode: c.index.node(), IndexPlacement: -1}
	if es, ok := c.kv.Namespace().(interface{ Stats() emu.Stats }); ok {
		st := es.Stats()
		items = int64(st.Items) // device records: a chunked value counts once per chunk
		werr, evicted = st.Failed, st.ReclaimedKeys
		cs.IndexBytes, cs.IndexBoundBytes, cs.IndexBindErrors = int64(st.IndexBytes), int64(st.IndexBoundBytes), st.IndexBindErrors
	}
	if m, ok := c.kv.Namespace().(interface {
		EachIndexMapping(func(mem []byte, bound bool))
	}); ok {
		cs.IndexPlacement = c.index.placement(m.EachIndexMapping)
	}
	cs.Items, cs.WriteError, cs.Evictions = items, werr, evicted
	if r, ok := c.kv.Namespace().(interface{ FrontStats() uring.FrontStats }); ok {
		fs := r.FrontStats()
		cs.StalledIO, cs.OldestIO = fs.Stalled, fs.OldestInFlight
	}
	return cs
}

func (c *Store) PreExisting() bool { return c.preExisting }

func (c *Store) Close() error { return c.kv.Close() }

package tier

import (
	"context"
	"errors"

	"github.com/tiercache/tiercache/flusher"
	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu"
	"github.com/tiercache/tiercache/uring"
)

// coldKV adapts an *nvmekv.KV to Cold (and so to flusher.Store).
type coldKV struct {
	kv          *nvmekv.KV
	backend     string
	preExisting bool
	maxValue    int
	index       *coldIndex // where an emulated store's index is; nil for a KV SSD or NewColdKV
}

// NewColdKV wraps kv as the cache's cold tier. kv must keep expired
// records (KVOptions.KeepExpired: the directory decides expiry, T17); Open
// refuses one that does not. backend names it in Stats;
// preExisting says the store may hold keys from an earlier run, which makes
// the cache consult it for keys it does not know.
func NewColdKV(kv *nvmekv.KV, backend string, preExisting bool, maxValue int) Cold {
	return &coldKV{kv: kv, backend: backend, preExisting: preExisting, maxValue: maxValue}
}

func (c *coldKV) Get(ctx context.Context, dst, key []byte, size int) ([]byte, Meta, bool, error) {
	size, found := c.sizeOf(key, size)
	if !found {
		return dst, Meta{}, false, nil // the index has no entry of it: no command (T37)
	}
	v, m, err := c.kv.GetSized(ctx, dst, key, size)
	if errors.Is(err, nvmekv.ErrKeyNotFound) {
		return dst, Meta{}, false, nil
	}
	if err != nil {
		return dst, Meta{}, false, err
	}
	return v, Meta{Expiry: m.Expiry, Version: m.Version, Kind: kindOfFlags(m.Flags)}, true, nil
}

// sizeOf is the value size to read key with: size when the caller knows
// it, else what the store's index says (nvmekv ValueLenHint), so that a
// key the directory does not know (T37) is read in one round trip of its
// record's size; found is false when the index has no entry of the key,
// which a Get then skips (T37).
func (c *coldKV) sizeOf(key []byte, size int) (n int, found bool) {
	if size >= 0 {
		return size, c.kv.MayHold(key)
	}
	n, ok, found := c.kv.ValueLenHint(key)
	if !ok {
		n = size
	}
	return n, found
}

func (c *coldKV) GetMany(ctx context.Context, keys [][]byte, sizes []int, dsts [][]byte) []ColdItem {
	out := make([]ColdItem, len(keys))
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
			out[i] = ColdItem{Value: it.Value, Meta: Meta{Expiry: it.Meta.Expiry, Version: it.Meta.Version, Kind: kindOfFlags(it.Meta.Flags)}, Found: true}
		}
	}
	return out
}

func (c *coldKV) PutMany(ctx context.Context, items []*flusher.Item) error {
	kvs := make([]nvmekv.Item, len(items))
	for i, it := range items {
		kvs[i] = nvmekv.Item{Key: it.Key, Value: it.Value, Meta: nvmekv.Meta{Expiry: it.Expiry, Version: it.Version, Flags: it.Flags}}
	}
	err := c.kv.PutMany(ctx, kvs)
	for i := range items {
		items[i].Err = kvs[i].Err
	}
	return err
}

func (c *coldKV) Delete(ctx context.Context, key []byte) error {
	if err := c.kv.Delete(ctx, key); err != nil && !errors.Is(err, nvmekv.ErrKeyNotFound) {
		return err
	}
	return nil
}

// DeleteMany makes the flusher send a batch's deletes as one batch of
// header reads and one of delete chains (flusher.ManyDeleter).
func (c *coldKV) DeleteMany(ctx context.Context, keys [][]byte) []error {
	errs := c.kv.DeleteMany(ctx, keys)
	for i, err := range errs {
		if errors.Is(err, nvmekv.ErrKeyNotFound) {
			errs[i] = nil
		}
	}
	return errs
}

func (c *coldKV) Sync(ctx context.Context) error { return c.kv.Sync(ctx) }

func (c *coldKV) Stats() ColdStats {
	s := c.kv.Stats()
	lim := c.kv.Namespace().Limits()
	free := uint64(0)
	if lim.Capacity > lim.Utilization {
		free = lim.Capacity - lim.Utilization
	}
	items := int64(-1)
	var werr error
	var evicted uint64
	cs := ColdStats{Backend: c.backend, FreeBytes: free, BytesRead: s.BytesRead, BytesWritten: s.BytesWritten,
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

func (c *coldKV) PreExisting() bool { return c.preExisting }

func (c *coldKV) Close() error { return c.kv.Close() }

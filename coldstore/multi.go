package coldstore

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/flusher"
	"github.com/tiercache/tiercache/nvmekv/emu/volume"
	"github.com/tiercache/tiercache/nvmekv/nsadmin"
)

// Multi is a cold store of several namespaces: the default one, and one
// of its own for each tenant given cold capacity (Config.Tenants) or kept
// from a tenant no longer configured (CS8). Each key goes to the
// namespace its prefix selects, else to the default one (CS5): a
// tenant's writes fill, and its reclaim drops, its own namespace only.
// It is a backend.Store with the flush floor (in the default namespace)
// and, when every namespace is emulated, the keyspace of them all.
type Multi struct {
	spaces []*space // spaces[0] is the default namespace
	rows   []*row   // rows[0] is the default tenant, then Params.Tenants, then kept namespaces
	// prefixes are the rows' prefixes, sorted; ids[i] is the row of
	// prefixes[i].
	prefixes []string
	ids      []int
	vol      *volume.Volume   // the emulated namespaces' volume, nil for a KV SSD
	mgr      *nsadmin.Manager // a KV SSD's namespaces, nil for a volume
	where    string           // names the store in Stats
	closers  []func() error   // run by Close after the spaces, in order
	keyspace bool             // every space counts and walks its keys
	dirty    []atomic.Bool    // by space: written since its last Sync
	closeMu  sync.Once
	closeErr error
}

// space is one namespace of a Multi.
type space struct {
	st    *Store
	name  string // the volume's or registry's name; "default" for spaces[0]
	where string // e.g. "emulated:cold.kv#a", "passthrough:/dev/ng1n2"
	rec   tenantRec
	row   int // the row whose keys it holds (0 for the default namespace)
}

// row is a tenant's figures and where its keys go.
type row struct {
	name   string
	prefix string
	sp     int    // its keys' space
	kind   string // "own", "shared", "kept"
	reads  atomic.Uint64
	writes atomic.Uint64
	_      [40]byte
}

// route is the space of key: the one its row's prefix selects (CS5).
func (m *Multi) route(key []byte) int { return m.rows[m.rowOf(key)].sp }

// rowOf is key's row: the one whose prefix key starts with, else the
// default tenant's. No prefix starts another (tier and openMulti refuse
// overlaps), so the only candidate is the greatest prefix not above key.
func (m *Multi) rowOf(key []byte) int {
	p := m.prefixes
	lo, hi := 0, len(p)
	for lo < hi { // the first prefix above key
		mid := int(uint(lo+hi) >> 1)
		if p[mid] <= string(key) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo > 0 && len(key) >= len(p[lo-1]) && string(key[:len(p[lo-1])]) == p[lo-1] {
		return m.ids[lo-1]
	}
	return 0
}

// index sorts the rows' prefixes for rowOf.
func (m *Multi) index() {
	m.prefixes, m.ids = nil, nil
	for i, r := range m.rows {
		if i > 0 && r.prefix != "" {
			m.prefixes = append(m.prefixes, r.prefix)
			m.ids = append(m.ids, i)
		}
	}
	order := make([]int, len(m.prefixes))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(m.prefixes[a], m.prefixes[b]) })
	ps, ids := make([]string, len(order)), make([]int, len(order))
	for k, i := range order {
		ps[k], ids[k] = m.prefixes[i], m.ids[i]
	}
	m.prefixes, m.ids = ps, ids
}

func (m *Multi) Get(ctx context.Context, dst, key []byte, size int) ([]byte, backend.Meta, bool, error) {
	r := m.rowOf(key)
	m.rows[r].reads.Add(1)
	return m.spaces[m.rows[r].sp].st.Get(ctx, dst, key, size)
}

// GetPieces reads pieces of key's value (backend.Pieces) from the
// namespace its prefix selects (CS5), a read of its tenant.
func (m *Multi) GetPieces(ctx context.Context, key []byte, choose func(t []backend.PieceInfo) []int) ([][]byte, []backend.PieceInfo, backend.Meta, bool, error) {
	r := m.rowOf(key)
	m.rows[r].reads.Add(1)
	return m.spaces[m.rows[r].sp].st.GetPieces(ctx, key, choose)
}

// groups splits the indexes 0..n-1 by the space key(i) routes to; one
// group (the common case: a batch of one tenant's keys) allocates one
// slice.
func (m *Multi) groups(n int, key func(i int) []byte, count func(r *row)) (single int, by map[int][]int) {
	single = -1
	for i := range n {
		r := m.rows[m.rowOf(key(i))]
		count(r)
		switch {
		case by != nil:
			by[r.sp] = append(by[r.sp], i)
		case single < 0 || single == r.sp:
			single = r.sp
		default:
			by = map[int][]int{}
			for j := range i {
				by[single] = append(by[single], j)
			}
			by[r.sp] = append(by[r.sp], i)
		}
	}
	return single, by
}

func (m *Multi) GetMany(ctx context.Context, keys [][]byte, sizes []int, dsts [][]byte) []backend.Result {
	single, by := m.groups(len(keys), func(i int) []byte { return keys[i] }, func(r *row) { r.reads.Add(1) })
	if by == nil {
		if single < 0 {
			return make([]backend.Result, len(keys))
		}
		return m.spaces[single].st.GetMany(ctx, keys, sizes, dsts)
	}
	out := make([]backend.Result, len(keys))
	for sp, idx := range by {
		ks := make([][]byte, len(idx))
		var ss []int
		var ds [][]byte
		for j, i := range idx {
			ks[j] = keys[i]
			if sizes != nil {
				ss = append(ss, sizes[i])
			}
			if dsts != nil {
				ds = append(ds, dsts[i])
			}
		}
		for j, res := range m.spaces[sp].st.GetMany(ctx, ks, ss, ds) {
			out[idx[j]] = res
		}
	}
	return out
}

// PutMany writes each space's items in one PutMany of its own, the
// spaces side by side (each namespace has its own ring).
func (m *Multi) PutMany(ctx context.Context, items []*flusher.Item) error {
	single, by := m.groups(len(items), func(i int) []byte { return items[i].Key }, func(r *row) { r.writes.Add(1) })
	if by == nil {
		if single < 0 {
			return nil
		}
		m.dirty[single].Store(true)
		return m.spaces[single].st.PutMany(ctx, items)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(m.spaces))
	for sp, idx := range by {
		m.dirty[sp].Store(true)
		its := make([]*flusher.Item, len(idx))
		for j, i := range idx {
			its[j] = items[i]
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[sp] = m.spaces[sp].st.PutMany(ctx, its)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (m *Multi) Delete(ctx context.Context, key []byte) error {
	sp := m.route(key)
	m.dirty[sp].Store(true)
	return m.spaces[sp].st.Delete(ctx, key)
}

// DeleteMany deletes each space's keys in one DeleteMany of its own.
func (m *Multi) DeleteMany(ctx context.Context, keys [][]byte) []error {
	single, by := m.groups(len(keys), func(i int) []byte { return keys[i] }, func(*row) {})
	if by == nil {
		if single < 0 {
			return make([]error, len(keys))
		}
		m.dirty[single].Store(true)
		return m.spaces[single].st.DeleteMany(ctx, keys)
	}
	out := make([]error, len(keys))
	for sp, idx := range by {
		m.dirty[sp].Store(true)
		ks := make([][]byte, len(idx))
		for j, i := range idx {
			ks[j] = keys[i]
		}
		for j, err := range m.spaces[sp].st.DeleteMany(ctx, ks) {
			out[idx[j]] = err
		}
	}
	return out
}

// Sync syncs every space written since its last Sync.
func (m *Multi) Sync(ctx context.Context) error {
	var errs []error
	for i, s := range m.spaces {
		if m.dirty[i].Swap(false) {
			if err := s.st.Sync(ctx); err != nil {
				m.dirty[i].Store(true)
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func (m *Multi) Floor(ctx context.Context) (uint64, error) { return m.spaces[0].st.Floor(ctx) }

func (m *Multi) SetFloor(ctx context.Context, floor uint64) error {
	return m.spaces[0].st.SetFloor(ctx, floor)
}

// Close closes every space, then the volume or the controller. Idempotent.
func (m *Multi) Close() error {
	m.closeMu.Do(func() {
		var errs []error
		for _, s := range m.spaces {
			errs = append(errs, s.st.Close())
		}
		for _, c := range m.closers {
			errs = append(errs, c())
		}
		m.closeErr = errors.Join(errs...)
	})
	return m.closeErr
}

var (
	_ backend.Store       = (*Multi)(nil)
	_ backend.Floors      = (*Multi)(nil)
	_ backend.Keyspace    = (*Multi)(nil)
	_ backend.Pieces      = (*Multi)(nil)
	_ flusher.Syncer      = (*Multi)(nil)
	_ flusher.ManyDeleter = (*Multi)(nil)
)

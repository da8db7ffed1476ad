package tier

import (
	"errors"
	"testing"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/coldstore"
	"github.com/tiercache/tiercache/flusher"
	"github.com/tiercache/tiercache/numa"
	"github.com/tiercache/tiercache/nvmekv"
)

// Cold is what the tests' wrappers of the cold store pass on: the store,
// its flush floor record and its sync (coldstore.Store has all three).
type Cold interface {
	backend.Store
	backend.Floors
	flusher.Syncer
}

// emuConfig is the real emulated namespace in dir: 256 KiB regions make
// values above ~252 KiB chunked by the KV layer.
func emuConfig(dir string) coldstore.Config {
	return coldstore.Config{DataDir: dir, Capacity: 256 << 20, RegionBytes: 256 << 10}
}

// crashSized keeps a store the crash tests copy at every crash small.
func crashSized(c *coldstore.Config) { c.Capacity = 16 << 20 }

// emuCold makes o open the emulated namespace in dir (emuConfig, then
// edits) as its cold tier.
func emuCold(o *Options, dir string, edits ...func(*coldstore.Config)) {
	cc := emuConfig(dir)
	for _, e := range edits {
		e(&cc)
	}
	o.OpenCold = func(p backend.Params) (backend.Store, error) { return coldstore.Open(cc, p) }
}

// wrapCold makes o open its cold tier (as set now) with wrap around it.
func wrapCold(o *Options, wrap func(Cold) Cold) {
	inner := o.OpenCold
	o.OpenCold = func(p backend.Params) (backend.Store, error) {
		s, err := inner(p)
		if err != nil {
			return nil, err
		}
		return wrap(s.(Cold)), nil
	}
}

// newColdKV makes kv o's cold tier (nvmekv KV over a namespace the test
// opened), strict when the cache asks for it.
func newColdKV(kv *nvmekv.KV, name string, p backend.Params) (backend.Store, error) {
	return coldstore.New(kv, name, false, p.Strict, p.MaxValue)
}

// kvOf is c's cold store's KV.
func kvOf(c *Cache) *nvmekv.KV { return c.cold.(*coldstore.Store).KV() }

// reopen opens a cache on the emulated store in dir (emuConfig, then
// edits) with o otherwise; Close runs at cleanup.
func reopen(t *testing.T, o Options, dir string, edits ...func(*coldstore.Config)) *Cache {
	t.Helper()
	emuCold(&o, dir, edits...)
	return openWith(t, o)
}

// openWith opens a cache with o as it is; Close runs at cleanup.
func openWith(t *testing.T, o Options) *Cache {
	t.Helper()
	c, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestWriteThroughRefusesALossyStore checks T29: writethrough asks the
// cold store to be strict, and Open refuses a store that is not.
func TestWriteThroughRefusesALossyStore(t *testing.T) {
	needURing(t)
	o := smallOptions(newFakeClock())
	o.Durability = DurabilityWriteThrough
	var asked backend.Params
	dir := t.TempDir()
	o.OpenCold = func(p backend.Params) (backend.Store, error) {
		asked = p
		p.Strict = false // a store that ignores the request
		return coldstore.Open(emuConfig(dir), p)
	}
	if c, err := Open(o); err == nil || !errors.Is(err, ErrInvalidOptions) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("writethrough over a store that reclaims live records: %v", err)
	}
	if !asked.Strict {
		t.Fatal("writethrough did not ask the cold store to be strict")
	}
	emuCold(&o, t.TempDir())
	c := openWith(t, o)
	if !c.cold.Stats().Strict {
		t.Fatal("writethrough opened a store that is not strict")
	}
}

// TestWarmNodeReachesTheColdStore checks T33: the cold store is told the
// warm arena's configured node (-1 without warm or with warm unbound),
// and Stats reports where the store put its index.
func TestWarmNodeReachesTheColdStore(t *testing.T) {
	needURing(t)
	for _, tc := range []struct {
		warm numa.ArenaOptions
		size int64
		want int
	}{{numa.ArenaOptions{Node: numa.Unbound}, 512 << 10, -1}, {numa.ArenaOptions{Node: 0}, 512 << 10, 0}, {numa.ArenaOptions{Node: 0}, 0, -1}} {
		o := smallOptions(newFakeClock())
		o.WarmArena, o.WarmBytes = tc.warm, tc.size
		if tc.size == 0 {
			o.WarmSegmentBytes = 0
		}
		cc := emuConfig(t.TempDir())
		cc.IndexNode = numa.AutoNode
		var got int
		o.OpenCold = func(p backend.Params) (backend.Store, error) {
			got = p.WarmNode
			return coldstore.Open(cc, p)
		}
		c := openWith(t, o)
		if st := c.Stats(); got != tc.want || st.ColdIndexNode != tc.want {
			t.Errorf("warm node %d, %d bytes: the store was told %d and reports its index on %d; want %d",
				tc.warm.Node, tc.size, got, st.ColdIndexNode, tc.want)
		}
		c.Close()
	}
}

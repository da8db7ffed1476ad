package warm

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tiercache/tiercache/numa"
)

type modelItem struct {
	value []byte
	meta  Meta
}

// TestModel runs random operations against the cache and a map model. The
// model is exact: OnEvict must hand back the model's current value (the
// callback then removes it from the model), so every Get must agree.
func TestModel(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runModel(t, seed) })
	}
}

func runModel(t *testing.T, seed uint64) {
	clk := newFakeClock()
	model := map[string]modelItem{}
	var evicted int
	onEvict := func(key, value []byte, m Meta) {
		want, ok := model[string(key)]
		if !ok {
			t.Fatalf("OnEvict(%q) for a key the model does not hold", key)
		}
		if !bytes.Equal(value, want.value) || m != want.meta {
			t.Fatalf("OnEvict(%q) = %q %+v, model has %q %+v", key, value, m, want.value, want.meta)
		}
		if m.Expiry != 0 && m.Expiry <= clk.now() {
			t.Fatalf("OnEvict(%q) of an expired item", key)
		}
		delete(model, string(key))
		evicted++
	}
	c := newTestCache(t, Options{Bytes: 16 * 4096, SegmentBytes: 4096, Shards: 2, OnEvict: onEvict, Clock: clk.now})
	rng := rand.New(rand.NewPCG(seed, 99))
	ops := 200_000
	if testing.Short() {
		ops = 40_000
	}
	live := func(k string) (modelItem, bool) {
		it, ok := model[k]
		if ok && it.meta.Expiry != 0 && it.meta.Expiry <= clk.now() {
			return it, false
		}
		return it, ok
	}
	var dst []byte
	var version uint64
	for i := 0; i < ops; i++ {
		k := fmt.Sprintf("key-%d", rng.IntN(300))
		switch op := rng.IntN(100); {
		case op < 45: // Set
			version++
			v := bytes.Repeat([]byte{byte(version)}, rng.IntN(700))
			m := Meta{Version: version}
			if rng.IntN(4) == 0 {
				m.Expiry = clk.now() + int64(rng.IntN(2000)) - 100
			}
			if err := c.Set([]byte(k), v, m); err != nil {
				t.Fatal(err)
			}
			if m.Expiry != 0 && m.Expiry <= clk.now() {
				delete(model, k) // a Set that is already expired deletes
			} else {
				model[k] = modelItem{v, m}
			}
		case op < 80: // Get
			var m Meta
			var ok bool
			dst, m, ok = c.Get(dst[:0], []byte(k))
			want, wok := live(k)
			if ok != wok {
				t.Fatalf("op %d: Get(%q) ok=%v, model %v", i, k, ok, wok)
			}
			if ok && (!bytes.Equal(dst, want.value) || m != want.meta) {
				t.Fatalf("op %d: Get(%q) = %d bytes %+v, model %d bytes %+v", i, k, len(dst), m, len(want.value), want.meta)
			}
		case op < 87: // Delete
			_, wok := live(k)
			if got := c.Delete([]byte(k)); got != wok {
				t.Fatalf("op %d: Delete(%q) = %v, model %v", i, k, got, wok)
			}
			delete(model, k)
		case op < 92: // SetIfNewer with an older or newer version
			it, ok := live(k)
			m := Meta{Version: it.meta.Version + uint64(rng.IntN(3)) - 1}
			stored, err := c.SetIfNewer([]byte(k), []byte("if-newer"), m)
			if err != nil {
				t.Fatal(err)
			}
			wantStored := !ok || it.meta.Version <= m.Version
			if stored != wantStored {
				t.Fatalf("op %d: SetIfNewer(%q, v%d) = %v, model version %d live %v", i, k, m.Version, stored, it.meta.Version, ok)
			}
			if stored {
				model[k] = modelItem{[]byte("if-newer"), m}
			}
		case op < 95: // SetExpiry
			it, ok := live(k)
			exp := clk.now() + int64(rng.IntN(1000))
			if got := c.SetExpiry([]byte(k), exp); got != ok {
				t.Fatalf("op %d: SetExpiry(%q) = %v, model %v", i, k, got, ok)
			}
			if ok {
				it.meta.Expiry = exp
				model[k] = it
			}
		case op < 97: // Has
			it, ok := live(k)
			if m, got := c.Has([]byte(k)); got != ok || (ok && m != it.meta) {
				t.Fatalf("op %d: Has(%q) = %+v %v, model %+v %v", i, k, m, got, it.meta, ok)
			}
		default:
			clk.advance(int64(rng.IntN(50)))
		}
	}
	// Every live model item is in the cache with its value.
	for k, it := range model {
		if it.meta.Expiry != 0 && it.meta.Expiry <= clk.now() {
			continue
		}
		v, m, ok := c.Get(nil, []byte(k))
		if !ok || !bytes.Equal(v, it.value) || m != it.meta {
			t.Fatalf("final: %q missing or wrong", k)
		}
	}
	seen := 0
	c.ForEach(func(key, value []byte, m Meta) bool {
		it, ok := live(string(key))
		if !ok || !bytes.Equal(value, it.value) || m != it.meta {
			t.Fatalf("ForEach yielded %q not live in the model", key)
		}
		seen++
		return true
	})
	st := c.Stats()
	unexpired := 0
	for k := range model {
		if _, ok := live(k); ok {
			unexpired++
		}
	}
	if seen != unexpired || st.Items < int64(unexpired) || st.Items > int64(len(model)) {
		t.Fatalf("ForEach saw %d, Stats.Items %d, model %d (%d unexpired)", seen, st.Items, len(model), unexpired)
	}
	if st.Evictions == 0 || uint64(evicted) != st.Evictions || st.Rescued == 0 || st.Expired == 0 {
		t.Fatalf("eviction paths not exercised or miscounted: %+v (callbacks %d)", st, evicted)
	}
	t.Logf("stats: %+v", st)
}

func TestTooLarge(t *testing.T) {
	c := newTestCache(t, Options{Bytes: 8 * 4096, SegmentBytes: 4096, Shards: 1})
	err := c.Set([]byte("k"), make([]byte, 4096), Meta{})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "segment is 4096 bytes") {
		t.Fatalf("err = %v", err)
	}
	// The largest record that fits one segment is accepted.
	if err := c.Set([]byte("k"), make([]byte, c.Stats().MaxItemBytes-1), Meta{}); err != nil {
		t.Fatal(err)
	}
	if v, _, ok := c.Get(nil, []byte("k")); !ok || len(v) != 4096-hdrSize-1 {
		t.Fatal("full-segment value lost")
	}
}

func TestSecondChance(t *testing.T) {
	var evicted []string
	c := newTestCache(t, Options{Bytes: 4 * 4096, SegmentBytes: 4096, Shards: 1,
		OnEvict: func(k, _ []byte, _ Meta) { evicted = append(evicted, string(k)) }})
	val := make([]byte, 200)
	if err := c.Set([]byte("hot"), val, Meta{}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		c.Get(nil, []byte("hot"))
		if err := c.Set([]byte(fmt.Sprint("cold-", i)), val, Meta{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, ok := c.Get(nil, []byte("hot")); !ok {
		t.Fatal("an item read between evictions was evicted")
	}
	for _, k := range evicted {
		if k == "hot" {
			t.Fatal("hot item handed to OnEvict")
		}
	}
	st := c.Stats()
	if st.Rescued == 0 || st.Evictions == 0 || st.Evictions != uint64(len(evicted)) {
		t.Fatalf("stats %+v, callbacks %d", st, len(evicted))
	}
}

// TestAllHot: when every item is read, eviction still makes progress
// (rescue is capped at half a segment) and Set never fails.
func TestAllHot(t *testing.T) {
	n := 0
	c := newTestCache(t, Options{Bytes: 2 * 4096, SegmentBytes: 4096, Shards: 1,
		OnEvict: func(_, _ []byte, _ Meta) { n++ }})
	for i := 0; i < 2000; i++ {
		k := []byte(fmt.Sprint("k", i))
		if err := c.Set(k, make([]byte, 100), Meta{}); err != nil {
			t.Fatal(err)
		}
		for j := max(0, i-40); j <= i; j++ {
			c.Get(nil, []byte(fmt.Sprint("k", j)))
		}
	}
	if n == 0 || c.Len() == 0 {
		t.Fatalf("evictions %d, items %d", n, c.Len())
	}
}

func TestCollisionDetected(t *testing.T) {
	var evicted []string
	c := newTestCache(t, Options{Bytes: 4 * 4096, SegmentBytes: 4096, Shards: 1,
		OnEvict: func(k, _ []byte, _ Meta) { evicted = append(evicted, string(k)) }})
	// Forge a collision: store "a", then make its index entry answer for "b"'s hash.
	if err := c.Set([]byte("a"), []byte("va"), Meta{}); err != nil {
		t.Fatal(err)
	}
	s := c.shards[0]
	ha, hb := keyHash([]byte("a")), keyHash([]byte("b"))
	loc, _ := s.idx.get(ha)
	s.idx.del(ha)
	s.idx.put(hb, loc)
	if _, _, ok := c.Get(nil, []byte("b")); ok {
		t.Fatal("Get(b) served a's value through a hash collision")
	}
	if c.Delete([]byte("b")) {
		t.Fatal("Delete(b) removed a's record")
	}
	// Setting "b" displaces the colliding "a", which goes to OnEvict.
	if err := c.Set([]byte("b"), []byte("vb"), Meta{}); err != nil {
		t.Fatal(err)
	}
	if len(evicted) != 1 || evicted[0] != "a" || c.Stats().Displaced != 1 {
		t.Fatalf("evicted %v, stats %+v", evicted, c.Stats())
	}
	if v, _, ok := c.Get(nil, []byte("b")); !ok || string(v) != "vb" {
		t.Fatal("b lost")
	}
}

func TestGetAppendsNoAlloc(t *testing.T) {
	c := newTestCache(t, Options{Bytes: 8 * 4096, SegmentBytes: 4096, Shards: 1})
	if err := c.Set([]byte("k"), []byte("value"), Meta{Version: 3}); err != nil {
		t.Fatal(err)
	}
	dst := append(make([]byte, 0, 64), "pre:"...)
	got, m, ok := c.Get(dst, []byte("k"))
	if !ok || string(got) != "pre:value" || m.Version != 3 {
		t.Fatalf("Get = %q %+v %v", got, m, ok)
	}
	key := []byte("k")
	if a := testing.AllocsPerRun(100, func() { c.Get(dst[:0], key) }); a != 0 {
		t.Fatalf("Get hit allocates %v times", a)
	}
	if a := testing.AllocsPerRun(100, func() { c.Get(dst[:0], []byte("missing")) }); a != 0 {
		t.Fatalf("Get miss allocates %v times", a)
	}
}

func TestWarmOnNode(t *testing.T) {
	node := testNode(t)
	c := newTestCache(t, Options{Bytes: 16 << 20, SegmentBytes: 1 << 20, Arena: numa.ArenaOptions{Node: node}})
	st := c.Stats()
	if !st.Bound || st.Node != node || st.Placement != 1 {
		t.Fatalf("warm arena on node %d: %+v", node, st)
	}
	if f, err := c.VerifyPlacement(0); err != nil || f != 1 {
		t.Fatalf("VerifyPlacement = %v, %v", f, err)
	}
}

func TestWarmMissingNode(t *testing.T) {
	_, err := New(Options{Bytes: 16 << 20, SegmentBytes: 1 << 20, Arena: numa.ArenaOptions{Node: 7}})
	if !errors.Is(err, numa.ErrNoSuchNode) || !strings.Contains(err.Error(), "node 7 does not exist") {
		t.Fatalf("err = %v", err)
	}
	c, err := New(Options{Bytes: 16 << 20, SegmentBytes: 1 << 20,
		Arena: numa.ArenaOptions{Node: 7, Fallback: numa.FallbackPreferred}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st := c.Stats()
	if st.Bound || st.Node != -1 || !strings.Contains(st.Fallback, "node 7") || st.Placement != 0 {
		t.Fatalf("fallback stats %+v", st)
	}
	if err := c.Set([]byte("k"), []byte("v"), Meta{}); err != nil {
		t.Fatal(err)
	}
}

func TestOptionsValidate(t *testing.T) {
	o := Options{Bytes: -1, SegmentBytes: 1000, Shards: 3, PlacementSamples: -2}
	o.EnsureDefaults()
	err := o.Validate()
	if !errors.Is(err, ErrInvalidOptions) || strings.Count(err.Error(), "\n") != 3 {
		t.Fatalf("Validate = %v, want 4 problems", err)
	}
	o = Options{Bytes: 3 << 20, SegmentBytes: 1 << 20, Shards: 2}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "need at least 2") {
		t.Fatalf("too few segments per shard: %v", err)
	}
	o = Options{Bytes: 1 << 20}
	o.EnsureDefaults()
	if o.SegmentBytes != 64<<10 || o.Validate() != nil {
		t.Fatalf("small arena: SegmentBytes %d, shards %d: %v", o.SegmentBytes, o.Shards, o.Validate())
	}
	o = Options{Bytes: 1 << 30}
	o.EnsureDefaults()
	if o.Shards != 32 || o.Validate() != nil {
		t.Fatalf("default shards for 1 GiB = %d (%v)", o.Shards, o.Validate())
	}
}

func TestCloseIdempotent(t *testing.T) {
	c, err := New(Options{Bytes: 8 * 4096, SegmentBytes: 4096, Shards: 1})
	if err != nil {
		t.Fatal(err)
	}
	c.Set([]byte("k"), []byte("v"), Meta{})
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := c.Get(nil, []byte("k")); ok {
		t.Fatal("Get after Close hit")
	}
	if err := c.Set([]byte("k"), []byte("v"), Meta{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Set after Close: %v", err)
	}
}

// TestStaleGenerationNotServed: an index entry whose segment generation no
// longer matches is a miss (W3's safety net).
func TestStaleGenerationNotServed(t *testing.T) {
	c := newTestCache(t, Options{Bytes: 4 * 4096, SegmentBytes: 4096, Shards: 1})
	if err := c.Set([]byte("k"), []byte("v"), Meta{}); err != nil {
		t.Fatal(err)
	}
	s := c.shards[0]
	loc, _ := s.idx.get(keyHash([]byte("k")))
	s.segs[locOff(loc)/s.segBytes].gen++
	if _, _, ok := c.Get(nil, []byte("k")); ok {
		t.Fatal("served a record through a stale generation")
	}
}

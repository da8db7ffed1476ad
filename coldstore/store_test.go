package coldstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/flusher"
	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu"
	"github.com/tiercache/tiercache/uring"
)

// openTest opens an emulated store in a temporary directory (8 MiB of
// 256 KiB regions, edited by edit); Close runs at cleanup.
func openTest(t *testing.T, edit func(*Config), p backend.Params) *Store {
	t.Helper()
	needURing(t)
	c := Config{DataDir: t.TempDir(), Capacity: 8 << 20, RegionBytes: 256 << 10}
	if edit != nil {
		edit(&c)
	}
	bs, err := Open(c, p)
	if err != nil {
		t.Fatal(err)
	}
	s := bs.(*Store)
	t.Cleanup(func() { s.Close() })
	return s
}

// needURing skips (or fails under TIERCACHE_NO_SKIP) where io_uring, which
// the emulated namespace runs on, is unavailable.
func needURing(t *testing.T) {
	t.Helper()
	r, err := uring.New(uring.Options{Entries: 4})
	if err != nil {
		if os.Getenv("TIERCACHE_NO_SKIP") == "1" {
			t.Fatalf("io_uring unavailable, the emulated cold store cannot run: %v", err)
		}
		t.Skipf("io_uring unavailable, the emulated cold store cannot run: %v", err)
	}
	r.Close()
}

func put(t *testing.T, s *Store, items ...*flusher.Item) {
	t.Helper()
	if err := s.PutMany(context.Background(), items); err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.Err != nil {
			t.Fatalf("put %q: %v", it.Key, it.Err)
		}
	}
}

// TestMissIsNotAnError checks backend B1 for the cold store.
func TestMissIsNotAnError(t *testing.T) {
	s := openTest(t, nil, backend.Params{WarmNode: -1})
	ctx := context.Background()
	if _, _, found, err := s.Get(ctx, nil, []byte("absent"), -1); found || err != nil {
		t.Fatalf("Get of an absent key: found %v, err %v", found, err)
	}
	for _, r := range s.GetMany(ctx, [][]byte{[]byte("a"), []byte("b")}, nil, nil) {
		if r.Found || r.Err != nil {
			t.Fatalf("GetMany of absent keys: %+v", r)
		}
	}
	if err := s.Delete(ctx, []byte("absent")); err != nil {
		t.Fatalf("Delete of an absent key: %v", err)
	}
	for _, err := range s.DeleteMany(ctx, [][]byte{[]byte("a"), []byte("b")}) {
		if err != nil {
			t.Fatalf("DeleteMany of absent keys: %v", err)
		}
	}
}

// TestRoundTrip checks backend B2 for the cold store: values of every
// size class (inline, an extent, chunked past a region) come back with
// their Meta, by Get and by GetMany, and after a reopen.
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	cfg := func(c *Config) { c.DataDir = dir }
	s := openTest(t, cfg, backend.Params{WarmNode: -1, MaxValue: 1 << 20})
	sizes := []int{0, 1, 100, 4096, 300 << 10}
	var items []*flusher.Item
	for i, n := range sizes {
		items = append(items, &flusher.Item{Key: fmt.Appendf(nil, "k%d", i), Value: bytes.Repeat([]byte{byte('a' + i)}, n),
			Version: uint64(100 + i), Expiry: int64(1000 * i), Flags: uint32(i)})
	}
	put(t, s, items...)
	check := func(s *Store, when string) {
		t.Helper()
		keys := make([][]byte, len(items))
		for i, it := range items {
			keys[i] = it.Key
			v, m, found, err := s.Get(context.Background(), nil, it.Key, -1)
			want := backend.Meta{Expiry: it.Expiry, Version: it.Version, Flags: it.Flags}
			if !found || err != nil || !bytes.Equal(v, it.Value) || m != want {
				t.Fatalf("%s: Get %s: %d bytes, %+v, %v, %v; want %d bytes, %+v", when, it.Key, len(v), m, found, err, len(it.Value), want)
			}
		}
		for i, r := range s.GetMany(context.Background(), keys, nil, nil) {
			if !r.Found || r.Err != nil || !bytes.Equal(r.Value, items[i].Value) || r.Meta.Version != items[i].Version {
				t.Fatalf("%s: GetMany %s: %+v", when, keys[i], r.Meta)
			}
		}
	}
	check(s, "written")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	r := openTest(t, cfg, backend.Params{WarmNode: -1, MaxValue: 1 << 20})
	if !r.Stats().PreExisting {
		t.Error("a reopened store with keys does not say it held data")
	}
	check(r, "reopened")
}

// TestNewRefusesKVHidingExpired checks CS1.
func TestNewRefusesKVHidingExpired(t *testing.T) {
	needURing(t)
	ns, err := emu.Open(emu.Options{Path: t.TempDir() + "/cold.kv", Capacity: 8 << 20, RegionBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	kv, err := nvmekv.NewKV(ns, nvmekv.KVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s, err := New(kv, "hides", false, false, 1<<20); !errors.Is(err, ErrHidesExpired) {
		t.Fatalf("New with a KV that hides expired records: %v, %v", s, err)
	}
	s := openTest(t, nil, backend.Params{WarmNode: -1})
	if !s.KV().KeepsExpired() {
		t.Fatal("Open made a KV that hides expired records")
	}
}

// TestStrictFollowsParams checks CS3's Stats.Strict; tier's
// TestWriteThroughStoreKeepsOldKeys checks that a store opened for
// writethrough (Params.Strict) keeps every acknowledged record.
func TestStrictFollowsParams(t *testing.T) {
	for _, tc := range []struct{ cfg, params, want bool }{{false, false, false}, {true, false, true}, {false, true, true}} {
		s := openTest(t, func(c *Config) { c.Strict = tc.cfg }, backend.Params{WarmNode: -1, Strict: tc.params})
		if s.Stats().Strict != tc.want {
			t.Errorf("Config.Strict %v, Params.Strict %v: Stats.Strict %v, want %v", tc.cfg, tc.params, s.Stats().Strict, tc.want)
		}
	}
}

// TestFloorSurvivesReopen checks CS4.
func TestFloorSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	cfg := func(c *Config) { c.DataDir = dir }
	s := openTest(t, cfg, backend.Params{WarmNode: -1})
	ctx := context.Background()
	if f, err := s.Floor(ctx); f != 0 || err != nil {
		t.Fatalf("Floor of a new store: %d, %v", f, err)
	}
	if err := s.SetFloor(ctx, 12345); err != nil {
		t.Fatal(err)
	}
	if s.Stats().PreExisting {
		t.Error("a new store says it held data")
	}
	s.Close()
	r := openTest(t, cfg, backend.Params{WarmNode: -1})
	if f, err := r.Floor(ctx); f != 12345 || err != nil {
		t.Fatalf("Floor after a reopen: %d, %v; want 12345", f, err)
	}
	if r.Stats().PreExisting {
		t.Error("a store holding only its floor says it held an earlier run's keys")
	}
	if err := r.KV().Namespace().Store(ctx, floorKey, []byte("not a floor"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Floor(ctx); !errors.Is(err, ErrBadFloor) {
		t.Fatalf("Floor of a foreign record: %v, want ErrBadFloor", err)
	}
}

package coldstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/flusher"
	"github.com/tiercache/tiercache/nvmekv/emu/volume"
)

var multiTenants = []backend.Tenant{{Name: "a", Prefix: "a:"}, {Name: "b", Prefix: "b:"}, {Name: "c", Prefix: "c:"}}

// multiConfig is a 32 MiB volume in dir with 256 KiB regions (namespaces
// of at least 2 MiB).
func multiConfig(dir string, spaces ...TenantSpace) Config {
	return Config{DataDir: dir, Capacity: 32 << 20, RegionBytes: 256 << 10, Tenants: spaces}
}

func openMultiT(t *testing.T, c Config, ts ...backend.Tenant) *Multi {
	t.Helper()
	needURing(t)
	if ts == nil {
		ts = multiTenants
	}
	s, err := Open(c, backend.Params{MaxValue: 1 << 20, Batch: 16, WarmNode: -1, Tenants: ts})
	if err != nil {
		t.Fatal(err)
	}
	m, ok := s.(*Multi)
	if !ok {
		s.Close()
		t.Fatalf("Open gave a %T, not a Multi", s)
	}
	return m
}

func putNamed(t *testing.T, s backend.Store, keys ...string) {
	t.Helper()
	var items []*flusher.Item
	for i, k := range keys {
		items = append(items, &flusher.Item{Key: []byte(k), Value: []byte("v:" + k), Version: uint64(i + 1)})
	}
	if err := s.PutMany(context.Background(), items); err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.Err != nil {
			t.Fatal(it.Err)
		}
	}
}

// holds reports whether st holds key with its value.
func holds(t *testing.T, st *Store, key string) bool {
	t.Helper()
	v, _, found, err := st.Get(context.Background(), nil, []byte(key), -1)
	if err != nil {
		t.Fatal(err)
	}
	if found && string(v) != "v:"+key {
		t.Fatalf("%s holds %q", key, v)
	}
	return found
}

// spaceOf is the store of tenant name's keys.
func (m *Multi) spaceOf(name string) *Store {
	for _, r := range m.rows {
		if r.name == name {
			return m.spaces[r.sp].st
		}
	}
	return nil
}

// TestMultiRoutesByPrefix (CS5): each key is written to and read from the
// namespace its prefix selects, a tenant without one shares the default
// namespace; the keyspace walks every namespace's keys once; figures are
// per tenant; a namespace found again after a reopen holds its keys, and
// Clear keeps each namespace its tenant's.
func TestMultiRoutesByPrefix(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c := multiConfig(dir, TenantSpace{Name: "a", Bytes: 4 << 20}, TenantSpace{Name: "b", Bytes: 3<<20 + 1})
	m := openMultiT(t, c)
	keys := []string{"a:1", "a:2", "b:1", "c:1", "x:1", "a", "b:", "ab:1"}
	putNamed(t, m, keys...)
	where := map[string]string{"a:1": "a", "a:2": "a", "b:1": "b", "b:": "b", "c:1": "default", "x:1": "default", "a": "default", "ab:1": "default"}
	for k, sp := range where {
		for _, name := range []string{"a", "b", "default"} {
			if got := holds(t, m.spaceOf(name), k); got != (name == sp) {
				t.Errorf("%s in namespace %s: %v, want it in %s alone", k, name, got, sp)
			}
		}
		if v, _, found, err := m.Get(ctx, nil, []byte(k), -1); err != nil || !found || string(v) != "v:"+k {
			t.Errorf("Get %s: %q %v %v", k, v, found, err)
		}
	}
	if n := testing.AllocsPerRun(100, func() { m.rowOf([]byte("b:some-key")) }); n != 0 {
		t.Fatalf("routing a key allocates %v times", n)
	}
	res := m.GetMany(ctx, [][]byte{[]byte("a:1"), []byte("x:1"), []byte("b:1"), []byte("a:9")}, nil, nil)
	if !res[0].Found || !res[1].Found || !res[2].Found || res[3].Found || string(res[2].Value) != "v:b:1" {
		t.Fatalf("GetMany across namespaces: %+v", res)
	}
	if n, ok := m.UserKeys(); !ok || n != int64(len(keys)) {
		t.Fatalf("UserKeys %d %v, want %d", n, ok, len(keys))
	}
	seen := map[string]int{}
	for next, calls := uint64(0), 0; next < 1<<32; calls++ {
		var err error
		if next, err = m.ScanUserKeys(ctx, next, 2, func(k []byte, _ backend.Meta) { seen[string(k)]++ }); err != nil || calls > 1000 {
			t.Fatal(err, calls)
		}
	}
	for _, k := range keys {
		if seen[k] != 1 {
			t.Errorf("the walk gave %s %d times", k, seen[k])
		}
	}
	if m.MayHold([]byte("a:9")) || !m.MayHold([]byte("a:1")) {
		t.Error("MayHold")
	}
	st := m.Stats()
	rows := map[string]backend.TenantStats{}
	for _, r := range st.Tenants {
		rows[r.Name] = r
	}
	a, b, cr, d := rows["a"], rows["b"], rows["c"], rows["default"]
	if a.Keys != 2 || a.Writes != 2 || a.Reads != 4 || a.Capacity == 0 || !strings.HasPrefix(a.Namespace, "own:") ||
		b.Keys != 2 || cr.Namespace != "shared" || cr.Keys != -1 || cr.Writes != 1 || d.Keys != 4 || !strings.HasPrefix(d.Namespace, "default:") {
		t.Fatalf("tenant rows %+v", st.Tenants)
	}
	if err := m.SetFloor(ctx, 77); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m = openMultiT(t, c)
	if f, err := m.Floor(ctx); err != nil || f != 77 {
		t.Fatalf("floor %d %v", f, err)
	}
	for k, sp := range where {
		if !holds(t, m.spaceOf(sp), k) {
			t.Errorf("%s not in %s after a reopen", k, sp)
		}
	}
	if err := m.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := m.UserKeys(); n != 0 {
		t.Fatalf("%d keys after Clear", n)
	}
	m.Close()
	m = openMultiT(t, c)
	defer m.Close()
	if s := m.spaces[m.rows[1].sp]; s.rec.Name != "a" || !s.rec.Moved || s.rec.Prefix != "a:" {
		t.Fatalf("a's record after Clear: %+v", s.rec)
	}
}

// fileSum is a hash of path's bytes.
func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestMultiRefusesMismatch (CS6): a configuration that does not match the
// device is refused with an error naming each problem, and the file is
// left as it was: another size for a namespace, a namespace asked by two
// tenants, quotas past the free space, a tenant taking the default
// namespace or a missing one, a quota below the smallest namespace, a
// changed prefix, a single emulated store asked for tenant namespaces.
// TestTinyTenantSpaceRefusedByValidate (CS6): a tenant's cold_bytes below
// the smallest namespace is a configuration error that Validate reports,
// with the real region size, so that Open of a fresh directory makes no
// volume file for it.
func TestTinyTenantSpaceRefusedByValidate(t *testing.T) {
	dir := t.TempDir()
	c := multiConfig(dir, TenantSpace{Name: "a", Bytes: 1 << 20}, TenantSpace{Name: "b", Bytes: 4 << 20})
	err := c.Validate()
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), `tenant "a": cold_bytes 1048576 is below the smallest namespace, 2097152 bytes (four 262144-byte log regions`) ||
		strings.Contains(err.Error(), `"b"`) {
		t.Fatalf("Validate() = %v", err)
	}
	if s, err := Open(c, backend.Params{MaxValue: 1 << 20, Batch: 16, WarmNode: -1, Tenants: multiTenants}); err == nil {
		s.Close()
		t.Fatal("opened")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("a refused configuration made %v", ents)
	}
	kv := c
	kv.Mode, kv.Device, kv.DataDir = "passthrough", "/dev/ng9n9", ""
	if err := kv.Validate(); err != nil {
		t.Errorf("a KV SSD's namespace has no such minimum: %v", err)
	}
}

func TestMultiRefusesMismatch(t *testing.T) {
	dir := t.TempDir()
	c := multiConfig(dir, TenantSpace{Name: "a", Bytes: 4 << 20})
	m := openMultiT(t, c)
	putNamed(t, m, "a:1")
	m.Close()
	path := filepath.Join(dir, "cold.kv")
	sum := fileSum(t, path)
	for _, tc := range []struct {
		spaces []TenantSpace
		ts     []backend.Tenant
		want   []string
	}{
		{spaces: []TenantSpace{{Name: "a", Bytes: 8 << 20}}, want: []string{`namespace "a" of`, "holds 4194304 bytes, cold_bytes asks 8388608", "namespaces keep the size"}},
		{spaces: []TenantSpace{{Name: "a", Bytes: 4 << 20}, {Name: "b", Namespace: "a"}}, want: []string{`tenants "a" and "b" both take namespace "a"`}},
		{spaces: []TenantSpace{{Name: "b", Bytes: 40 << 20}}, want: []string{"not enough unallocated capacity", `"b" needs 41943040 bytes`}},
		{spaces: []TenantSpace{{Name: "b", Namespace: "default"}, {Name: "c", Namespace: "zz"}}, want: []string{`tenant "b" takes the default namespace`, `tenant "c" takes namespace "zz", which`}},
		{spaces: []TenantSpace{{Name: "b", Bytes: 1 << 20}}, want: []string{"below the smallest namespace, 2097152 bytes"}},
		{spaces: []TenantSpace{{Name: "a", Bytes: 4 << 20}}, ts: []backend.Tenant{{Name: "a", Prefix: "A:"}},
			want: []string{`holds the keys of prefix "a:" (tenant "a"), tenant "a"'s prefix is "A:"`, "a namespace keeps its prefix"}},
		{spaces: []TenantSpace{{Name: "zz", Bytes: 4 << 20}}, want: []string{`cold namespace for "zz", which is not a tenant`}},
	} {
		cc := multiConfig(dir, tc.spaces...)
		ts := tc.ts
		if ts == nil {
			ts = multiTenants
		}
		s, err := Open(cc, backend.Params{MaxValue: 1 << 20, Batch: 16, WarmNode: -1, Tenants: ts})
		if err == nil {
			s.Close()
			t.Fatalf("%+v opened", tc.spaces)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: %v\nlacks %q", tc.spaces, err, w)
			}
		}
		if !errors.Is(err, ErrTenantMismatch) && !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%+v: %v is not ErrTenantMismatch", tc.spaces, err)
		}
		// Opening a namespace marks its superblock (logstore): compare the
		// table and the namespaces' keys instead where one was opened.
		if len(tc.ts) == 0 && fileSum(t, path) != sum {
			t.Errorf("%+v: the refused Open changed %s", tc.spaces, path)
		}
		sum = fileSum(t, path)
	}
	m = openMultiT(t, c)
	if !holds(t, m.spaceOf("a"), "a:1") || len(m.vol.Namespaces()) != 2 {
		t.Fatalf("after the refusals: %+v", m.vol.Namespaces())
	}
	m.Close()
	// A single emulated namespace is not divided.
	plain := t.TempDir()
	s, err := Open(Config{DataDir: plain, Capacity: 8 << 20, RegionBytes: 256 << 10}, backend.Params{MaxValue: 1 << 20, Batch: 16, WarmNode: -1})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	psum := fileSum(t, filepath.Join(plain, "cold.kv"))
	_, err = Open(multiConfig(plain, TenantSpace{Name: "a", Bytes: 4 << 20}), backend.Params{MaxValue: 1 << 20, Batch: 16, WarmNode: -1, Tenants: multiTenants})
	if !errors.Is(err, ErrTenantMismatch) || !strings.Contains(err.Error(), "is one emulated namespace that every tenant shares") {
		t.Fatalf("tenant namespaces on a single store: %v", err)
	}
	if fileSum(t, filepath.Join(plain, "cold.kv")) != psum {
		t.Fatal("the refused Open changed the single store")
	}
}

// TestNewNamespaceTakesItsKeys (CS7): a tenant given a namespace takes the
// keys of its prefix the default namespace held, and they stay readable;
// a move cut short (the record not saying it was done) is done at the
// next open.
func TestNewNamespaceTakesItsKeys(t *testing.T) {
	dir := t.TempDir()
	m := openMultiT(t, multiConfig(dir, TenantSpace{Name: "b", Bytes: 4 << 20}))
	var aKeys []string
	for i := range 300 {
		aKeys = append(aKeys, fmt.Sprintf("a:%d", i))
	}
	putNamed(t, m, aKeys...)
	putNamed(t, m, "x:1", "ab")
	m.Close()
	c := multiConfig(dir, TenantSpace{Name: "b", Bytes: 4 << 20}, TenantSpace{Name: "a", Bytes: 4 << 20})
	if _, err := Open(c, backend.Params{WarmNode: -1, Tenants: multiTenants}); !errors.Is(err, ErrTenantMismatch) || !strings.Contains(err.Error(), "largest free run") {
		t.Fatalf("a new namespace in a volume the default namespace fills: %v", err)
	}
	c.Capacity = 48 << 20 // a file volume grows
	m = openMultiT(t, c)
	for _, k := range aKeys {
		if !holds(t, m.spaceOf("a"), k) || holds(t, m.spaceOf("default"), k) {
			t.Fatalf("%s not moved into a's namespace", k)
		}
	}
	if !holds(t, m.spaceOf("default"), "x:1") || !holds(t, m.spaceOf("default"), "ab") {
		t.Fatal("keys of no tenant left the default namespace")
	}
	// Cut a move short: a key of a's in the default namespace again, the
	// record saying the move is not done.
	sa := m.spaces[m.rows[1].sp]
	putNamed(t, m.spaces[0].st, "a:late")
	sa.rec.Moved = false
	if err := storeTenantRec(context.Background(), sa.st.kv.Namespace(), sa.rec); err != nil {
		t.Fatal(err)
	}
	m.Close()
	m = openMultiT(t, c)
	defer m.Close()
	if !holds(t, m.spaceOf("a"), "a:late") || holds(t, m.spaceOf("default"), "a:late") {
		t.Fatal("the cut-short move was not done again")
	}
}

// TestRemovedTenantKept (CS8): a tenant removed from the configuration
// keeps its namespace, and its keys are still read and written there;
// DropTenant is refused while the store is open, deletes it once closed,
// and the default namespace is never dropped; DropRemoved drops kept
// namespaces at open.
func TestRemovedTenantKept(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c := multiConfig(dir, TenantSpace{Name: "a", Bytes: 4 << 20}, TenantSpace{Name: "b", Bytes: 4 << 20})
	m := openMultiT(t, c)
	putNamed(t, m, "a:1", "b:1")
	m.Close()
	c2 := multiConfig(dir, TenantSpace{Name: "b", Bytes: 4 << 20})
	ts := []backend.Tenant{{Name: "b", Prefix: "b:"}}
	m = openMultiT(t, c2, ts...)
	if r := m.rows[m.rowOf([]byte("a:1"))]; r.kind != "kept" || r.name != "a" {
		t.Fatalf("a:1 routed to %+v", r)
	}
	putNamed(t, m, "a:2")
	if !holds(t, m.spaceOf("a"), "a:1") || !holds(t, m.spaceOf("a"), "a:2") || holds(t, m.spaceOf("default"), "a:2") {
		t.Fatal("the kept namespace does not hold a's keys")
	}
	if err := c2.DropTenant(ctx, "a"); !errors.Is(err, volume.ErrBusy) {
		t.Fatalf("DropTenant while open: %v", err)
	}
	// A tenant whose prefix overlaps the kept namespace's is refused.
	if _, err := Open(multiConfig(dir), backend.Params{Tenants: []backend.Tenant{{Name: "aa", Prefix: "a:x"}}, WarmNode: -1}); err == nil {
		t.Fatal("a prefix overlapping a kept namespace's opened")
	}
	m.Close()
	if _, err := Open(multiConfig(dir), backend.Params{Tenants: []backend.Tenant{{Name: "aa", Prefix: "a:x"}}, WarmNode: -1}); !errors.Is(err, ErrTenantMismatch) ||
		!strings.Contains(err.Error(), `overlaps tenant "aa"'s prefix "a:x"`) {
		t.Fatalf("a prefix overlapping a kept namespace's: %v", err)
	}
	if err := c2.DropTenant(ctx, "default"); !errors.Is(err, ErrNoTenantNamespace) {
		t.Fatalf("DropTenant default: %v", err)
	}
	list, free, err := c2.Namespaces(ctx)
	if err != nil || len(list) != 3 || free != 0 {
		t.Fatalf("Namespaces: %+v %d %v", list, free, err)
	}
	if err := c2.DropTenant(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := c2.DropTenant(ctx, "a"); !errors.Is(err, ErrNoTenantNamespace) {
		t.Fatalf("second DropTenant: %v", err)
	}
	m = openMultiT(t, c2, ts...)
	if m.rowOf([]byte("a:1")) != 0 || holds(t, m.spaces[0].st, "a:1") {
		t.Fatal("a:1 after its namespace was dropped")
	}
	if !holds(t, m.spaceOf("b"), "b:1") {
		t.Fatal("b lost its key")
	}
	m.Close()
	// DropRemoved: b's namespace goes at the open that no longer has b.
	c3 := multiConfig(dir)
	c3.DropRemoved = true
	m = openMultiT(t, c3, ts...)
	defer m.Close()
	if len(m.spaces) != 1 || len(m.vol.Namespaces()) != 1 || !bytes.Equal([]byte(m.rows[0].name), []byte("default")) {
		t.Fatalf("after DropRemoved: %+v", m.vol.Namespaces())
	}
}

// TestTinyCapacityRefusedByValidate (CS6): an emulated Capacity below four
// log regions, and a fresh volume whose tenants leave the default
// namespace below the smallest, are configuration errors Validate
// reports, so that Open makes no file for them; an existing volume is
// left to Open.
func TestTinyCapacityRefusedByValidate(t *testing.T) {
	dir := t.TempDir()
	one := Config{DataDir: dir, Capacity: 1024, RegionBytes: 256 << 10}
	err := one.Validate()
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "Capacity 1024 (cold.capacity) holds fewer than four 262144-byte log regions") {
		t.Fatalf("Validate() = %v", err)
	}
	c := multiConfig(dir, TenantSpace{Name: "a", Bytes: 30 << 20})
	err = c.Validate()
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "the default namespace would have 1048576 bytes of Capacity 33554432") {
		t.Fatalf("Validate() = %v", err)
	}
	for _, c := range []Config{one, c} {
		if s, err := Open(c, backend.Params{MaxValue: 1 << 20, Batch: 16, WarmNode: -1, Tenants: multiTenants}); err == nil {
			s.Close()
			t.Fatal("opened")
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("a refused configuration made %v", ents)
	}
	if err := multiConfig(dir, TenantSpace{Name: "a", Bytes: 4 << 20}).Validate(); err != nil {
		t.Errorf("room for both: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cold.kv"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("an existing file is Open's to check: %v", err)
	}
}

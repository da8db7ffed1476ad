package volume

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu"
	"github.com/tiercache/tiercache/nvmekv/emu/dev"
)

func openNew(t *testing.T, path string, capacity int64) *Volume {
	t.Helper()
	v, err := Open(Options{Path: path, Capacity: capacity, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// openNS opens the emulated namespace on v's extent name.
func openNS(t *testing.T, v *Volume, name string) *emu.Namespace {
	t.Helper()
	w, err := v.Device(name)
	if err != nil {
		t.Fatal(err)
	}
	ns, err := emu.Open(emu.Options{Device: w, RegionBytes: 64 << 10, MaxValueBytes: 4096, ReadSlots: 8, RingEntries: 64,
		CheckpointPath: filepath.Join(filepath.Dir(v.Path()), name+".ckpt")})
	if err != nil {
		if strings.Contains(err.Error(), "io_uring") || errors.Is(err, os.ErrPermission) {
			skipf(t, "no io_uring here: %v", err)
		}
		t.Fatal(err)
	}
	return ns
}

func skipf(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("TIERCACHE_NO_SKIP") == "1" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// TestVolumeNamespaces: namespaces made in a volume are found again after
// a reopen, at the same extents; each holds its own keys, and a full one
// reclaims its own regions only (its neighbour keeps every key).
func TestVolumeNamespaces(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cold.kv")
	v := openNew(t, path, 16<<20)
	a, err := v.Create("a", 2<<20)
	if err != nil {
		t.Fatal(err)
	}
	b, err := v.Create("b", 1<<20+1) // rounded up to 2 MiB
	if err != nil {
		t.Fatal(err)
	}
	if a.Offset != DataStart || b.Offset != DataStart+2<<20 || b.Bytes != 2<<20 {
		t.Fatalf("extents a %+v b %+v", a, b)
	}
	nsA, nsB := openNS(t, v, "a"), openNS(t, v, "b")
	val := make([]byte, 2000)
	for i := range 20 {
		if err := nsA.Store(ctx, []byte{'a', byte(i)}, val, 0); err != nil {
			t.Fatal(err)
		}
	}
	// b writes 10 times its capacity: it reclaims its own regions.
	for i := range 10000 {
		if err := nsB.Store(ctx, []byte{'b', byte(i >> 8), byte(i)}, val, 0); err != nil {
			t.Fatal(err)
		}
	}
	if st := nsB.Stats(); st.ReclaimedKeys == 0 {
		t.Fatalf("b wrote 10x its capacity and reclaimed nothing: %+v", st)
	}
	if st := nsA.Stats(); st.ReclaimedKeys != 0 || st.Items != 20 {
		t.Fatalf("a after b's flood: %+v", st)
	}
	nsA.Close()
	nsB.Close()
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	v = openNew(t, path, 0)
	defer v.Close()
	if got, _ := v.Find("a"); got != a {
		t.Fatalf("after reopen a is %+v, was %+v", got, a)
	}
	nsA = openNS(t, v, "a")
	defer nsA.Close()
	buf := make([]byte, 4096)
	for i := range 20 {
		if n, err := nsA.Retrieve(ctx, []byte{'a', byte(i)}, buf); err != nil || n != len(val) {
			t.Fatalf("a's key %d after reopen: %d %v", i, n, err)
		}
	}
	free, largest := v.Unallocated()
	if want := int64(16<<20 - DataStart - 4<<20); free != want || largest != want {
		t.Fatalf("unallocated %d, largest %d, want %d", free, largest, want)
	}
}

// TestWindowStaysInside: a namespace's device refuses every transfer
// outside its extent before submission, and the synchronous calls fail
// (V5).
func TestWindowStaysInside(t *testing.T) {
	v := openNew(t, filepath.Join(t.TempDir(), "cold.kv"), 8<<20)
	defer v.Close()
	if _, err := v.Create("a", 1<<20); err != nil {
		t.Fatal(err)
	}
	w, err := v.Device("a")
	if err != nil {
		t.Fatal(err)
	}
	if res, refused := w.Refuse(true, 1<<20-4096, 8192); !refused || res >= 0 {
		t.Fatalf("a write across the end: %d %v", res, refused)
	}
	if _, refused := w.Refuse(false, 0, 4096); refused {
		t.Fatal("a read inside refused")
	}
	b, _ := dev.MapBuffer(4096)
	defer dev.UnmapBuffer(b)
	if err := w.WriteAt(b, 1<<20); !errors.Is(err, dev.ErrOutOfRange) {
		t.Fatalf("WriteAt past the end: %v", err)
	}
	if err := w.ReadAt(b, -4096); !errors.Is(err, dev.ErrOutOfRange) {
		t.Fatalf("ReadAt before the start: %v", err)
	}
	if w.Base() != DataStart || w.Size() != 1<<20 {
		t.Fatalf("window at %d of %d bytes", w.Base(), w.Size())
	}
}

// TestCheckRefuses: a name in use, a size past the longest free run and a
// bad name are refused all at once; a refused Create leaves the table
// unchanged (V3).
func TestCheckRefuses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cold.kv")
	v := openNew(t, path, 8<<20)
	defer v.Close()
	if _, err := v.Create("a", 2<<20); err != nil {
		t.Fatal(err)
	}
	err := v.Check([]Want{{"a", 1 << 20}, {"big", 6 << 20}, {"", 1}, {"c", 3 << 20}, {"d", 3 << 20}})
	for _, want := range []error{ErrExists, ErrCapacity, ErrBadName} {
		if !errors.Is(err, want) {
			t.Errorf("Check: %v, want %v among its errors", err, want)
		}
	}
	if !strings.Contains(err.Error(), `"d" needs 3145728 bytes, the largest free run`) || strings.Contains(err.Error(), `"c" needs`) {
		t.Errorf("c fits, d does not once c is placed: %v", err)
	}
	gen := v.t.gen
	if _, err := v.Create("big", 6<<20); !errors.Is(err, ErrCapacity) {
		t.Fatalf("Create past the free space: %v", err)
	}
	if v.t.gen != gen || len(v.Namespaces()) != 1 {
		t.Fatalf("a refused Create changed the table: gen %d -> %d, %v", gen, v.t.gen, v.Namespaces())
	}
}

// TestDroppedNamespaceStartsEmpty: a namespace made where one was dropped
// holds none of the dropped one's keys (V2), and the freed extent is
// reused.
func TestDroppedNamespaceStartsEmpty(t *testing.T) {
	ctx := context.Background()
	v := openNew(t, filepath.Join(t.TempDir(), "cold.kv"), 8<<20)
	defer v.Close()
	a, _ := v.Create("a", 2<<20)
	ns := openNS(t, v, "a")
	if err := ns.Store(ctx, []byte("k"), []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	ns.Close()
	if err := v.Drop("a"); err != nil {
		t.Fatal(err)
	}
	if err := v.Drop("a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second drop: %v", err)
	}
	c, err := v.Create("c", 2<<20)
	if err != nil || c.Offset != a.Offset {
		t.Fatalf("c %+v (a was at %d): %v", c, a.Offset, err)
	}
	os.Remove(filepath.Join(filepath.Dir(v.Path()), "c.ckpt"))
	ns = openNS(t, v, "c")
	defer ns.Close()
	if _, err := ns.Retrieve(ctx, []byte("k"), make([]byte, 16)); !errors.Is(err, nvmekv.ErrKeyNotFound) {
		t.Fatalf("the dropped namespace's key in its successor: %v", err)
	}
}

// TestTornTableKeepsTheOther: a damaged newest copy leaves the table of
// the generation before it (V1).
func TestTornTableKeepsTheOther(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cold.kv")
	v := openNew(t, path, 8<<20)
	if _, err := v.Create("a", 1<<20); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Create("b", 1<<20); err != nil {
		t.Fatal(err)
	}
	gen := v.t.gen
	v.Close()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("torn"), int64(gen%2)*tableBytes+headerBytes+3); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if k, err := Probe(path, false); err != nil || k != IsVolume {
		t.Fatalf("Probe: %v %v", k, err)
	}
	v = openNew(t, path, 0)
	defer v.Close()
	if ns := v.Namespaces(); len(ns) != 1 || ns[0].Name != "a" {
		t.Fatalf("after the newest copy was torn: %+v, want a alone", ns)
	}
}

// TestVolumeLocked: a second Open of an open volume fails at once (V4);
// a volume does not shrink, a file volume grows; Probe tells a volume
// from an emulated store and from nothing.
func TestVolumeLocked(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cold.kv")
	if k, err := Probe(path, false); err != nil || k != Empty {
		t.Fatalf("Probe of a missing file: %v %v", k, err)
	}
	if _, err := Open(Options{Path: path}); !errors.Is(err, ErrFormat) {
		t.Fatalf("Open without Create of a missing file: %v", err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("Open without Create made the file")
	}
	v := openNew(t, path, 8<<20)
	if _, err := Open(Options{Path: path}); !errors.Is(err, ErrBusy) {
		t.Fatalf("second Open: %v", err)
	}
	v.Close()
	if _, err := Open(Options{Path: path, Capacity: 4 << 20}); !errors.Is(err, ErrShrink) {
		t.Fatalf("Open smaller: %v", err)
	}
	v = openNew(t, path, 16<<20)
	if v.Capacity() != 16<<20 {
		t.Fatalf("capacity %d after growing", v.Capacity())
	}
	v.Close()
	plain := filepath.Join(dir, "plain.kv")
	ns, err := emu.Open(emu.Options{Path: plain, Capacity: 4 << 20, RegionBytes: 64 << 10, MaxValueBytes: 4096, ReadSlots: 8, RingEntries: 64})
	if err != nil {
		skipf(t, "no emulated namespace here: %v", err)
	}
	ns.Close()
	if k, err := Probe(plain, false); err != nil || k != Namespace {
		t.Fatalf("Probe of an emulated store: %v %v", k, err)
	}
	if _, err := Open(Options{Path: plain, Create: true}); !errors.Is(err, ErrFormat) {
		t.Fatalf("Open of an emulated store as a volume: %v", err)
	}
}

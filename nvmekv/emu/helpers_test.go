package emu

import (
	"bytes"
	"os"
	"testing"
	"unsafe"

	"github.com/tiercache/tiercache/nvmekv"
)

// skipf skips with reason, or fails when TIERCACHE_NO_SKIP=1 (CI as root).
func skipf(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("TIERCACHE_NO_SKIP") == "1" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

func testOptions(t testing.TB) Options {
	return Options{Path: t.TempDir() + "/ns", Capacity: 16 * (64 << 10), RegionBytes: 64 << 10, MaxValueBytes: 4096, ReadSlots: 8, RingEntries: 64}
}

func mustOpen(t testing.TB, o Options) *Namespace {
	t.Helper()
	ns, err := Open(o)
	if err != nil {
		t.Fatalf("Open(%s): %v", o.Path, err)
	}
	return ns
}

// inGoroutines runs f(0..n-1) in n goroutines and fails t with the first
// error any of them returned.
func inGoroutines(t *testing.T, n int, f func(g int) error) {
	t.Helper()
	done := make(chan error, n)
	for g := 0; g < n; g++ {
		go func() { done <- f(g) }()
	}
	for g := 0; g < n; g++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// checkReopened runs check on ns (open), then after a clean reopen (from
// the checkpoint), then after a reopen that must scan; it closes ns.
func checkReopened(t *testing.T, o Options, ns *Namespace, check func(ns *Namespace, what string)) {
	t.Helper()
	check(ns, "open")
	ns.Close()
	ns = mustOpen(t, o)
	check(ns, "checkpoint")
	ns.Close()
	o.CheckpointPath = "-"
	ns = mustOpen(t, o)
	check(ns, "scan")
	ns.Close()
}

// retrieveAll reads keys in one Do and checks each against want; it
// returns how many reads went to the disk, and how many of them to the
// quick ring (E15) and to a batch ring (E16).
func retrieveAll(t *testing.T, ns *Namespace, keys []string, want map[string][]byte) (disk, quick, batch uint64) {
	t.Helper()
	st0 := ns.Stats()
	ops := make([]*nvmekv.Op, len(keys))
	for i, k := range keys {
		ops[i] = &nvmekv.Op{Code: nvmekv.OpRetrieve, Key: []byte(k), Buf: make([]byte, len(want[k]))}
	}
	if err := ns.Do(ctx, ops...); err != nil {
		t.Fatal(err)
	}
	for i, op := range ops {
		if op.Err != nil || !bytes.Equal(op.Buf, want[keys[i]]) {
			t.Fatalf("Retrieve %s: err %v, value equal %v", keys[i], op.Err, bytes.Equal(op.Buf, want[keys[i]]))
		}
	}
	st := ns.Stats()
	return st.DiskReads - st0.DiskReads, st.QuickReads - st0.QuickReads, st.BatchReads - st0.BatchReads
}

// aligned reports whether b is not empty and starts at a multiple of a
// in memory.
func aligned(b []byte, a int) bool {
	return len(b) > 0 && uintptr(unsafe.Pointer(unsafe.SliceData(b)))&uintptr(a-1) == 0
}

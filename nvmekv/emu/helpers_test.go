package emu

import (
	"os"
	"testing"
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

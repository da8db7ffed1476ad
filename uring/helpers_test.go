package uring

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// skipOrFail skips a test that cannot run here, or fails it when
// TIERCACHE_NO_SKIP=1 (CI, scripts/test as root), where it must run.
func skipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("TIERCACHE_NO_SKIP") == "1" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// newRing makes a ring for a test and closes it at cleanup.
func newRing(t testing.TB, opts Options) *Ring {
	t.Helper()
	r, err := New(opts)
	if err != nil {
		t.Fatalf("New(%+v): %v", opts, err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return r
}

// alignedBuf returns n bytes of page-aligned, off-heap memory (suitable for
// O_DIRECT and never moved by the Go runtime), unmapped at cleanup.
func alignedBuf(t testing.TB, n int) []byte {
	t.Helper()
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatalf("mmap %d bytes: %v", n, err)
	}
	t.Cleanup(func() { unix.Munmap(b) })
	return b
}

// tempFile creates a file of size bytes in a temporary directory and opens
// it with extra open flags (e.g. O_DIRECT); closed at cleanup.
func tempFile(t testing.TB, size int64, flags int) (*os.File, string) {
	t.Helper()
	dir := t.TempDir()
	if flags&unix.O_DIRECT != 0 {
		dir = directDir(t)
	}
	path := dir + "/data"
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|flags, 0o600)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { f.Close() })
	if err := f.Truncate(size); err != nil {
		t.Fatalf("truncate: %v", err)
	}
	return f, path
}

// directDir returns a directory on a filesystem with real O_DIRECT:
// t.TempDir(), or a temporary directory under /var/tmp when TMPDIR is a
// tmpfs (which accepts O_DIRECT but does buffered I/O).
func directDir(t testing.TB) string {
	t.Helper()
	const tmpfsMagic = 0x01021994
	isTmpfs := func(dir string) bool {
		var st unix.Statfs_t
		return unix.Statfs(dir, &st) == nil && st.Type == tmpfsMagic
	}
	dir := t.TempDir()
	if !isTmpfs(dir) {
		return dir
	}
	dir, err := os.MkdirTemp("/var/tmp", "uring-test-")
	if err != nil || isTmpfs(dir) {
		skipOrFail(t, "no directory outside tmpfs for O_DIRECT (TMPDIR and /var/tmp are tmpfs or unusable: %v)", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// waitOne waits for one completion, consumes it and returns a copy.
func waitOne(t testing.TB, r *Ring) CQE {
	t.Helper()
	c, err := r.WaitCQE(0)
	if err != nil {
		t.Fatalf("WaitCQE: %v", err)
	}
	cp := *c
	r.CQESeen()
	return cp
}

// fill writes a recognizable pattern into b.
func fill(b []byte, seed byte) {
	for i := range b {
		b[i] = seed + byte(i*7)
	}
}

package uring

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// waitLimit bounds every wait of waitOne. No test operation takes more than
// milliseconds; a completion that has not come by then never will, and a
// test that waits without limit only ends at go test's -timeout, with no
// word about what the kernel was doing.
const waitLimit = 2 * time.Minute

// waitOne waits for one completion (at most waitLimit), consumes it and
// returns a copy. On expiry it fails with the kernel stacks of the test
// process's threads, io-wq workers included, so a hang says where it hangs.
func waitOne(t testing.TB, r *Ring) CQE {
	t.Helper()
	c, err := r.WaitCQE(waitLimit)
	if errors.Is(err, ErrTimeout) {
		t.Fatalf("WaitCQE: no completion in %v; kernel stacks of this process's threads:\n%s", waitLimit, taskStacks())
	}
	if err != nil {
		t.Fatalf("WaitCQE: %v", err)
	}
	cp := *c
	r.CQESeen()
	return cp
}

// taskStacks returns the name, state and kernel stack of every thread of
// this process, then of every other task in uninterruptible sleep (D), such
// as a loop device's kworker (reading a stack needs root; without it the
// stacks are left out).
func taskStacks() string {
	var b strings.Builder
	own, _ := filepath.Glob("/proc/self/task/*")
	all, _ := filepath.Glob("/proc/[0-9]*/task/*")
	self := fmt.Sprintf("/proc/%d/", os.Getpid())
	for _, dir := range append(own, all...) {
		stat, _ := os.ReadFile(dir + "/stat")
		state := "?"
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
			state = string(stat[i+2])
		}
		if !strings.HasPrefix(dir, "/proc/self/") && (state != "D" || strings.HasPrefix(dir, self)) {
			continue
		}
		comm, _ := os.ReadFile(dir + "/comm")
		fmt.Fprintf(&b, "%s %s %s\n", dir, strings.TrimSpace(string(comm)), state)
		if stack, err := os.ReadFile(dir + "/stack"); err == nil {
			b.Write(stack)
		}
	}
	return b.String()
}

// fill writes a recognizable pattern into b.
func fill(b []byte, seed byte) {
	for i := range b {
		b[i] = seed + byte(i*7)
	}
}

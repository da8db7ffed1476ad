package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sys/unix"
)

// mountTmpfs mounts a tmpfs of size bytes on a fresh directory (root
// only); Cleanup unmounts it, also when the test fails.
func mountTmpfs(t *testing.T, size int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		skipOrFail(t, "mounting a small tmpfs needs root")
	}
	dir := filepath.Join(t.TempDir(), "fs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, fmt.Sprintf("size=%d", size)); err != nil {
		skipOrFail(t, "mount tmpfs on %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fillFS writes a file in dir until the filesystem answers ENOSPC and
// returns the bytes written.
func fillFS(t *testing.T, dir string) int64 {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := bytes.Repeat([]byte{0xfe}, 1<<16)
	var n int64
	for {
		w, err := f.Write(buf)
		n += int64(w)
		if errors.Is(err, syscall.ENOSPC) {
			return n
		}
		if err != nil {
			t.Fatalf("fill %s: %v", dir, err)
		}
	}
}

// TestColdFilesystemFull: the emulated store is a file on a 48 MiB tmpfs
// that another writer fills to ENOSPC while the sidecar runs
// (writethrough). The store reserved its blocks at Open (E14), so SETs
// keep succeeding and every key reads back; a clean stop exits 0, saying
// that the checkpoint could not be written; the next start (the
// filesystem still full) recovers by scanning and every acknowledged key
// reads its value.
func TestColdFilesystemFull(t *testing.T) {
	dir := mountTmpfs(t, 48<<20)
	sock := shortSocket(t)
	args := "-metrics off -log-level warn -hot-bytes 4194304 -warm-bytes 8388608"
	env := []string{"TIERCACHE_WARM_NODE=unbound", "TIERCACHE_WARM_SEGMENT=1MiB", "TIERCACHE_COLD_DATA_DIR=" + dir, "TIERCACHE_COLD_CAPACITY=32MiB",
		"TIERCACHE_DURABILITY=writethrough", "TIERCACHE_HOT_MAX_VALUE=16KiB"}
	p := startServe(t, sock, args, env...)
	rc := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, PoolSize: 2, MaxRetries: -1})
	defer rc.Close()
	ctx := context.Background()
	val := func(i, size int) []byte {
		return bytes.Repeat([]byte(fmt.Sprintf("%07d|", i)), size/8+1)[:size]
	}
	size := func(i int) int { return 1024 << (i % 6) } // 1 KiB .. 32 KiB
	set := func(from, to int) {
		for i := from; i < to; i++ {
			if err := rc.Set(ctx, fmt.Sprintf("k%d", i), val(i, size(i)), 0).Err(); err != nil {
				t.Fatalf("SET k%d: %v", i, err)
			}
		}
	}
	check := func(n int, when string) {
		for i := 0; i < n; i++ {
			v, err := rc.Get(ctx, fmt.Sprintf("k%d", i)).Bytes()
			if err != nil || !bytes.Equal(v, val(i, size(i))) {
				t.Fatalf("%s: GET k%d: %d bytes, %v; want the value SET", when, i, len(v), err)
			}
		}
	}
	set(0, 300)
	filled := fillFS(t, dir)
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	t.Logf("filled the filesystem with %d MiB more; %d bytes free", filled>>20, st.Bavail*uint64(st.Bsize))
	set(300, 600)
	check(600, "filesystem full")
	rc.Close()
	rcode := p.stop(t)
	stopLog := p.output()
	t.Logf("clean stop on the full filesystem: exit %d", rcode)
	if rcode != 0 || !strings.Contains(stopLog, "no space left on device") {
		t.Errorf("clean stop on a full filesystem: exit %d, want 0 and a warning naming ENOSPC:\n%s", rcode, stopLog)
	}

	p = startServe(t, sock, args, env...)
	rc = redis.NewClient(&redis.Options{Network: "unix", Addr: sock, PoolSize: 2, MaxRetries: -1})
	check(600, "restart on the full filesystem")
	if rcode := p.stop(t); rcode != 0 {
		t.Errorf("second clean stop: exit %d", rcode)
	}
}

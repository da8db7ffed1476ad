package sidecar

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// setSysctl writes v to /proc/sys/kernel/name; Cleanup puts the old value
// back (the guest runs other tests after this one).
func setSysctl(t *testing.T, name, v string) {
	t.Helper()
	path := "/proc/sys/kernel/" + name
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v (the guest kernel, 6.12, has it since 6.6)", path, err)
	}
	if err := os.WriteFile(path, []byte(v), 0); err != nil {
		t.Fatalf("write %s to %s: %v", v, path, err)
	}
	t.Cleanup(func() { os.WriteFile(path, bytes.TrimSpace(old), 0) })
}

// uringConfig is a sidecar whose emulated cold store is a file in dir
// (durability writethrough), or with no cold tier at all (backend "none",
// durability cache).
func uringConfig(dir, socket, backend string) string {
	if backend == "none" {
		return smallConfig(socket, "backend: none", "cache", "off")
	}
	return smallConfig(socket, fmt.Sprintf(`backend: %s
  data_dir: %s
  capacity: 64MiB`, backend, filepath.Join(dir, "data")), "writethrough", "off")
}

// refused runs `tiercache serve -config cfg` (as cred when not nil) and
// expects it to exit by itself within a minute: it returns the exit code
// and the output.
func refused(t *testing.T, cfg string, cred *syscall.Credential) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(t), "serve", "-config", cfg)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("tiercache kept running for a minute (it should refuse to start):\n%s", out)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), string(out)
	}
	return 0, string(out)
}

// sharedDir makes a directory that the unprivileged user can use too.
func sharedDir(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join("/tmp", name)
	os.RemoveAll(dir)
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o777); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, filepath.Join(dir, "data")} {
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// TestSidecarIOURingDisabled: kernel.io_uring_disabled for real (Linux
// 6.6+; the host test TestServeWithoutIOUring can only fake it with
// seccomp, since the sysctl is global):
//
//   - set to 2 while the sidecar runs: the rings it made at start keep
//     working, so SETs (writethrough, durable in cold) and cold GETs go on;
//   - at 2, a sidecar with a cold tier refuses to start (exit 1) with one
//     line naming the sysctl and how to run without io_uring; with
//     cold.backend none it starts and serves hot and warm, INFO showing
//     no cold backend and cold_writable 0;
//   - at 1, an unprivileged sidecar (nobody) is refused with the sentence
//     for 1; once kernel.io_uring_group is its group it starts, and so does
//     root's;
//   - back at 0, a restart reads every key the last run (root's, at 1)
//     wrote.
func TestSidecarIOURingDisabled(t *testing.T) {
	requireGuest(t)
	dir := sharedDir(t, "tc-uring")
	socket := filepath.Join(dir, "s.sock")
	cfg := filepath.Join(dir, "tiercache.yaml")
	if err := os.WriteFile(cfg, []byte(uringConfig(dir, socket, "emulated")), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const size = 64 << 10 // above hot.max_value: warm, and cold
	key := func(i int) string { return fmt.Sprintf("uring:%d", i) }
	setSysctl(t, "io_uring_disabled", "0")

	// Disabled while running: the rings made at start keep working.
	p := start(t, cfg, socket)
	rc := p.client()
	for i := 0; i < 100; i++ {
		if err := rc.Set(ctx, key(i), value(i, size), 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	written := infoInt(t, info(t, rc, "tiers"), "cold_bytes_written")
	setSysctl(t, "io_uring_disabled", "2")
	for i := 100; i < 200; i++ {
		if err := rc.Set(ctx, key(i), value(i, size), 0).Err(); err != nil {
			t.Fatalf("io_uring_disabled=2 set while running: SET %s: %v (its rings were made before)", key(i), err)
		}
	}
	for i := 0; i < 200; i++ {
		if v, err := rc.Get(ctx, key(i)).Bytes(); err != nil || !bytes.Equal(v, value(i, size)) {
			t.Fatalf("io_uring_disabled=2 set while running: GET %s: %d bytes, %v", key(i), len(v), err)
		}
	}
	tiers := info(t, rc, "tiers")
	grew := infoInt(t, tiers, "cold_bytes_written") - written
	t.Logf("io_uring_disabled=2 set while running: 100 writethrough SETs (%d bytes written to cold) and 200 GETs answered; cold_bytes_read %s, cold_writable %s",
		grew, tiers["cold_bytes_read"], tiers["cold_writable"])
	if tiers["cold_writable"] != "1" || grew < 100*size {
		t.Errorf("io_uring_disabled=2 set while running: cold_writable %q, %d bytes written to cold by 100 SETs of %d; want 1 and the values written",
			tiers["cold_writable"], grew, size)
	}
	rc.Close()
	p.stop()

	// Disabled at start: refused, with the reason and the way out.
	code, out := refused(t, cfg, nil)
	t.Logf("io_uring_disabled=2: exit %d: %s", code, strings.TrimSpace(out))
	if code != 1 || !strings.Contains(out, "kernel.io_uring_disabled=2") || !strings.Contains(out, "cold.backend: none") {
		t.Errorf("io_uring_disabled=2: exit %d, %q; want exit 1 naming kernel.io_uring_disabled=2 and cold.backend: none", code, out)
	}
	none := filepath.Join(dir, "none.yaml")
	if err := os.WriteFile(none, []byte(uringConfig(dir, socket, "none")), 0o644); err != nil {
		t.Fatal(err)
	}
	p = start(t, none, socket)
	rc = p.client()
	for i := 0; i < 50; i++ {
		if err := rc.Set(ctx, key(i), value(i, 1024), 0).Err(); err != nil {
			t.Fatalf("io_uring_disabled=2, cold none: SET: %v", err)
		}
	}
	for i := 0; i < 50; i++ {
		if v, err := rc.Get(ctx, key(i)).Bytes(); err != nil || !bytes.Equal(v, value(i, 1024)) {
			t.Fatalf("io_uring_disabled=2, cold none: GET %s: %d bytes, %v", key(i), len(v), err)
		}
	}
	tiers = info(t, rc, "tiers")
	if tiers["cold_backend"] != "" || tiers["cold_writable"] != "0" {
		t.Errorf("io_uring_disabled=2, cold none: INFO cold_backend %q, cold_writable %q; want none and 0", tiers["cold_backend"], tiers["cold_writable"])
	}
	rc.Close()
	p.stop()

	// 1: only CAP_SYS_ADMIN and kernel.io_uring_group.
	setSysctl(t, "io_uring_disabled", "1")
	var lim unix.Rlimit // registered buffers count against RLIMIT_MEMLOCK without CAP_IPC_LOCK
	if err := unix.Getrlimit(unix.RLIMIT_MEMLOCK, &lim); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setrlimit(unix.RLIMIT_MEMLOCK, &unix.Rlimit{Cur: unix.RLIM_INFINITY, Max: unix.RLIM_INFINITY}); err != nil {
		t.Fatal(err)
	}
	defer unix.Setrlimit(unix.RLIMIT_MEMLOCK, &lim)
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534}
	os.RemoveAll(filepath.Join(dir, "data"))
	os.Mkdir(filepath.Join(dir, "data"), 0o777)
	os.Chmod(filepath.Join(dir, "data"), 0o777)
	code, out = refused(t, cfg, nobody)
	t.Logf("io_uring_disabled=1, uid 65534: exit %d: %s", code, strings.TrimSpace(out))
	if code != 1 || !strings.Contains(out, "kernel.io_uring_disabled=1") {
		t.Errorf("io_uring_disabled=1, unprivileged: exit %d, %q; want exit 1 naming kernel.io_uring_disabled=1", code, out)
	}
	setSysctl(t, "io_uring_group", "65534")
	p = startAs(t, cfg, socket, nobody)
	rc = p.client()
	if err := rc.Set(ctx, "member", value(1, size), 0).Err(); err != nil {
		t.Fatalf("io_uring_disabled=1, a member of io_uring_group: SET: %v", err)
	}
	rc.Close()
	p.stop()
	os.RemoveAll(filepath.Join(dir, "data"))
	setSysctl(t, "io_uring_group", "-1")
	p = start(t, cfg, socket) // root: CAP_SYS_ADMIN
	rc = p.client()
	for i := 0; i < 20; i++ {
		if err := rc.Set(ctx, key(i), value(i, size), 0).Err(); err != nil {
			t.Fatalf("io_uring_disabled=1, root: SET: %v", err)
		}
	}
	rc.Close()
	p.stop()

	// Enabled again: a restart reads every key from the store.
	setSysctl(t, "io_uring_disabled", "0")
	p = start(t, cfg, socket)
	rc = p.client()
	defer rc.Close()
	for i := 0; i < 20; i++ {
		if v, err := rc.Get(ctx, key(i)).Bytes(); err != nil || !bytes.Equal(v, value(i, size)) {
			t.Fatalf("io_uring_disabled=0 again, restarted: GET %s: %d bytes, %v", key(i), len(v), err)
		}
	}
	p.stop()
}

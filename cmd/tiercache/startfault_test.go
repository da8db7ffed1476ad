package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"golang.org/x/sys/unix"

	"github.com/tiercache/tiercache/numa"
)

// noURingEnv makes the serving child (TestMain, serveEnv) refuse
// io_uring_setup to itself before it starts, as kernel.io_uring_disabled=2
// would.
const noURingEnv = "TIERCACHE_TEST_NO_IO_URING"

// refuseIOUringSetup installs a seccomp filter on every thread of this
// process (and what it executes) that fails io_uring_setup with EPERM.
// That is what sysctl kernel.io_uring_disabled=2 does to every process
// (io_uring/io_uring.c io_uring_setup: io_uring_allowed() returns -EPERM;
// Documentation/admin-guide/sysctl/kernel.rst): only the setup is refused,
// io_uring_enter and io_uring_register on an existing ring still work,
// and the sidecar makes its rings at start. The sysctl is global and
// other processes on the host use io_uring, so tests never change it.
// Classic BPF over struct seccomp_data (nr at offset 0,
// Documentation/userspace-api/seccomp_filter.rst).
func refuseIOUringSetup() error {
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 0, Jf: 1, K: unix.SYS_IO_URING_SETUP},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC,
		uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if e != 0 {
		return e
	}
	return nil
}

// TestServeWithoutIOUring: where io_uring_setup is refused with EPERM
// (kernel.io_uring_disabled=2, or a seccomp profile), serve with the
// default emulated cold tier refuses to start, exit 1, with one error that
// says io_uring was refused and how to run without it; with -cold none it
// starts and serves from the hot and warm tiers.
func TestServeWithoutIOUring(t *testing.T) {
	sock := shortSocket(t)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), noURingEnv+"=1", "TIERCACHE_WARM_NODE=unbound",
		serveEnv+"=serve -socket "+sock+" -metrics off -hot-bytes 8388608 -warm-bytes 8388608 -data "+t.TempDir())
	out, err := cmd.CombinedOutput()
	if strings.Contains(string(out), "SECCOMP-FAILED") {
		skipOrFail(t, "cannot install a seccomp filter here: %s", out)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("serve without io_uring: %v, want exit 1:\n%s", err, out)
	}
	for _, want := range []string{"io_uring_setup was refused (EPERM)", "cold.backend: none"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("serve without io_uring says %q, without %q", out, want)
		}
	}
	t.Logf("refused: %s", strings.TrimSpace(string(out)))

	p := startServe(t, sock, "-metrics off -cold none -hot-bytes 8388608 -warm-bytes 8388608", noURingEnv+"=1", "TIERCACHE_WARM_NODE=unbound")
	rc := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, PoolSize: 1})
	defer rc.Close()
	ctx := context.Background()
	if err := rc.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := rc.Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Fatalf("GET k without io_uring, cold none: %q %v", v, err)
	}
	if rcode := p.stop(t); rcode != 0 {
		t.Fatalf("stop: exit %d", rcode)
	}
}

// TestMissingWarmNode: warm.node names a node this machine does not have.
// With warm.fallback strict the sidecar refuses to start and the error
// names the node; with preferred (the default) it starts, the warm arena
// runs unbound, INFO warm_numa_node is -1 and a warning says why.
func TestMissingWarmNode(t *testing.T) {
	if _, err := os.Stat("/sys/devices/system/node/node63"); err == nil {
		t.Skip("this machine has a NUMA node 63")
	}
	cfg := testConfig(t, t.TempDir())
	cfg.Cold.Backend = "none"
	cfg.Warm.Node, cfg.Warm.Fallback = "63", "strict"
	if sc, err := startSidecar(cfg, zap.NewNop()); err == nil {
		sc.Close()
		t.Fatal("warm.node 63, fallback strict: the sidecar started")
	} else if !errors.Is(err, numa.ErrNoSuchNode) || !strings.Contains(err.Error(), "63") {
		t.Fatalf("warm.node 63, fallback strict: %v; want ErrNoSuchNode naming node 63", err)
	} else {
		t.Logf("strict: %v", err)
	}

	cfg = testConfig(t, t.TempDir())
	cfg.Cold.Backend = "none"
	cfg.Warm.Node, cfg.Warm.Fallback = "63", "preferred"
	core, logs := observer.New(zapcore.WarnLevel)
	sc, err := startSidecar(cfg, zap.New(core))
	if err != nil {
		t.Fatalf("warm.node 63, fallback preferred: %v", err)
	}
	defer sc.Close()
	if n := sc.cache.Stats().WarmNode; n != -1 {
		t.Errorf("warm node %d, want -1 (unbound)", n)
	}
	rc := newClient(t, sc, 2)
	tiers, err := rc.Info(context.Background(), "tiers").Result()
	if err != nil || !strings.Contains(tiers, "warm_numa_node:-1") {
		t.Errorf("INFO tiers: %v\n%s", err, tiers)
	}
	warned := false
	for _, e := range logs.All() {
		for _, f := range e.Context {
			if fe, ok := f.Interface.(error); ok && errors.Is(fe, numa.ErrNoSuchNode) {
				warned = true
				t.Logf("preferred: warning %q: %v", e.Message, fe)
			}
		}
	}
	if !warned {
		t.Errorf("no warning names the missing node: %v", logs.All())
	}
}

// TestColdIndexNode (C10): cold.index_node names a node this machine does
// not have: the sidecar refuses to start, the error naming the node and
// the setting; set to node 0 it starts, the startup line and INFO tiers
// say where the index is (placement -1 until a table is off the heap);
// a value that is no node is a config error.
func TestColdIndexNode(t *testing.T) {
	if _, err := os.Stat("/sys/devices/system/node/node63"); err == nil {
		t.Skip("this machine has a NUMA node 63")
	}
	cfg := testConfig(t, t.TempDir())
	cfg.Cold.IndexNode = "63"
	if sc, err := startSidecar(cfg, zap.NewNop()); err == nil {
		sc.Close()
		t.Fatal("cold.index_node 63: the sidecar started")
	} else if !errors.Is(err, numa.ErrNoSuchNode) || !strings.Contains(err.Error(), "cold.index_node") || !strings.Contains(err.Error(), "63") {
		t.Fatalf("cold.index_node 63: %v; want ErrNoSuchNode naming cold.index_node and node 63", err)
	} else {
		t.Logf("refused: %v", err)
	}

	cfg = testConfig(t, t.TempDir())
	cfg.Cold.IndexNode = "-3"
	if _, err := cfg.build(zap.NewNop()); err == nil || !strings.Contains(err.Error(), "cold.index_node") {
		t.Fatalf("cold.index_node -3: build = %v, want an error naming cold.index_node", err)
	}

	cfg.Cold.IndexNode = "0"
	sc, err := startSidecar(cfg, zap.NewNop())
	if err != nil {
		t.Fatalf("cold.index_node 0: %v", err)
	}
	defer sc.Close()
	if d := sc.describe(); !strings.Contains(d, "cold index on NUMA node 0") {
		t.Errorf("startup line lacks the index node: %s", d)
	}
	rc := newClient(t, sc, 2)
	tiers, err := rc.Info(context.Background(), "tiers").Result()
	if err != nil || !strings.Contains(tiers, "cold_index_numa_node:0\r\n") || !strings.Contains(tiers, "cold_index_placement:-1.0000") ||
		!strings.Contains(tiers, "cold_index_bound_bytes:0\r\n") || !strings.Contains(tiers, "cold_index_bytes:") {
		t.Errorf("INFO tiers: %v\n%s", err, tiers)
	}
}

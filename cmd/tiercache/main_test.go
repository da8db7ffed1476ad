package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/uring"
)

func TestRunVersionAndUnknown(t *testing.T) {
	var out, errOut bytes.Buffer
	if rc := run([]string{"version"}, &out, &errOut); rc != 0 || !strings.HasPrefix(out.String(), "tiercache ") {
		t.Fatalf("version: rc %d, %q", rc, out.String())
	}
	if rc := run([]string{"bogus"}, &out, &errOut); rc != 2 || !strings.Contains(errOut.String(), `unknown subcommand "bogus"`) {
		t.Fatalf("bogus: rc %d, %q", rc, errOut.String())
	}
}

func TestRunNuma(t *testing.T) {
	if _, err := os.Stat("/sys/devices/system/node"); err != nil {
		skipOrFail(t, "no NUMA sysfs here: %v", err)
	}
	var out, errOut bytes.Buffer
	if rc := run([]string{"numa"}, &out, &errOut); rc != 0 {
		t.Fatalf("numa: rc %d: %s", rc, errOut.String())
	}
	if !strings.Contains(out.String(), "warm tier node:") || !strings.Contains(out.String(), "warm tier config:") {
		t.Fatalf("numa output lacks the warm tier line:\n%s", out.String())
	}
}

// TestServeRefusesInvalidConfig: serve with a bad config exits 1 with one
// message naming every problem, before opening anything.
func TestServeRefusesInvalidConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "bad.yaml")
	os.WriteFile(cfg, []byte("server:\n  socket_mode: rw\nhot:\n  bytes: 10\ndurability: sometimes\n"), 0o600)
	var out, errOut bytes.Buffer
	rc := run([]string{"serve", "-config", cfg, "-data", filepath.Join(dir, "data")}, &out, &errOut)
	if rc != 1 {
		t.Fatalf("rc %d", rc)
	}
	msg := errOut.String()
	for _, want := range []string{"invalid configuration", "socket_mode", "HotBytes", "Durability"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); !os.IsNotExist(err) {
		t.Errorf("data dir created for an invalid config")
	}
}

func TestSecondSignalForcesExit(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	block := make(chan struct{})
	defer close(block)
	sigs <- syscall.SIGTERM
	sigs <- syscall.SIGINT
	if rc := awaitShutdown(sigs, func() error { <-block; return nil }, zap.NewNop()); rc != 2 {
		t.Fatalf("rc %d after a second signal, want 2", rc)
	}
	sigs <- syscall.SIGTERM
	if rc := awaitShutdown(sigs, func() error { return nil }, zap.NewNop()); rc != 0 {
		t.Fatalf("rc %d after a clean shutdown, want 0", rc)
	}
}

func TestRunNumaUnusableNode(t *testing.T) {
	if _, err := os.Stat("/sys/devices/system/node"); err != nil {
		skipOrFail(t, "no NUMA sysfs here: %v", err)
	}
	var out, errOut bytes.Buffer
	env := "TIERCACHE_WARM_FALLBACK"
	t.Setenv(env, "strict")
	if rc := run([]string{"numa", "-warm-node", "63"}, &out, &errOut); rc != 1 || !strings.Contains(out.String(), "UNUSABLE") {
		t.Fatalf("numa with node 63, strict: rc %d\n%s%s", rc, out.String(), errOut.String())
	}
}

// TestRunNumaColdIndexNode: `tiercache numa` says where cold.index_node
// puts the cold index, and exits 1 for a node serve would refuse (C10).
func TestRunNumaColdIndexNode(t *testing.T) {
	if _, err := os.Stat("/sys/devices/system/node"); err != nil {
		skipOrFail(t, "no NUMA sysfs here: %v", err)
	}
	for _, tc := range []struct {
		node, want string
		rc         int
	}{
		{"0", "cold index config: node 0: NUMA node 0", 0},
		{"unbound", "cold index config: node unbound: unbound", 0},
		{"63", "tiercache serve would refuse to start (cold.index_node)", 1},
	} {
		t.Setenv("TIERCACHE_COLD_INDEX_NODE", tc.node)
		var out, errOut bytes.Buffer
		if rc := run([]string{"numa"}, &out, &errOut); rc != tc.rc || !strings.Contains(out.String(), tc.want) {
			t.Errorf("numa with cold.index_node %s: rc %d, want %d and %q:\n%s%s", tc.node, rc, tc.rc, tc.want, out.String(), errOut.String())
		}
	}
	t.Setenv("TIERCACHE_COLD_INDEX_NODE", "63")
	t.Setenv("TIERCACHE_COLD_BACKEND", "none")
	var out, errOut bytes.Buffer
	if rc := run([]string{"numa"}, &out, &errOut); rc != 0 || !strings.Contains(out.String(), "cold index: none") {
		t.Errorf("numa without a cold tier: rc %d:\n%s%s", rc, out.String(), errOut.String())
	}
}

// TestOpenCacheErrorHint: a cache that cannot open because io_uring is
// unavailable (seccomp, kernel.io_uring_disabled; uring's own tests make
// the real error) gets the way to run without the cold tier; other errors
// are only wrapped.
func TestOpenCacheErrorHint(t *testing.T) {
	unavailable := fmt.Errorf("tier: open cold tier: emu: io_uring for x: %w", uring.ErrUnavailable)
	err := openCacheError(unavailable)
	if !errors.Is(err, uring.ErrUnavailable) || !strings.Contains(err.Error(), "cold.backend: none") {
		t.Errorf("io_uring unavailable: %v", err)
	}
	full := fmt.Errorf("tier: open cold tier: emu: reserve 1073745920 bytes for data/cold.kv: %w", syscall.ENOSPC)
	if err := openCacheError(full); !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "cold.capacity") {
		t.Errorf("no space for the cold store: %v", err)
	}
	other := errors.New("tier: open cold tier: disk on fire")
	if err := openCacheError(other); !errors.Is(err, other) || strings.Contains(err.Error(), "cold.backend") {
		t.Errorf("other error: %v", err)
	}
}

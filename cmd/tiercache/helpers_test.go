package main

import (
	"os"
	"testing"

	"go.uber.org/zap"
)

// skipOrFail skips with a reason, or fails when TIERCACHE_NO_SKIP=1 (CI).
func skipOrFail(t testing.TB, format string, a ...any) {
	t.Helper()
	if os.Getenv("TIERCACHE_NO_SKIP") == "1" {
		t.Fatalf(format, a...)
	}
	t.Skipf(format, a...)
}

// shortSocket returns a fresh socket path short enough for sun_path.
func shortSocket(t testing.TB) string {
	t.Helper()
	f, err := os.CreateTemp("/tmp", "tc-*.sock")
	if err != nil {
		t.Fatal(err)
	}
	p := f.Name()
	f.Close()
	os.Remove(p)
	t.Cleanup(func() { os.Remove(p) })
	return p
}

// testConfig is a small real configuration: hot + warm + emulated cold in
// a temporary directory, metrics on an ephemeral loopback port.
func testConfig(t testing.TB, dataDir string) *Config {
	c := defaultConfig()
	c.Server.Socket = shortSocket(t)
	c.Hot.Bytes = 32 << 20
	c.Warm.Bytes = 32 << 20
	c.Cold.DataDir = dataDir
	c.Cold.Capacity = 1 << 30
	c.Metrics.Listen = "127.0.0.1:0"
	// Tests run several sidecars in one process beside their own data:
	// the process-wide Go memory limit is for a sidecar of its own
	// (TestPeakRSSWithinBudget, TestMemLimiterFollowsBudget).
	c.Server.GoMemoryLimit = "off"
	return &c
}

// startTestSidecar runs the real sidecar (tier.Open + server) in process.
func startTestSidecar(t testing.TB, cfg *Config) *sidecar {
	t.Helper()
	sc, err := startSidecar(cfg, zap.NewNop())
	if err != nil {
		t.Fatalf("start sidecar: %v", err)
	}
	t.Cleanup(func() {
		if err := sc.Close(); err != nil {
			t.Errorf("close sidecar: %v", err)
		}
	})
	return sc
}

func nopLogger() *zap.Logger { return zap.NewNop() }

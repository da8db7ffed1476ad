package numa

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// skipOrFail skips with reason, or fails when TIERCACHE_NO_SKIP=1 (CI, root).
func skipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("TIERCACHE_NO_SKIP") == "1" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// testNode is the node the placement tests bind to: TIERCACHE_NUMA_NODE
// (the QEMU guest sets 1, its CPU-less node), else 0.
func testNode(t testing.TB) int {
	t.Helper()
	s := os.Getenv("TIERCACHE_NUMA_NODE")
	if s == "" {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		t.Fatalf("TIERCACHE_NUMA_NODE=%q is not a node id", s)
	}
	return n
}

// writeFile writes content to root/rel, creating directories.
func writeFile(t testing.TB, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fakeCXLBox writes a sysfs tree for a box with node 0 (CPUs 0-3, 8 GiB,
// DRAM tier 4), node 1 (CPU-less 4 GiB, tier 22: CXL) and node 2 (CPUs
// 4-5, no memory). tierAttr is "nodelist" (new kernels) or "nodes" (old).
func fakeCXLBox(t testing.TB, tierAttr string) string {
	t.Helper()
	root := t.TempDir()
	n := "devices/system/node/"
	writeFile(t, root, n+"online", "0-2\n")
	writeFile(t, root, n+"possible", "0-3\n")
	writeFile(t, root, n+"has_cpu", "0,2\n")
	writeFile(t, root, n+"has_memory", "0-1\n")
	writeFile(t, root, n+"has_normal_memory", "0\n")
	writeFile(t, root, n+"node0/cpulist", "0-3\n")
	writeFile(t, root, n+"node1/cpulist", "\n")
	writeFile(t, root, n+"node2/cpulist", "4-5\n")
	writeFile(t, root, n+"node0/distance", "10 20 12\n")
	writeFile(t, root, n+"node1/distance", "20 10 24\n")
	writeFile(t, root, n+"node2/distance", "12 24 10\n")
	writeFile(t, root, n+"node0/meminfo", "Node 0 MemTotal:        8388608 kB\nNode 0 MemFree:         4194304 kB\nNode 0 MemUsed:         4194304 kB\n")
	writeFile(t, root, n+"node1/meminfo", "Node 1 MemTotal:        4194304 kB\nNode 1 MemFree:         4194000 kB\n")
	writeFile(t, root, n+"node2/meminfo", "Node 2 MemTotal:              0 kB\nNode 2 MemFree:               0 kB\n")
	mt := "devices/virtual/memory_tiering/"
	writeFile(t, root, mt+"memory_tier4/"+tierAttr, "0,2\n")
	writeFile(t, root, mt+"memory_tier22/"+tierAttr, "1\n")
	return root
}

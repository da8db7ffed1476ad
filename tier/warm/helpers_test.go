package warm

import (
	"errors"
	"os"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/tiercache/tiercache/numa"
)

// skipOrFail skips with reason, or fails when TIERCACHE_NO_SKIP=1 (CI, root).
func skipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("TIERCACHE_NO_SKIP") == "1" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// testNode is TIERCACHE_NUMA_NODE (the QEMU guest sets its CPU-less node), else 0.
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

// fakeClock is a settable unix-ns clock.
type fakeClock struct{ ns atomic.Int64 }

func (f *fakeClock) now() int64          { return f.ns.Load() }
func (f *fakeClock) advance(d int64)     { f.ns.Add(d) }
func newFakeClock() *fakeClock           { f := &fakeClock{}; f.ns.Store(1_000_000_000); return f }
func arenaOn(node int) numa.ArenaOptions { return numa.ArenaOptions{Node: node} }

func newTestCache(t testing.TB, o Options) *Cache {
	t.Helper()
	if o.Arena.Node == 0 && o.Arena.Nodes == nil {
		o.Arena = arenaOn(testNode(t))
	}
	c, err := New(o)
	if errors.Is(err, numa.ErrPermission) {
		skipOrFail(t, "binding the warm arena needs CAP_SYS_NICE here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

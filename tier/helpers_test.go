package tier

import (
	"os"
	"sync/atomic"
	"testing"
)

// skipOrFail skips with reason, or fails when TIERCACHE_NO_SKIP=1 (CI).
func skipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("TIERCACHE_NO_SKIP") == "1" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// fakeClock is a settable clock in unix ns.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(1_700_000_000_000_000_000)
	return c
}
func (c *fakeClock) Now() int64      { return c.ns.Load() }
func (c *fakeClock) Advance(d int64) { c.ns.Add(d) }

// persist is Persist for tests that expect no error.
func persist(c *Cache, key []byte) bool { return c.persistForTest(key) }

func (c *Cache) persistForTest(key []byte) bool {
	ok, err := c.Persist(key)
	return ok && err == nil
}

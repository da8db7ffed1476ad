package tier

import (
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tiercache/tiercache/flusher"
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

// memCold is an in-memory Cold used only by unit tests of the flusher
// interplay; the behaviour tests use the real nvmekv store (cold_test.go).
type memCold struct {
	mu    sync.Mutex
	m     map[string]memRec
	fail  atomic.Bool
	puts  atomic.Uint64
	batch atomic.Uint64
	pre   bool
}

type memRec struct {
	v []byte
	m Meta
}

var errInjected = errors.New("memcold: injected device error")

func newMemCold() *memCold { return &memCold{m: map[string]memRec{}} }

func (c *memCold) PutMany(ctx context.Context, items []*flusher.Item) error {
	c.batch.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	var first error
	for _, it := range items {
		if c.fail.Load() {
			it.Err = errInjected
			first = errInjected
			continue
		}
		c.m[string(it.Key)] = memRec{v: append([]byte(nil), it.Value...), m: Meta{Expiry: it.Expiry, Version: it.Version}}
		c.puts.Add(1)
	}
	return first
}

func (c *memCold) Delete(ctx context.Context, key []byte) error {
	if c.fail.Load() {
		return errInjected
	}
	c.mu.Lock()
	delete(c.m, string(key))
	c.mu.Unlock()
	return nil
}

func (c *memCold) Get(ctx context.Context, dst, key []byte) ([]byte, Meta, bool, error) {
	if c.fail.Load() {
		return dst, Meta{}, false, errInjected
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.m[string(key)]
	if !ok {
		return dst, Meta{}, false, nil
	}
	return append(dst, r.v...), r.m, true, nil
}

func (c *memCold) GetMany(ctx context.Context, keys [][]byte) []ColdItem {
	c.batch.Add(1)
	out := make([]ColdItem, len(keys))
	for i, k := range keys {
		v, m, ok, err := c.Get(ctx, nil, k)
		out[i] = ColdItem{Value: v, Meta: m, Found: ok, Err: err}
	}
	return out
}

func (c *memCold) Stats() ColdStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return ColdStats{Backend: "mem", Items: int64(len(c.m)), PreExisting: c.pre}
}

func (c *memCold) Close() error { return nil }

package tier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tiercache/tiercache/backend"
)

// armedCold fails the cold reads it is armed for (an EIO from the device,
// as the cache sees it: a cold error, read as a miss).
type armedCold struct {
	Cold
	armed, fired atomic.Int32
}

var errInjected = errors.New("test: injected cold read error")

func (f *armedCold) fail() bool {
	if f.armed.Load() > 0 && f.armed.Add(-1) >= 0 {
		f.fired.Add(1)
		return true
	}
	return false
}

func (f *armedCold) Get(ctx context.Context, dst, key []byte, size int) ([]byte, backend.Meta, bool, error) {
	if f.fail() {
		return dst, backend.Meta{}, false, errInjected
	}
	return f.Cold.Get(ctx, dst, key, size)
}

func (f *armedCold) GetMany(ctx context.Context, keys [][]byte, sizes []int, dsts [][]byte) []backend.Result {
	res := f.Cold.GetMany(ctx, keys, sizes, dsts)
	for i := range res {
		if f.fail() {
			res[i] = backend.Result{Err: errInjected}
		}
	}
	return res
}

// TestModelLifecycle drives random interleavings of Set, Delete, Expire,
// Persist, Get, MGet, clock steps, evictions (a hot tier of 64 KiB and a
// warm tier of 512 KiB push most keys to cold), flusher completions (a
// settle step waits for every move to finish), cold read errors and
// restarts (drain durability: Close, then Open on the same store) against
// a map model, and checks every lifecycle invariant (L1-L5, T12) after
// every step. A read that an injected error hit may miss; any other
// difference fails.
func TestModelLifecycle(t *testing.T) {
	needURing(t)
	clk := newFakeClock()
	dir := t.TempDir()
	var fc *armedCold
	open := func() *Cache {
		o := smallOptions(clk)
		o.Durability = DurabilityDrain
		emuCold(&o, dir)
		wrapCold(&o, func(in Cold) Cold {
			fc = &armedCold{Cold: in}
			return fc
		})
		c, err := Open(o)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := open()
	t.Cleanup(func() { c.Close() })
	r := rand.New(rand.NewPCG(11, 17))
	model := map[string]modelVal{}
	key := func() []byte { return []byte(fmt.Sprintf("k%03d", r.IntN(200))) }
	live := modelLive(model, clk)
	// check compares a read with the model; faulted says an injected cold
	// error may explain a miss.
	check := func(step int, op string, k []byte, v []byte, ok, faulted bool) {
		t.Helper()
		m, exists := live(string(k))
		switch {
		case ok && !exists:
			t.Fatalf("step %d: %s(%s) found a value the model does not have", step, op, k)
		case ok && !bytes.Equal(v, m.v):
			t.Fatalf("step %d: %s(%s) = %d bytes, model %d", step, op, k, len(v), len(m.v))
		case !ok && exists && !faulted:
			t.Fatalf("step %d: %s(%s) missed, model has %d bytes (where %q)", step, op, k, len(m.v), c.Where(k))
		}
	}
	steps := steps(t, 6000)
	restarts, faults, fired := 0, 0, 0
	for step := 0; step < steps; step++ {
		checkEntries(t, c, step)
		k := key()
		ks := string(k)
		switch op := r.IntN(100); {
		case op < 30:
			modelSet(t, step, c, clk, model, r, k, 64<<10, 5)
		case op < 40:
			_, exists := live(ks)
			if n, _ := c.Delete(k); (n == 1) != exists {
				t.Fatalf("step %d: Delete(%s) = %d, model exists=%v", step, k, n, exists)
			}
			delete(model, ks)
		case op < 65:
			v, ok, err := c.Get(nil, k)
			if err != nil {
				t.Fatal(err)
			}
			check(step, "Get", k, v, ok, false)
		case op < 72:
			ks2 := [][]byte{key(), key(), key(), key(), key()}
			vs, err := c.MGet(ks2)
			if err != nil {
				t.Fatal(err)
			}
			for i, k2 := range ks2 {
				check(step, "MGet", k2, vs[i], vs[i] != nil, false)
			}
		case op < 78:
			modelExpire(t, step, c, clk, model, live, r, k, false)
		case op < 81:
			modelExpire(t, step, c, clk, model, live, r, k, true)
		case op < 86:
			clk.Advance(int64(time.Duration(r.IntN(2000)) * time.Millisecond))
		case op < 91:
			settle(t, c) // evictions demoted, flusher writes completed
		case op < 98:
			// A cold read error under a read of a key only cold holds.
			for try := 0; try < 8 && c.Where(k) != "cold"; try++ {
				k = key()
			}
			faults++
			fc.armed.Store(1)
			before := fc.fired.Load()
			v, ok, err := c.Get(nil, k)
			fc.armed.Store(0)
			if err != nil {
				t.Fatal(err)
			}
			hit := fc.fired.Load() != before
			if hit {
				fired++
			}
			check(step, "Get (cold error armed)", k, v, ok, hit)
		case op < 99:
			modelFlush(t, step, c, model, r)
		default:
			restarts++
			if err := c.Close(); err != nil {
				t.Fatalf("step %d: Close: %v", step, err)
			}
			c = open()
		}
	}
	checkEntries(t, c, steps)
	// Every key the model holds reads back, after one more restart.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c = open()
	for k := range model {
		v, ok, err := c.Get(nil, []byte(k))
		if err != nil {
			t.Fatal(err)
		}
		check(steps, "Get after the last restart", []byte(k), v, ok, false)
	}
	t.Logf("%d steps, %d restarts, %d cold errors armed (%d fired); stats %+v", steps, restarts, faults, fired, c.Stats())
	if fired == 0 {
		t.Errorf("no injected cold error hit a read")
	}
}

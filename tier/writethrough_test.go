package tier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tiercache/tiercache/flusher"
)

// crashCopy copies the emulated store's file in dir as it is now, while
// the cache that writes it is still open, into a new directory, and
// returns that directory: opening it is a restart after a SIGKILL at this
// instant (the file holds what the process wrote, and no checkpoint, so
// the store is recovered by scanning, E4/E5).
func crashCopy(t *testing.T, dir string) string {
	t.Helper()
	to := t.TempDir()
	src, err := os.Open(filepath.Join(dir, "cold.kv"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(filepath.Join(to, "cold.kv"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return to
}

// TestWriteThroughDeleteDurableBeforeReply: in writethrough mode every
// command that deletes a key (DEL, GETDEL, EXPIRE 0, GETEX with a past
// time, SET with a past expiry) returns only after the cold delete is
// durable: a SIGKILL right after the reply never brings the key back
// (T28). The kill is a copy of the store's file taken when the call
// returned.
func TestWriteThroughDeleteDurableBeforeReply(t *testing.T) {
	needURing(t)
	past := time.Unix(1, 0)
	dels := map[string]func(c *Cache, k []byte) error{
		"del": func(c *Cache, k []byte) error {
			n, err := c.Delete(k)
			if err == nil && n != 1 {
				err = fmt.Errorf("Delete = %d, want 1", n)
			}
			return err
		},
		"getdel": func(c *Cache, k []byte) error {
			_, ok, err := c.GetDel(nil, k)
			if err == nil && !ok {
				err = fmt.Errorf("GetDel found nothing")
			}
			return err
		},
		"expire0": func(c *Cache, k []byte) error {
			ok, err := c.ExpireIf(k, 0, 0)
			if err == nil && !ok {
				err = fmt.Errorf("ExpireIf found nothing")
			}
			return err
		},
		"getex-past": func(c *Cache, k []byte) error {
			_, _, err := c.GetEx(nil, k, Expiry{At: past})
			return err
		},
		"set-past": func(c *Cache, k []byte) error {
			_, err := c.Set(k, []byte("x"), SetOptions{ExpireAt: past})
			return err
		},
	}
	for name, del := range dels {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			o := restartOptions(dir, DurabilityWriteThrough)
			c := reopen(t, o, dir, crashSized)
			for i := 0; i < 10; i++ {
				k := []byte(fmt.Sprintf("k%02d", i))
				if _, err := c.Set(k, bytes.Repeat(k, 50), SetOptions{}); err != nil {
					t.Fatal(err)
				}
				if err := del(c, k); err != nil {
					t.Fatalf("delete %s: %v", k, err)
				}
				crashed := crashCopy(t, dir)
				r := reopen(t, o, crashed, crashSized)
				if v, ok, err := r.Get(nil, k); ok || err != nil {
					t.Fatalf("%s: deleted and acknowledged, yet after a SIGKILL it reads %q (err %v)", k, v, err)
				}
				r.Close()
			}
		})
	}
}

// gatedCold is a Cold whose PutMany, Delete and DeleteMany stop, for one
// armed key, until released: the write or delete of that key is in flight
// when the test "crashes". While failDeletes is set, every delete fails
// (and reaches no store) while writes still succeed; failPrefix makes the
// deletes of the keys it begins fail.
type gatedCold struct {
	Cold
	failDeletes atomic.Bool
	mu          sync.Mutex
	failPrefix  string
	key         string
	reached     chan struct{}
	release     chan struct{}
}

func (g *gatedCold) arm(key string) {
	g.mu.Lock()
	g.key, g.reached, g.release = key, make(chan struct{}), make(chan struct{})
	g.mu.Unlock()
}

// hold stops while keys hold the armed key, until it is released.
func (g *gatedCold) hold(keys ...[]byte) {
	g.mu.Lock()
	var reached, release chan struct{}
	for _, k := range keys {
		if g.key != "" && string(k) == g.key {
			reached, release = g.reached, g.release
			g.key = ""
		}
	}
	g.mu.Unlock()
	if reached != nil {
		close(reached)
		<-release
	}
}

func (g *gatedCold) PutMany(ctx context.Context, items []*flusher.Item) error {
	for _, it := range items {
		g.hold(it.Key)
	}
	return g.Cold.PutMany(ctx, items)
}

// errDeleteFails is what gatedCold's deletes return while failDeletes is set.
var errDeleteFails = errors.New("test: deletes fail")

// failsDelete reports whether the delete of key is to fail.
func (g *gatedCold) failsDelete(key []byte) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.failDeletes.Load() || g.failPrefix != "" && bytes.HasPrefix(key, []byte(g.failPrefix))
}

func (g *gatedCold) Delete(ctx context.Context, key []byte) error {
	g.hold(key)
	if g.failsDelete(key) {
		return errDeleteFails
	}
	return g.Cold.Delete(ctx, key)
}

func (g *gatedCold) DeleteMany(ctx context.Context, keys [][]byte) []error {
	g.hold(keys...)
	errs := make([]error, len(keys))
	var pass [][]byte
	var at []int
	for i, k := range keys {
		if g.failsDelete(k) {
			errs[i] = errDeleteFails
		} else {
			pass, at = append(pass, k), append(at, i)
		}
	}
	if len(pass) > 0 {
		for j, err := range g.Cold.(flusher.ManyDeleter).DeleteMany(ctx, pass) {
			errs[at[j]] = err
		}
	}
	return errs
}

func (g *gatedCold) Sync(ctx context.Context) error { return g.Cold.(flusher.Syncer).Sync(ctx) }

// gated makes o open its cold tier (as set now) wrapped in a gatedCold.
func gated(o *Options) *gatedCold {
	g := &gatedCold{}
	wrapCold(o, func(in Cold) Cold {
		g.Cold = in
		return g
	})
	return g
}

// TestInterruptedOverwriteKeepsOldValue: a durable value, then an
// overwrite whose cold write is still in flight when the process dies
// (while other writes are made durable): after the restart the key reads
// the old value or the new one, never nothing (T28).
func TestInterruptedOverwriteKeepsOldValue(t *testing.T) {
	needURing(t)
	for _, size := range []int{100, 600 << 10} { // inline, and chunked across 256 KiB regions
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			dir := t.TempDir()
			o := restartOptions(dir, DurabilityWriteThrough)
			emuCold(&o, dir, crashSized) // copied at the crash: keep it small
			plain := o
			g := gated(&o)
			c := openWith(t, o)
			k := []byte("key")
			old, neu := bytes.Repeat([]byte("o"), size), bytes.Repeat([]byte("n"), size)
			if _, err := c.Set(k, old, SetOptions{}); err != nil {
				t.Fatal(err)
			}
			g.arm("key")
			done := make(chan error, 1)
			go func() { _, err := c.Set(k, neu, SetOptions{}); done <- err }()
			<-g.reached
			// Other clients' writes are made durable meanwhile.
			for i := 0; i < 5; i++ {
				if _, err := c.Set([]byte(fmt.Sprint("other", i)), bytes.Repeat([]byte("x"), size), SetOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			crashed := crashCopy(t, dir)
			close(g.release)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			r := reopen(t, plain, crashed, crashSized)
			v, ok, err := r.Get(nil, k)
			if err != nil || !ok || !bytes.Equal(v, old) && !bytes.Equal(v, neu) {
				t.Fatalf("an overwrite in flight at the crash: the key reads %d bytes, %v, %v; want the old value or the new one", len(v), ok, err)
			}
		})
	}
}

// TestWriteThroughErrorChangesNothing: on a cold store that turned
// read-only (every region write fails), writethrough SETs and DELs answer
// errors, and nothing changed: fresh keys do not read, overwritten keys
// read their old value, deleted keys are still there, now and after a
// restart (T28).
func TestWriteThroughErrorChangesNothing(t *testing.T) {
	needURing(t)
	dir := t.TempDir()
	var fail atomic.Bool
	c := openFaulty(t, dir, &fail)
	durable := map[string][]byte{}
	for i := 0; i < 40; i++ {
		k := fmt.Sprintf("d%02d", i)
		durable[k] = bytes.Repeat([]byte(k), 10+i)
		if _, err := c.Set([]byte(k), durable[k], SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	fail.Store(true)
	check := func(c *Cache, when string) {
		t.Helper()
		for i := 0; i < 100; i++ {
			k := []byte(fmt.Sprintf("fresh%03d", i))
			if v, ok, _ := c.Get(nil, k); ok {
				t.Fatalf("%s: fresh key %s whose SET failed reads %q", when, k, v)
			}
			if c.Exists(k) != 0 {
				t.Fatalf("%s: fresh key %s whose SET failed exists", when, k)
			}
		}
		for k, want := range durable {
			if v, ok, err := c.Get(nil, []byte(k)); !ok || err != nil || !bytes.Equal(v, want) {
				t.Errorf("%s: durable key %s reads %q, %v, %v; want its old value %q", when, k, v, ok, err, want)
			}
		}
	}
	for i := 0; i < 100; i++ {
		k := []byte(fmt.Sprintf("fresh%03d", i))
		if _, err := c.Set(k, k, SetOptions{}); err == nil {
			t.Fatalf("SET %s on a read-only store answered OK", k)
		}
	}
	i := 0
	for k := range durable {
		if i++; i > 20 {
			break
		}
		if _, err := c.Set([]byte(k), []byte("new"), SetOptions{}); err == nil {
			t.Fatalf("overwrite of %s on a read-only store answered OK", k)
		}
	}
	var keys [][]byte
	for k := range durable {
		keys = append(keys, []byte(k))
		if len(keys) == 10 {
			break
		}
	}
	if n, err := c.Delete(keys...); err == nil {
		t.Fatalf("DEL of 10 durable keys on a read-only store answered %d", n)
	}
	if _, _, err := c.GetDel(nil, keys[0]); err == nil {
		t.Fatal("GETDEL on a read-only store answered OK")
	}
	if _, err := c.ExpireIf(keys[1], 0, 0); err == nil {
		t.Fatal("EXPIRE 0 on a read-only store answered OK")
	}
	settle(t, c)
	check(c, "now")
	crashed := crashCopy(t, dir)
	fail.Store(false)
	r := openFaulty(t, crashed, new(atomic.Bool))
	check(r, "after a restart")
}

// openFaulty opens a writethrough cache on the faulty emulated store in
// dir (failingCold), as the store of an earlier run when it exists.
func openFaulty(t *testing.T, dir string, fail *atomic.Bool) *Cache {
	t.Helper()
	o := smallOptions(newFakeClock())
	o.Clock = nil
	o.Durability = DurabilityWriteThrough
	failingCold(&o, dir, fail)
	return openWith(t, o)
}

// TestModelWriteThroughRestarts drives a writethrough cache and a map with
// the same random SETs, overwrites, DELs, GETDELs, EXPIRE 0s and reads,
// while the cold store now and then turns read-only (every write fails),
// and SIGKILLs it (a copy of the store's file) every few hundred steps. A
// command that answered an error leaves the model unchanged; every read,
// and every key after every restart, must match the model exactly: no
// acknowledged write lost, no acknowledged delete back, no failed write
// visible (T28, L1-L5 after every step).
func TestModelWriteThroughRestarts(t *testing.T) {
	needURing(t)
	r := rand.New(rand.NewPCG(23, 23))
	dir := t.TempDir()
	fail := new(atomic.Bool)
	c := openFaulty(t, dir, fail)
	model := map[string][]byte{}
	ttls := map[string]bool{} // keys given an expiry (an hour) by EXPIRE
	key := func() []byte { return []byte(fmt.Sprintf("m%02d", r.IntN(60))) }
	past := time.Unix(1, 0)
	checkAll := func(c *Cache, when string) {
		t.Helper()
		for i := 0; i < 60; i++ {
			k := fmt.Sprintf("m%02d", i)
			want, exists := model[k]
			v, ok, err := c.Get(nil, []byte(k))
			if err != nil || ok != exists || !bytes.Equal(v, want) {
				t.Fatalf("%s: %s reads %d bytes, %v, %v; the model has %d bytes, %v", when, k, len(v), ok, err, len(want), exists)
			}
			if ttl, _ := c.TTL([]byte(k)); exists && (ttl > 0) != ttls[k] {
				t.Fatalf("%s: %s has TTL %v; the model says an expiry: %v", when, k, ttl, ttls[k])
			}
		}
	}
	failures, restarts := 0, 0
	for step := 0; step < 1500; step++ {
		checkEntries(t, c, step)
		if step%100 == 50 && r.IntN(2) == 0 {
			fail.Store(true) // the store turns read-only until the restart
			failures++
		}
		if step%300 == 299 {
			checkAll(c, fmt.Sprintf("step %d, before the crash", step))
			crashed := crashCopy(t, dir)
			c.Close()
			dir, fail = crashed, new(atomic.Bool)
			c = openFaulty(t, dir, fail)
			restarts++
			checkAll(c, fmt.Sprintf("step %d, after the crash", step))
			continue
		}
		k := key()
		ks := string(k)
		switch op := r.IntN(100); {
		case op < 40:
			v := randValue(r, 200<<10)
			if _, err := c.Set(k, v, SetOptions{}); err == nil {
				model[ks], ttls[ks] = v, false
			} else if !fail.Load() {
				t.Fatalf("step %d: Set: %v", step, err)
			}
		case op < 50:
			n, err := c.Delete(k)
			_, exists := model[ks]
			switch {
			case err == nil && (n == 1) != exists:
				t.Fatalf("step %d: Delete(%s) = %d, model has it: %v", step, k, n, exists)
			case err == nil:
				delete(model, ks)
			case !fail.Load():
				t.Fatalf("step %d: Delete: %v", step, err)
			}
		case op < 55:
			if _, ok, err := c.GetDel(nil, k); err == nil {
				if _, exists := model[ks]; ok != exists {
					t.Fatalf("step %d: GetDel(%s) found %v, model has it: %v", step, k, ok, exists)
				}
				delete(model, ks)
			} else if !fail.Load() {
				t.Fatalf("step %d: GetDel: %v", step, err)
			}
		case op < 58:
			if _, err := c.ExpireIf(k, 0, 0); err == nil {
				delete(model, ks)
			} else if !fail.Load() {
				t.Fatalf("step %d: Expire 0: %v", step, err)
			}
		case op < 65:
			ok, err := c.ExpireIf(k, time.Hour, 0)
			_, exists := model[ks]
			switch {
			case err == nil && ok != exists:
				t.Fatalf("step %d: Expire(%s) = %v, model has it: %v", step, k, ok, exists)
			case err == nil && ok:
				ttls[ks] = true
			case err != nil && !fail.Load():
				t.Fatalf("step %d: Expire: %v", step, err)
			}
		case op < 67:
			if _, err := c.Set(k, []byte("x"), SetOptions{ExpireAt: past}); err == nil {
				delete(model, ks)
			} else if !fail.Load() {
				t.Fatalf("step %d: Set with a past expiry: %v", step, err)
			}
		default:
			want, exists := model[ks]
			v, ok, err := c.Get(nil, k)
			if err != nil || ok != exists || !bytes.Equal(v, want) {
				t.Fatalf("step %d: Get(%s) %d bytes, %v, %v; the model has %d bytes, %v (store failing: %v)", step, k, len(v), ok, err, len(want), exists, fail.Load())
			}
		}
	}
	t.Logf("%d restarts, %d read-only stretches, %d keys at the end", restarts, failures, len(model))
}

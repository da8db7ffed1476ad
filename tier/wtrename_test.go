package tier

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestWriteThroughRenameDurableBeforeReply: in writethrough mode Rename
// returns only after the destination's value and the source's delete are
// durable, and Copy after the destination's value is. The source's delete
// is held in the store: Rename must not return before it completes, and a
// SIGKILL right after it returned (a copy of the store's file) shows the
// destination with the value and no source (T28).
func TestWriteThroughRenameDurableBeforeReply(t *testing.T) {
	needURing(t)
	for _, over := range []bool{false, true} { // a fresh destination, or an overwritten one
		t.Run(fmt.Sprint("overwrite=", over), func(t *testing.T) {
			dir := t.TempDir()
			o := restartOptions(dir, DurabilityWriteThrough)
			emuCold(&o, dir, crashSized) // copied at the crash: keep it small
			plain := o
			g := gated(&o)
			c := openWith(t, o)
			src, dst, cp := []byte("src"), []byte("dst"), []byte("copy")
			val := bytes.Repeat([]byte("v"), 500)
			if _, err := c.Set(src, val, SetOptions{TTL: time.Hour}); err != nil {
				t.Fatal(err)
			}
			if over {
				for _, k := range [][]byte{dst, cp} {
					if _, err := c.Set(k, []byte("old"), SetOptions{}); err != nil {
						t.Fatal(err)
					}
				}
			}
			if ok, err := c.Copy(src, cp, true); !ok || err != nil {
				t.Fatalf("Copy = %v, %v", ok, err)
			}
			g.arm("src")
			done := make(chan error, 1)
			go func() { _, err := c.Rename(src, dst, false); done <- err }()
			<-g.reached
			var crashed string
			select {
			case err := <-done: // answered while src's delete is held: the crash comes now
				if err != nil {
					t.Fatal(err)
				}
				crashed = crashCopy(t, dir)
				close(g.release)
			case <-time.After(300 * time.Millisecond): // still waiting for the held delete, as it must
				close(g.release)
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				crashed = crashCopy(t, dir)
			}
			r := reopen(t, plain, crashed, crashSized)
			if v, ok, _ := r.Get(nil, src); ok {
				t.Errorf("RENAME acknowledged, yet after a SIGKILL the source reads %d bytes", len(v))
			}
			for _, k := range [][]byte{dst, cp} {
				if v, ok, err := r.Get(nil, k); !ok || err != nil || !bytes.Equal(v, val) {
					t.Errorf("after a SIGKILL %s reads %d bytes, %v, %v; want the value moved or copied there", k, len(v), ok, err)
				}
				if ttl, _ := r.TTL(k); ttl <= 0 {
					t.Errorf("after a SIGKILL %s has TTL %v; want the source's hour", k, ttl)
				}
			}
		})
	}
}

// TestWriteThroughRenameErrorChangesNothing: on a read-only cold store
// RENAME, RENAMENX, COPY and COPY REPLACE answer errors and neither key
// changed, now and after a restart (T28).
func TestWriteThroughRenameErrorChangesNothing(t *testing.T) {
	needURing(t)
	dir := t.TempDir()
	var fail atomic.Bool
	c := openFaulty(t, dir, &fail)
	want := map[string][]byte{"src": []byte("source"), "dst": []byte("destination")}
	for k, v := range want {
		if _, err := c.Set([]byte(k), v, SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	fail.Store(true)
	src, dst, fresh := []byte("src"), []byte("dst"), []byte("fresh")
	if _, err := c.Rename(src, fresh, false); err == nil {
		t.Error("RENAME to a fresh key on a read-only store answered OK")
	}
	if _, err := c.Rename(src, dst, false); err == nil {
		t.Error("RENAME onto a key on a read-only store answered OK")
	}
	if _, err := c.Rename(src, fresh, true); err == nil {
		t.Error("RENAMENX on a read-only store answered OK")
	}
	if _, err := c.Copy(src, fresh, false); err == nil {
		t.Error("COPY on a read-only store answered OK")
	}
	if _, err := c.Copy(src, dst, true); err == nil {
		t.Error("COPY REPLACE on a read-only store answered OK")
	}
	check := func(c *Cache, when string) {
		t.Helper()
		for k, w := range want {
			if v, ok, err := c.Get(nil, []byte(k)); !ok || err != nil || !bytes.Equal(v, w) {
				t.Errorf("%s: %s reads %q, %v, %v; want %q", when, k, v, ok, err, w)
			}
		}
		if v, ok, _ := c.Get(nil, fresh); ok {
			t.Errorf("%s: %s reads %q; every move to it failed", when, fresh, v)
		}
	}
	settle(t, c)
	check(c, "now")
	crashed := crashCopy(t, dir)
	fail.Store(false)
	check(openFaulty(t, crashed, new(atomic.Bool)), "after a restart")
}

// TestWriteThroughRenameUndo: the destination's write succeeds but the
// source's delete fails (deletes fail, writes do not). RENAME onto a key
// answers an error and puts the destination's old value back: neither key
// changed, now and after a SIGKILL. RENAME to a fresh key cannot put it
// back (that takes a delete too): it answers an error saying both keys
// hold the value, and they do, in memory as after a SIGKILL.
func TestWriteThroughRenameUndo(t *testing.T) {
	needURing(t)
	dir := t.TempDir()
	o := restartOptions(dir, DurabilityWriteThrough)
	emuCold(&o, dir, crashSized) // copied at the crash: keep it small
	plain := o
	g := gated(&o)
	c := openWith(t, o)
	src, dst, fresh := []byte("src"), []byte("dst"), []byte("fresh")
	sv, dv := []byte("source"), []byte("destination")
	for k, v := range map[string][]byte{"src": sv, "dst": dv} {
		if _, err := c.Set([]byte(k), v, SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	g.failDeletes.Store(true)
	if _, err := c.Rename(src, dst, false); err == nil {
		t.Fatal("RENAME whose source delete failed answered OK")
	}
	check := func(c *Cache, when string, want map[string][]byte) {
		t.Helper()
		for k, w := range want {
			v, ok, err := c.Get(nil, []byte(k))
			if w == nil && ok || w != nil && (!ok || err != nil || !bytes.Equal(v, w)) {
				t.Errorf("%s: %s reads %q, %v, %v; want %q", when, k, v, ok, err, w)
			}
		}
	}
	unchanged := map[string][]byte{"src": sv, "dst": dv, "fresh": nil}
	check(c, "after RENAME onto a key failed", unchanged)
	check(reopen(t, plain, crashCopy(t, dir), crashSized), "after RENAME onto a key failed and a SIGKILL", unchanged)

	_, err := c.Rename(src, fresh, false)
	if err == nil {
		t.Fatal("RENAME to a fresh key whose source delete failed answered OK")
	}
	t.Logf("RENAME to a fresh key: %v", err)
	both := map[string][]byte{"src": sv, "dst": dv, "fresh": sv}
	check(c, "after RENAME to a fresh key failed", both)
	check(reopen(t, plain, crashCopy(t, dir), crashSized), "after RENAME to a fresh key failed and a SIGKILL", both)
}

// TestConcurrentRenameWriteThrough is TestConcurrentRename in writethrough
// mode on the emulated store: tokens renamed between keys (RENAMENX) and
// copied from many goroutines are never lost nor duplicated, and after a
// SIGKILL (a copy of the store's file) each token is in exactly one slot
// (T26, T28).
func TestConcurrentRenameWriteThrough(t *testing.T) {
	needURing(t)
	dir := t.TempDir()
	o := restartOptions(dir, DurabilityWriteThrough)
	c := reopen(t, o, dir, crashSized)
	const keys, tokens = 16, 8
	key := func(i int) []byte { return []byte(fmt.Sprintf("slot%02d", i)) }
	token := func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i)}, 200+i) }
	for i := 0; i < tokens; i++ {
		if _, err := c.Set(key(i), token(i), SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errc := make(chan error, 8)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 2))
			for i := 0; i < steps(t, 300); i++ {
				a, b := r.IntN(keys), r.IntN(keys)
				if g == 3 {
					if _, err := c.Copy(key(a), []byte("copy"), true); err != nil {
						errc <- err
						return
					}
					continue
				}
				if _, err := c.Rename(key(a), key(b), true); err != nil && !errors.Is(err, ErrNoSuchKey) {
					errc <- err
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	count := func(c *Cache, when string) {
		t.Helper()
		seen := map[int]int{}
		for i := 0; i < keys; i++ {
			if v, ok, _ := c.Get(nil, key(i)); ok {
				if len(v) < 200 || !bytes.Equal(v, token(len(v)-200)) {
					t.Fatalf("%s: %s holds %q", when, key(i), v)
				}
				seen[len(v)-200]++
			}
		}
		for i := 0; i < tokens; i++ {
			if seen[i] != 1 {
				t.Errorf("%s: token %d is in %d keys, want 1 (all: %v)", when, i, seen[i], seen)
			}
		}
	}
	count(c, "now")
	count(reopen(t, o, crashCopy(t, dir), crashSized), "after a SIGKILL")
}

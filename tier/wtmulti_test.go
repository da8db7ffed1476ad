package tier

import (
	"bytes"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
)

// TestMSetChecksEveryPairFirst: an MSET whose last value is over MaxValue
// (or whose key is empty) answers an error and stores none of its pairs,
// in memory-only and in writethrough mode.
func TestMSetChecksEveryPairFirst(t *testing.T) {
	opens := map[string]func(t *testing.T) *Cache{
		"memory": func(t *testing.T) *Cache { return openMemoryTiers(t, newFakeClock()) },
		"writethrough": func(t *testing.T) *Cache {
			needURing(t)
			dir := t.TempDir()
			return reopen(t, restartOptions(dir, DurabilityWriteThrough), dir)
		},
	}
	for name, open := range opens {
		t.Run(name, func(t *testing.T) {
			c := open(t)
			for _, bad := range [][2][]byte{
				{[]byte("big"), make([]byte, c.o.MaxValue+1)},
				{nil, []byte("v")},
			} {
				kvs := [][2][]byte{{[]byte("a"), []byte("1")}, {[]byte("b"), []byte("2")}, bad}
				if err := c.MSet(kvs); err == nil {
					t.Fatalf("MSET with a bad last pair (key %q, %d bytes) answered OK", bad[0], len(bad[1]))
				}
				for _, k := range []string{"a", "b", "big"} {
					if v, ok, _ := c.Get(nil, []byte(k)); ok {
						t.Errorf("MSET answered an error, yet %s reads %q", k, v)
					}
				}
			}
		})
	}
}

// TestWriteThroughMultiKeyReadOnly: once the cold store turned read-only,
// writethrough DEL, MSET and FLUSHALL answer ErrColdReadOnly before
// changing anything, now and after a restart.
func TestWriteThroughMultiKeyReadOnly(t *testing.T) {
	needURing(t)
	dir := t.TempDir()
	var fail atomic.Bool
	c := openFaulty(t, dir, &fail)
	var keys [][]byte
	for i := 0; i < 10; i++ {
		k := []byte(fmt.Sprintf("k%d", i))
		keys = append(keys, k)
		if _, err := c.Set(k, k, SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	fail.Store(true)
	if _, err := c.Set([]byte("probe"), []byte("p"), SetOptions{}); err == nil {
		t.Fatal("SET on a read-only store answered OK")
	}
	if _, err := c.Delete(keys...); !errors.Is(err, ErrColdReadOnly) {
		t.Errorf("DEL of 10 keys on a read-only store: %v, want ErrColdReadOnly", err)
	}
	if err := c.MSet([][2][]byte{{keys[0], []byte("new")}, {[]byte("fresh"), []byte("f")}}); !errors.Is(err, ErrColdReadOnly) {
		t.Errorf("MSET on a read-only store: %v, want ErrColdReadOnly", err)
	}
	if err := c.Flush(); !errors.Is(err, ErrColdReadOnly) {
		t.Errorf("FLUSHALL on a read-only store: %v, want ErrColdReadOnly", err)
	}
	check := func(c *Cache, when string) {
		t.Helper()
		for _, k := range keys {
			if v, ok, err := c.Get(nil, k); !ok || err != nil || !bytes.Equal(v, k) {
				t.Errorf("%s: %s reads %q, %v, %v; want %q", when, k, v, ok, err, k)
			}
		}
		for _, k := range []string{"fresh", "probe"} {
			if c.Exists([]byte(k)) != 0 {
				t.Errorf("%s: %s exists; its writes failed", when, k)
			}
		}
	}
	check(c, "now")
	crashed := crashCopy(t, dir)
	fail.Store(false)
	check(openFaulty(t, crashed, new(atomic.Bool)), "after a restart")
}

// TestWriteThroughPartialDelete: a writethrough DEL of ten keys whose cold
// delete fails for five of them answers a *PartialError saying so, and
// exactly those five remain, in memory and after a SIGKILL.
func TestWriteThroughPartialDelete(t *testing.T) {
	needURing(t)
	dir := t.TempDir()
	o := restartOptions(dir, DurabilityWriteThrough)
	emuCold(&o, dir, crashSized) // copied at the crash: keep it small
	plain := o
	g := gated(&o)
	c := openWith(t, o)
	var keys [][]byte
	for _, p := range []string{"a", "b"} {
		for i := 0; i < 5; i++ {
			k := []byte(fmt.Sprint(p, i))
			keys = append(keys, k)
			if _, err := c.Set(k, k, SetOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	g.mu.Lock()
	g.failPrefix = "b"
	g.mu.Unlock()
	_, err := c.Delete(keys...)
	var pe *PartialError
	if !errors.As(err, &pe) || pe.Done != 5 || pe.Failed != 5 {
		t.Fatalf("DEL whose deletes failed for 5 of 10 keys: %v; want a PartialError of 5 done, 5 failed", err)
	}
	check := func(c *Cache, when string) {
		t.Helper()
		for _, k := range keys {
			_, ok, _ := c.Get(nil, k)
			if want := k[0] == 'b'; ok != want {
				t.Errorf("%s: %s reads: %v, want %v (only the b keys' deletes failed)", when, k, ok, want)
			}
		}
	}
	check(c, "now")
	check(reopen(t, plain, crashCopy(t, dir), crashSized), "after a SIGKILL")
}

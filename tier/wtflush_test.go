package tier

import (
	"bytes"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// TestWriteThroughFlushDurableBeforeReply: in writethrough mode Flush
// returns only after every key's cold delete is durable. One key's delete
// is held in the store: Flush must not return before it completes, and a
// SIGKILL right after Flush returned (a copy of the store's file) brings no
// key back (T28).
func TestWriteThroughFlushDurableBeforeReply(t *testing.T) {
	needURing(t)
	dir := t.TempDir()
	o := restartOptions(dir, DurabilityWriteThrough)
	emuCold(&o, dir, crashSized) // copied at the crash: keep it small
	plain := o
	g := gated(&o)
	c := openWith(t, o)
	for i := 0; i < 50; i++ {
		k := []byte(fmt.Sprintf("k%02d", i))
		if _, err := c.Set(k, bytes.Repeat(k, 40), SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	g.arm("k07")
	done := make(chan error, 1)
	go func() { done <- c.Flush() }()
	<-g.reached
	var crashed string
	select {
	case err := <-done: // answered while k07's delete is held: the crash comes now
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
	for i := 0; i < 50; i++ {
		k := []byte(fmt.Sprintf("k%02d", i))
		if v, ok, _ := r.Get(nil, k); ok {
			t.Errorf("FLUSHALL acknowledged, yet after a SIGKILL %s reads %d bytes", k, len(v))
		}
	}
}

// TestWriteThroughFlushError: on a read-only cold store a writethrough
// Flush answers an error, and every key it could not delete durably still
// reads its value, now and after a restart.
func TestWriteThroughFlushError(t *testing.T) {
	needURing(t)
	dir := t.TempDir()
	var fail atomic.Bool
	c := openFaulty(t, dir, &fail)
	for i := 0; i < 20; i++ {
		k := []byte(fmt.Sprintf("k%02d", i))
		if _, err := c.Set(k, k, SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	fail.Store(true)
	if err := c.Flush(); err == nil {
		t.Fatal("FLUSHALL on a read-only store answered OK")
	}
	check := func(c *Cache, when string) {
		t.Helper()
		for i := 0; i < 20; i++ {
			k := []byte(fmt.Sprintf("k%02d", i))
			if v, ok, err := c.Get(nil, k); !ok || err != nil || !bytes.Equal(v, k) {
				t.Errorf("%s: %s reads %q, %v, %v after a FLUSHALL that failed; want its value", when, k, v, ok, err)
			}
		}
	}
	settle(t, c)
	check(c, "now")
	crashed := crashCopy(t, dir)
	fail.Store(false)
	check(openFaulty(t, crashed, new(atomic.Bool)), "after a restart")
}

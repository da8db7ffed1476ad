package tier

import (
	"bytes"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// TestWriteThroughExpiryDurableBeforeReply: in writethrough mode GETEX with
// a TTL, GETEX PERSIST, EXPIRE and PERSIST of a live key return only after
// the key's cold copy carries the new expiry: a SIGKILL right after the
// reply (a copy of the store's file) brings the key back with it (T28).
func TestWriteThroughExpiryDurableBeforeReply(t *testing.T) {
	needURing(t)
	dir := t.TempDir()
	o := restartOptions(dir, DurabilityWriteThrough)
	c := reopen(t, o, dir, crashSized)
	changes := []struct {
		name    string
		ttl     bool // the key starts with an expiry
		change  func(k []byte) error
		wantTTL bool
	}{
		{"getex-ex", false, func(k []byte) error { _, _, err := c.GetEx(nil, k, Expiry{TTL: time.Hour}); return err }, true},
		{"getex-exat", false, func(k []byte) error {
			_, _, err := c.GetEx(nil, k, Expiry{At: time.Now().Add(time.Hour)})
			return err
		}, true},
		{"getex-persist", true, func(k []byte) error { _, _, err := c.GetEx(nil, k, Expiry{Persist: true}); return err }, false},
		{"expire", false, func(k []byte) error { _, err := c.ExpireIf(k, time.Hour, 0); return err }, true},
		{"persist", true, func(k []byte) error {
			if !persist(c, k) {
				return fmt.Errorf("Persist found no expiry")
			}
			return nil
		}, false},
	}
	for i, ch := range changes {
		k := []byte(fmt.Sprint("k-", ch.name))
		v := bytes.Repeat([]byte{byte('a' + i)}, 300)
		so := SetOptions{}
		if ch.ttl {
			so.TTL = time.Hour
		}
		if _, err := c.Set(k, v, so); err != nil {
			t.Fatal(err)
		}
		if err := ch.change(k); err != nil {
			t.Fatalf("%s: %v", ch.name, err)
		}
		r := reopen(t, o, crashCopy(t, dir), crashSized)
		got, ok, err := r.Get(nil, k)
		if !ok || err != nil || !bytes.Equal(got, v) {
			t.Fatalf("%s: after a SIGKILL the key reads %d bytes, %v, %v", ch.name, len(got), ok, err)
		}
		if ttl, _ := r.TTL(k); (ttl > 0) != ch.wantTTL {
			t.Errorf("%s acknowledged, yet after a SIGKILL the key's TTL is %v (want an expiry: %v)", ch.name, ttl, ch.wantTTL)
		}
		r.Close()
	}
}

// TestWriteThroughExpiryErrorChangesNothing: on a read-only cold store,
// GETEX with a TTL (or PERSIST) and EXPIRE answer errors and the key keeps
// its expiry, now and after a restart (T28).
func TestWriteThroughExpiryErrorChangesNothing(t *testing.T) {
	needURing(t)
	dir := t.TempDir()
	var fail atomic.Bool
	c := openFaulty(t, dir, &fail)
	plain, timed := []byte("plain"), []byte("timed")
	if _, err := c.Set(plain, []byte("p"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Set(timed, []byte("t"), SetOptions{TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	fail.Store(true)
	if _, _, err := c.GetEx(nil, plain, Expiry{TTL: time.Hour}); err == nil {
		t.Error("GETEX EX on a read-only store answered a value")
	}
	if _, _, err := c.GetEx(nil, timed, Expiry{Persist: true}); err == nil {
		t.Error("GETEX PERSIST on a read-only store answered a value")
	}
	if _, err := c.ExpireIf(plain, time.Hour, 0); err == nil {
		t.Error("EXPIRE on a read-only store answered OK")
	}
	if persist(c, timed) {
		t.Error("PERSIST on a read-only store answered 1")
	}
	check := func(c *Cache, when string) {
		t.Helper()
		if ttl, ok := c.TTL(plain); !ok || ttl > 0 {
			t.Errorf("%s: %s has TTL %v, %v; want none (its changes failed)", when, plain, ttl, ok)
		}
		if ttl, ok := c.TTL(timed); !ok || ttl <= 0 {
			t.Errorf("%s: %s has TTL %v, %v; want its hour (its changes failed)", when, timed, ttl, ok)
		}
	}
	check(c, "now")
	crashed := crashCopy(t, dir)
	fail.Store(false)
	check(openFaulty(t, crashed, new(atomic.Bool)), "after a restart")
}

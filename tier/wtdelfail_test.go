package tier

import (
	"bytes"
	"errors"
	"testing"
)

// TestWriteThroughFailedDeleteKeepsKeyReadable: a writethrough DEL whose
// cold delete failed answers an error and leaves the key as it was (T28),
// also once the directory forgets the key (T15) and a read adopts it from
// cold again: the failed delete removed nothing, so it must not count as a
// cold delete still pending that forbids the adoption (T4, flusher F8).
func TestWriteThroughFailedDeleteKeepsKeyReadable(t *testing.T) {
	needURing(t)
	dir := t.TempDir()
	o := restartOptions(dir, DurabilityWriteThrough)
	g := gated(&o)
	c := openWith(t, o)
	k := []byte("big")
	v := bytes.Repeat([]byte("v"), 100<<10) // larger than a warm segment: cold alone holds it
	if _, err := c.Set(k, v, SetOptions{}); err != nil {
		t.Fatal(err)
	}
	g.failDeletes.Store(true)
	if _, err := c.Delete(k); !errors.Is(err, errDeleteFails) {
		t.Fatalf("DEL while deletes fail: %v, want %v", err, errDeleteFails)
	}
	g.failDeletes.Store(false)
	if got, ok, err := c.Get(nil, k); !ok || err != nil || !bytes.Equal(got, v) {
		t.Fatalf("after the failed DEL: ok %v, err %v; want the value (nothing changed)", ok, err)
	}
	c.coldUnknown.Store(true) // as a trim pass does before it forgets (T15)
	if !forceForget(c, k) {
		t.Fatal("the key, in cold alone, could not be forgotten")
	}
	if got, ok, err := c.Get(nil, k); !ok || err != nil || !bytes.Equal(got, v) {
		t.Fatalf("after the failed DEL, once forgotten: ok %v, err %v; want the value it still has in cold", ok, err)
	}
}

package tier

import (
	"testing"
	"time"
)

// TestDeleteThenSetSurvivesRistrettoOrder reproduces a lost value: a Delete
// whose key ristretto had not applied yet, then ristretto applies the old
// Set, then a new Set of the key updates ristretto's store in place, then
// ristretto processes the Delete's queued removal, which must not remove the
// new value. The hook pauses ristretto's goroutine between its items.
func TestDeleteThenSetSurvivesRistrettoOrder(t *testing.T) {
	clk := newFakeClock()
	o := smallOptions(clk)
	c, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	type gate struct{ in, out chan struct{} }
	gates := map[string]gate{}
	for _, k := range []string{"blockA", "blockB"} {
		gates[k] = gate{in: make(chan struct{}), out: make(chan struct{})}
	}
	c.appliedHook = func(he *hotEntry) {
		if g, ok := gates[string(he.key)]; ok {
			close(g.in)
			<-g.out
		}
	}
	wait := func(ch chan struct{}) {
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatal("ristretto's goroutine did not reach the hook")
		}
	}
	set := func(k, v string) {
		t.Helper()
		if _, err := c.Set([]byte(k), []byte(v), SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	set("blockA", "a") // ristretto's goroutine stops in A's hook
	wait(gates["blockA"].in)
	set("k", "v1") // queued: new k
	set("blockB", "b")
	if n := c.Delete([]byte("k")); n != 1 {
		t.Fatalf("Delete = %d", n)
	}
	close(gates["blockA"].out) // applies k=v1, stops in B's hook
	wait(gates["blockB"].in)
	set("k", "v2")
	close(gates["blockB"].out) // then the Delete's queued work
	c.hot.rc.Wait()
	v, ok, err := c.Get(nil, []byte("k"))
	if err != nil || !ok || string(v) != "v2" {
		t.Fatalf("Get(k) = %q, %v, %v; want v2 (stats %+v)", v, ok, err, c.Stats())
	}
}

// TestHotHitFollowsTheDirectory: the hot-hit fast path serves a copy only
// while its directory entry is in the map, live and of the copy's version.
func TestHotHitFollowsTheDirectory(t *testing.T) {
	clk := newFakeClock()
	c, err := Open(smallOptions(clk))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	get := func(k string) (string, bool) {
		c.hot.rc.Wait() // applied: the copy is in ristretto's store
		v, ok, err := c.Get(nil, []byte(k))
		if err != nil {
			t.Fatal(err)
		}
		return string(v), ok
	}
	k := []byte("k")
	c.Set(k, []byte("v1"), SetOptions{})
	if v, ok := get("k"); !ok || v != "v1" || c.Where(k) != "hot" {
		t.Fatalf("Get = %q, %v (where %q); want v1 from hot", v, ok, c.Where(k))
	}
	c.Set(k, []byte("v2"), SetOptions{})
	if v, ok := get("k"); !ok || v != "v2" {
		t.Fatalf("after overwrite Get = %q, %v", v, ok)
	}
	c.Delete(k)
	if v, ok := get("k"); ok {
		t.Fatalf("after Delete Get = %q", v)
	}
	c.Set(k, []byte("v3"), SetOptions{})
	if v, ok := get("k"); !ok || v != "v3" {
		t.Fatalf("after re-Set Get = %q, %v", v, ok)
	}
	c.Expire(k, time.Second)
	clk.Advance(int64(2 * time.Second))
	if v, ok := get("k"); ok {
		t.Fatalf("after expiry Get = %q", v)
	}
	c.Set(k, []byte("v4"), SetOptions{})
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if v, ok := get("k"); ok {
		t.Fatalf("after Flush Get = %q", v)
	}
	if st := c.Stats(); st.Phantoms != 0 {
		t.Fatalf("phantoms: %+v", st)
	}
}

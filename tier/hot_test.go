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

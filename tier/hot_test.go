package tier

import (
	"fmt"
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
	if n, _ := c.Delete([]byte("k")); n != 1 {
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

// TestViewSharesImmutableHotCopy: View returns the hot copy itself, an
// overwrite never changes a view already handed out, and the next View
// returns the new value.
func TestViewSharesImmutableHotCopy(t *testing.T) {
	c, err := Open(smallOptions(newFakeClock()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Set([]byte("k"), []byte("v1"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	v1, shared, ok, cold, err := c.View(make([]byte, 0, 16), []byte("k"))
	if err != nil || !ok || !shared || cold || string(v1) != "v1" {
		t.Fatalf("View = %q shared=%v ok=%v cold=%v err=%v; want the shared hot copy v1", v1, shared, ok, cold, err)
	}
	if cap(v1) != len(v1) {
		t.Fatalf("view has spare capacity %d: an append would write into the cache", cap(v1)-len(v1))
	}
	// MGet hands out the same shared copy, capped the same way.
	vs, err := c.MGet([][]byte{[]byte("k"), []byte("absent")})
	if err != nil || string(vs[0]) != "v1" || vs[1] != nil {
		t.Fatalf("MGet = %q, %v", vs, err)
	}
	if &vs[0][0] != &v1[0] || cap(vs[0]) != len(vs[0]) {
		t.Fatalf("MGet's hot hit is not the shared hot copy capped at its length (cap %d)", cap(vs[0]))
	}
	if _, err := c.Set([]byte("k"), []byte("v2"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	v2, _, ok, _, _ := c.View(nil, []byte("k"))
	if !ok || string(v2) != "v2" || string(v1) != "v1" {
		t.Fatalf("after overwrite: new view %q (want v2), old view %q (want v1)", v2, v1)
	}
	if n, _ := c.Delete([]byte("k")); n != 1 {
		t.Fatal("Delete found nothing")
	}
	if v, _, ok, _, _ := c.View(nil, []byte("k")); ok {
		t.Fatalf("View after Delete = %q", v)
	}
}

// TestHotPointerClearedOnEviction: a key hot evicted (here: many more bytes
// than HotBytes) no longer pins its hot copy through the directory, and is
// still readable from warm.
func TestHotPointerClearedOnEviction(t *testing.T) {
	c, err := Open(smallOptions(newFakeClock()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	val := make([]byte, 1024)
	const n = 400 // 400 KiB through a 64 KiB hot tier
	for i := range n {
		if _, err := c.Set([]byte(fmt.Sprint("key", i)), val, SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c.hot.rc.Wait()
	pinned, inHot := 0, 0
	for i := range n {
		k := []byte(fmt.Sprint("key", i))
		lo, _ := hashKey(k)
		sh := c.dir.shard(lo)
		sh.mu.RLock()
		e := sh.m[string(k)]
		var he *hotEntry
		if e != nil {
			he = e.hot.Load()
		}
		sh.mu.RUnlock()
		if he != nil {
			pinned++
		}
		if c.hot.has(k) {
			inHot++
		}
	}
	if pinned > inHot {
		t.Fatalf("%d directory entries point at a hot copy, but hot holds only %d keys", pinned, inHot)
	}
	if pinned == n {
		t.Fatalf("every key is still pinned as hot after writing %d KiB through 64 KiB", n)
	}
}

// TestJoinKVCopies: joinKV never aliases the caller's key or value (the
// server reuses those buffers), also for an empty value, and its parts do not
// overlap.
func TestJoinKVCopies(t *testing.T) {
	for _, vlen := range []int{0, 1, 100, 1536, 5000} {
		key := []byte("some-key")
		val := make([]byte, vlen)
		for i := range val {
			val[i] = byte(i)
		}
		k, v, alloc := joinKV(key, val)
		if string(k) != "some-key" || len(v) != vlen || (vlen > 0 && v[vlen-1] != byte(vlen-1)) {
			t.Fatalf("vlen %d: got %q / %d bytes", vlen, k, len(v))
		}
		key[0], val = 'X', append(val[:0], make([]byte, vlen)...)
		if k[0] != 's' || (vlen > 1 && v[1] != 1) {
			t.Fatalf("vlen %d: joinKV aliases the caller's buffers", vlen)
		}
		if alloc < len(key)+vlen {
			t.Fatalf("vlen %d: allocation of %d bytes reported for %d", vlen, alloc, len(key)+vlen)
		}
		if cap(k) != len(k) || cap(v) != len(v) {
			t.Fatalf("vlen %d: parts have spare capacity (k %d/%d, v %d/%d)", vlen, len(k), cap(k), len(v), cap(v))
		}
	}
}

// TestDroppedVictimsLeaveNoEntry (T7): without a cold tier, copies that
// neither hot nor warm keeps (warm evicts its oldest segment) are dropped,
// and their directory entries go with them: every key Len counts
// can be read. (demote used to decide "lost" while its own transit copy
// still held the value, so each such key stayed listed and counted, and
// read as a miss.)
func TestDroppedVictimsLeaveNoEntry(t *testing.T) {
	c, err := Open(smallOptions(newFakeClock())) // hot 64 KiB, warm 512 KiB, no cold
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Without a cold tier hot victims keep to warm: n must overflow both.
	const n = 30000
	for i := 0; i < n; i++ {
		if _, err := c.Set([]byte(fmt.Sprint("once", i)), []byte("v"), SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		c.hot.rc.Wait()
		if len(c.demoteq) == 0 && c.tr.len() == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("demotions did not settle: %d queued, %d in transit", len(c.demoteq), c.tr.len())
		}
	}
	readable := 0
	for i := 0; i < n; i++ {
		if _, ok, _ := c.Get(nil, []byte(fmt.Sprint("once", i))); ok {
			readable++
		}
	}
	st := c.Stats()
	if readable == n {
		t.Fatalf("all %d keys readable: the test needs hot to overflow", n)
	}
	if got := c.Len(); got != readable {
		t.Errorf("Len = %d, but %d keys can be read (%d lost)", got, readable, st.Lost)
	}
	checkKeyCount(t, c)
}

package tier

import (
	"fmt"
	"testing"
	"time"
)

// TestHotHitFollowsTheDirectory: a DRAM record is served only while its
// directory entry is in the map, live and of the record's version.
func TestHotHitFollowsTheDirectory(t *testing.T) {
	clk := newFakeClock()
	c, err := Open(smallOptions(clk))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	get := func(k string) (string, bool) {
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

// TestJoinKVCopies: joinKV never aliases the caller's key or value (the
// server reuses those buffers), also for an empty value, and its parts do not
// overlap.
func TestJoinKVCopies(t *testing.T) {
	for _, vlen := range []int{0, 1, 100, 1536, 5000, 3<<20 + 5} {
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

// TestDroppedVictimsLeaveNoEntry (T7): without a cold tier, keys the LFU
// evicts from DRAM are dropped, and their directory entries go with them:
// every key Len counts can be read.
func TestDroppedVictimsLeaveNoEntry(t *testing.T) {
	c, err := Open(smallOptions(newFakeClock())) // hot 64 KiB, warm 512 KiB, no cold
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// n must overflow hot and warm.
	const n = 100000
	for i := 0; i < n; i++ {
		if _, err := c.Set([]byte(fmt.Sprint("once", i)), []byte("v"), SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	settle(t, c)
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

package emu

import (
	"bytes"
	"fmt"
	"testing"
)

// TestTagCheckCosts: logstore E8 through the namespace. With inline
// records on the device, an Exist of a present key reads its record's
// header once, an Exist of an absent key reads nothing (no tag of these
// keys collides), a Retrieve reads only its record (its read checks the
// key), an overwrite reads the old record's header once, and an Exist of
// a key whose record is still in a write buffer reads nothing from the
// device.
func TestTagCheckCosts(t *testing.T) {
	o := testOptions(t)
	ns := mustOpen(t, o)
	defer ns.Close()
	const n = 100
	key := func(i int) []byte { return []byte(fmt.Sprintf("key-%03d", i)) }
	val := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 100) }
	for i := range n {
		if err := ns.Store(ctx, key(i), val(i), 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := pushOut(ns); err != nil {
		t.Fatal(err)
	}
	cost := func(what string, checks, reads uint64, f func()) {
		t.Helper()
		st0 := ns.Stats()
		f()
		st := ns.Stats()
		if c, r := st.TagChecks-st0.TagChecks, st.TagReads-st0.TagReads; c != checks || r != reads || st.TagCollisions != st0.TagCollisions {
			t.Fatalf("%s: %d header checks, %d from the device, %d collisions; want %d, %d, 0", what, c, r, st.TagCollisions-st0.TagCollisions, checks, reads)
		}
	}
	cost("Exist of present keys", n, n, func() {
		for i := range n {
			if ok, err := ns.Exist(ctx, key(i)); !ok || err != nil {
				t.Fatalf("Exist %s: %v %v", key(i), ok, err)
			}
		}
	})
	cost("Exist of absent keys", 0, 0, func() {
		for i := n; i < 2*n; i++ {
			if ok, err := ns.Exist(ctx, key(i)); ok || err != nil {
				t.Fatalf("Exist %s: %v %v", key(i), ok, err)
			}
		}
	})
	st0 := ns.Stats()
	cost("Retrieve", 0, 0, func() {
		buf := make([]byte, 100)
		for i := range n {
			if m, err := ns.Retrieve(ctx, key(i), buf); err != nil || m != 100 || !bytes.Equal(buf, val(i)) {
				t.Fatalf("Retrieve %s: %d %v", key(i), m, err)
			}
		}
	})
	if d := ns.Stats().DiskReads - st0.DiskReads; d != n {
		t.Fatalf("%d Retrieves read the device %d times, want once each", n, d)
	}
	cost("overwrite", 1, 1, func() {
		if err := ns.Store(ctx, key(7), val(8), 0); err != nil {
			t.Fatal(err)
		}
	})
	cost("Exist in a write buffer", 1, 0, func() {
		if ok, err := ns.Exist(ctx, key(7)); !ok || err != nil {
			t.Fatalf("Exist %s: %v %v", key(7), ok, err)
		}
	})
}

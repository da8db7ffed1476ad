package tier

import (
	"bytes"
	"testing"
)

// TestOverwriteBeforeRistrettoApplies checks T27: a Set of a key whose
// previous Set ristretto has not applied yet reaches ristretto as a second
// new item, which its policy refuses because it holds the key already; the
// copy is then put in place of the one ristretto stores, not treated as
// evicted. With hot as the only tier, such a copy used to be lost (a third
// of the runs of 1000 overwrites lost the key).
func TestOverwriteBeforeRistrettoApplies(t *testing.T) {
	c, err := Open(Options{HotBytes: 8 << 20, HotMaxValue: 1 << 20, HotCounters: 10000})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for round := 0; round < 20; round++ {
		key := []byte{'k', byte(round)}
		var v []byte
		for i := 0; i < 1000; i++ {
			v = append(v, 'x')
			if _, err := c.Set(key, v, SetOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		c.hot.rc.Wait()
		got, ok, err := c.Get(nil, key)
		if err != nil || !ok || !bytes.Equal(got, v) {
			t.Fatalf("round %d: after 1000 overwrites Get = %d bytes, %v, %v; lost %d", round, len(got), ok, err, c.Stats().Lost)
		}
	}
	if l := c.Stats().Lost; l != 0 {
		t.Fatalf("lost %d", l)
	}
}

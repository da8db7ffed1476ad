package tier

import (
	"fmt"
	"testing"

	"github.com/tiercache/tiercache/coldstore"
)

// TestWriteThroughStoreKeepsOldKeys checks T29: in writethrough mode the
// emulated store never drops an acknowledged record to make room. Keys
// written once stay readable after many times the store's capacity was
// written over other keys, and after a restart. (In Cache mode the store
// reclaims its oldest region, and the first keys were lost.)
func TestWriteThroughStoreKeepsOldKeys(t *testing.T) {
	needURing(t)
	dir := t.TempDir()
	opts := func() Options {
		o := restartOptions(dir, DurabilityWriteThrough)
		emuCold(&o, dir, func(c *coldstore.Config) { c.Capacity, c.RegionBytes = 4<<20, 256<<10 })
		return o
	}
	c, err := Open(opts())
	if err != nil {
		t.Fatal(err)
	}
	old := func(i int) []byte { return []byte(fmt.Sprintf("old-%d-%0500d", i, i)) }
	for i := 0; i < 200; i++ {
		if _, err := c.Set([]byte(fmt.Sprint("old", i)), old(i), SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	churn := make([]byte, 8<<10)
	for i := 0; i < 3000; i++ { // 24 MB over 20 keys: six times the store
		if _, err := c.Set([]byte(fmt.Sprint("churn", i%20)), churn, SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	check := func(c *Cache, when string) {
		t.Helper()
		for i := 0; i < 200; i++ {
			v, ok, err := c.Get(nil, []byte(fmt.Sprint("old", i)))
			if err != nil || !ok || string(v) != string(old(i)) {
				t.Fatalf("%s: old%d = %.20q %v %v (lost %d)", when, i, v, ok, err, c.Stats().Lost)
			}
		}
	}
	check(c, "running")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if c, err = Open(opts()); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	check(c, "after a restart")
}

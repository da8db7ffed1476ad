package tier

import (
	"bytes"
	"testing"
)

// TestWriteThroughShrinkLeavesNoChunks (T28, nvmekv K22): in writethrough
// mode an overwrite's put replaces the cold copy in place (no cold delete
// before it), so when a value that took chunks is overwritten by one that
// fits its header (a string, or an aggregate, that shrank) the put must
// delete the old chunks itself: in the strict store writethrough asks for
// nothing else would, and they would hold capacity for ever. After the
// overwrite and a delete the store holds no record.
func TestWriteThroughShrinkLeavesNoChunks(t *testing.T) {
	needURing(t)
	c := openWith(t, restartOptions(t.TempDir(), DurabilityWriteThrough))
	items := func() int64 { return c.Stats().Tiers[len(c.Stats().Tiers)-1].Items }
	k := []byte("shrinks")
	if _, err := c.Set(k, bytes.Repeat([]byte("a"), 1<<20), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := items(); n < 2 {
		t.Fatalf("the big value takes %d cold records: not chunked, the test does not exercise it", n)
	}
	if _, err := c.Set(k, []byte("small"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := c.Get(nil, k); err != nil || !ok || string(v) != "small" {
		t.Fatalf("after the overwrite: %q, %v, %v", v, ok, err)
	}
	if n := items(); n != 1 {
		t.Errorf("after the overwrite by a small value cold holds %d records, want its header alone", n)
	}
	if _, err := c.Delete(k); err != nil {
		t.Fatal(err)
	}
	if n := items(); n != 0 {
		t.Errorf("after the delete cold holds %d records, want none: the big value's chunks were left behind", n)
	}
}

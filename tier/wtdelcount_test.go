package tier

import (
	"testing"
)

// TestWriteThroughDeleteCountsEachKeyOnce: DEL k k, and DEL of a key
// twice among others, counts each existing key once in writethrough mode
// as in cache mode and as redis-server does (DEL k k answers 1): the
// first delete of k is still in flight, unpublished, when the second is
// counted, and must not count k again.
func TestWriteThroughDeleteCountsEachKeyOnce(t *testing.T) {
	needURing(t)
	for _, d := range []Durability{DurabilityCache, DurabilityWriteThrough} {
		t.Run(string(d), func(t *testing.T) {
			dir := t.TempDir()
			c := openWith(t, restartOptions(dir, d))
			for _, k := range []string{"a", "b"} {
				if _, err := c.Set([]byte(k), []byte("v"+k), SetOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			n, err := c.Delete([]byte("a"), []byte("a"), []byte("b"), []byte("a"), []byte("missing"))
			if err != nil {
				t.Fatal(err)
			}
			if n != 2 {
				t.Fatalf("DEL a a b a missing = %d, want 2 (redis-server counts each key once)", n)
			}
			for _, k := range []string{"a", "b"} {
				if _, ok, err := c.Get(nil, []byte(k)); ok || err != nil {
					t.Fatalf("%s still reads after DEL (err %v)", k, err)
				}
			}
		})
	}
}

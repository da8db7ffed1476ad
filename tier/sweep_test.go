package tier

import (
	"fmt"
	"testing"
	"time"
)

// TestSweepWalksOnlyShardsWithExpiries (T54): the sweep walks no shard
// while no key has an expiry, walks the shards of keys given one (by Set
// or Expire) until they expired and were purged, and purges each.
func TestSweepWalksOnlyShardsWithExpiries(t *testing.T) {
	clock := int64(1000 * time.Second)
	c, err := Open(Options{HotBytes: 4 << 20, Clock: func() int64 { return clock }, SweepInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := range 2000 {
		if _, err := c.Set([]byte(fmt.Sprintf("plain:%d", i)), []byte("v"), SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	walks := func() uint64 {
		before := c.st.sweepWalks.Load()
		c.sweep(c.now())
		return c.st.sweepWalks.Load() - before
	}
	if n := walks(); n != 0 {
		t.Fatalf("the sweep walked %d shards where no key has an expiry", n)
	}
	if _, err := c.Set([]byte("ttl:set"), []byte("v"), SetOptions{TTL: time.Second}); err != nil {
		t.Fatal(err)
	}
	if !c.Expire([]byte("plain:7"), 2*time.Second) {
		t.Fatal("Expire of a key that exists answered false")
	}
	if n := walks(); n == 0 || n > 2 {
		t.Fatalf("the sweep walked %d shards for 2 keys with an expiry, not expired yet", n)
	}
	clock += int64(3 * time.Second)
	if n := walks(); n == 0 || n > 2 {
		t.Fatalf("the sweep walked %d shards for 2 expired keys", n)
	}
	for _, k := range []string{"ttl:set", "plain:7"} {
		if _, ok, _ := c.Get(nil, []byte(k)); ok {
			t.Errorf("%s expired and is still there", k)
		}
	}
	if c.st.expired.Load() < 2 {
		t.Errorf("expired %d keys, want 2", c.st.expired.Load())
	}
	if n := walks(); n != 0 {
		t.Fatalf("the sweep walked %d shards once every key with an expiry was purged", n)
	}
	if _, ok, _ := c.Get(nil, []byte("plain:8")); !ok {
		t.Error("a key without an expiry was lost")
	}
}

// BenchmarkSweep: one sweep over 1M directory entries, with no key given
// an expiry (no shard walked, T54) and with one far-off expiry in every
// shard (every shard walked, as every sweep did before T54).
func BenchmarkSweep(b *testing.B) {
	c, err := Open(Options{HotBytes: 256 << 20, SweepInterval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	for i := range 1_000_000 {
		if _, err := c.Set([]byte(fmt.Sprintf("k:%d", i)), []byte("v"), SetOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("none", func(b *testing.B) {
		for range b.N {
			c.sweep(c.now())
		}
	})
	for i := 0; i < 100_000; i++ { // far more than shards: each gets some
		c.Expire([]byte(fmt.Sprintf("k:%d", i)), time.Hour)
	}
	b.Run("every-shard", func(b *testing.B) {
		for range b.N {
			c.sweep(c.now())
		}
	})
}

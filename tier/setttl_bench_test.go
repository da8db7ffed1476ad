package tier

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkSetTTL overwrites keys of 16-byte values in DRAM, in a
// scattered order, without an expiry and with one (which files the key
// in its shard's expiry index again, T55): the cost of keeping the index.
func BenchmarkSetTTL(b *testing.B) {
	for _, n := range []int{1 << 10, 1 << 20} {
		for _, ttl := range []time.Duration{0, time.Hour} {
			b.Run(fmt.Sprintf("keys=%d/ttl=%v", n, ttl), func(b *testing.B) {
				c, err := Open(Options{HotBytes: 256 << 20, SweepInterval: time.Hour})
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				keys, val := make([][]byte, n), make([]byte, 16)
				for i := range keys {
					keys[i] = []byte(fmt.Sprintf("key:%d", i))
					if _, err := c.Set(keys[i], val, SetOptions{TTL: ttl}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if _, err := c.Set(keys[i*7919%n], val, SetOptions{TTL: ttl}); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}

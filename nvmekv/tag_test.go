package nvmekv

import (
	"math/rand/v2"
	"testing"
)

// TestTagOf checks K19.
func TestTagOf(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var k [16]byte
	for range 1000 {
		for i := range k {
			k[i] = byte(r.Uint32())
		}
		t0 := TagOf(&k)
		for i := range k {
			k2 := k
			k2[i] ^= byte(1 + r.IntN(255))
			if TagOf(&k2) == t0 {
				t.Fatalf("flipping byte %d of %x kept its tag %08x", i, k, t0)
			}
		}
	}
	const n = 200_000
	seen := make(map[uint32]int, n)
	pairs := 0
	for range n {
		for i := range k {
			k[i] = byte(r.Uint32())
		}
		tag := TagOf(&k)
		pairs += seen[tag]
		seen[tag]++
	}
	// n²/2 pairs at 2^-32 each: about 4.7 expected; 30 is far in the tail.
	if want := float64(n) * n / 2 / (1 << 32); pairs > 30 {
		t.Fatalf("%d pairs of %d keys share a tag, expected about %.1f", pairs, n, want)
	}
}

package warm

import (
	"math/rand/v2"
	"testing"
)

// TestIndexModel checks the open-addressing index against a map, with
// clustered hashes so backward-shift deletion crosses the table's end.
func TestIndexModel(t *testing.T) {
	x := newIndex(0)
	model := map[uint64]uint64{}
	rng := rand.New(rand.NewPCG(7, 7))
	for i := 0; i < 200_000; i++ {
		h := uint64(rng.IntN(2000))*uint64(minIndexSlots) + uint64(rng.IntN(4)) + uint64(minIndexSlots-2)
		switch rng.IntN(3) {
		case 0, 1:
			loc := rng.Uint64()
			old, existed := x.put(h, loc)
			if mo, ok := model[h]; ok != existed || (ok && mo != old) {
				t.Fatalf("put(%d) = %d %v, model %d %v", h, old, existed, mo, ok)
			}
			model[h] = loc
		default:
			_, ok := model[h]
			if got := x.del(h); got != ok {
				t.Fatalf("del(%d) = %v, model %v", h, got, ok)
			}
			delete(model, h)
		}
		if i%1000 == 0 {
			for k, v := range model {
				if got, ok := x.get(k); !ok || got != v {
					t.Fatalf("get(%d) = %d %v, want %d", k, got, ok, v)
				}
			}
		}
	}
	if x.n != len(model) {
		t.Fatalf("n = %d, model %d", x.n, len(model))
	}
}

func TestLocPacking(t *testing.T) {
	loc := packLoc(genMask, locOffMask)
	if locGen(loc) != genMask || locOff(loc) != locOffMask {
		t.Fatal("loc packing loses bits")
	}
	if recSize(1, 0)%8 != 0 || recSize(0, 0) != hdrSize {
		t.Fatal("record size not 8-aligned")
	}
}

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

// TestRecordLayout pins the record header offsets documented in record.go.
func TestRecordLayout(t *testing.T) {
	b := make([]byte, recSize(3, 5))
	writeRecord(b, 0x0102030405060708, []byte("key"), []byte("value"), Meta{Expiry: 0x1112131415161718, Version: 0x2122232425262728})
	for _, tc := range []struct {
		name string
		off  int
		want []byte
	}{
		{"hash", offHash, []byte{8, 7, 6, 5, 4, 3, 2, 1}},
		{"expiry", offExpiry, []byte{0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11}},
		{"version", offVersion, []byte{0x28, 0x27, 0x26, 0x25, 0x24, 0x23, 0x22, 0x21}},
		{"value length", offValLen, []byte{5, 0, 0, 0}},
		{"key length and flags", offKeyWord, []byte{3, 0, 0, 0}},
		{"key", hdrSize, []byte("key")},
		{"value", hdrSize + 3, []byte("value")},
	} {
		if got := b[tc.off : tc.off+len(tc.want)]; string(got) != string(tc.want) {
			t.Errorf("%s at %d = %x, want %x", tc.name, tc.off, got, tc.want)
		}
	}
	if len(b) != 40 {
		t.Errorf("record of 3+5 bytes is %d bytes, want 40", len(b))
	}
	r := readRecord(b, 3|flagHit)
	if string(r.key) != "key" || string(r.value) != "value" || r.meta.Version != 0x2122232425262728 || r.hash != 0x0102030405060708 {
		t.Errorf("readRecord = %+v", r)
	}
}

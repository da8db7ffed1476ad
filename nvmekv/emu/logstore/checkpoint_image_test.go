package logstore

import (
	"encoding/binary"
	"fmt"
	"os"
	"testing"
)

// TestCheckpointImage (E29): a clean close writes an index at least 3/4
// full as a table image (CK4) that Open reads back into a table of the
// same size, with every key where it was; a sparser index, and any index
// with images turned off, is written as entries (CK3) and loads as well;
// a byte of the image flipped fails the CRC, and Open scans the regions
// instead, finding every key.
func TestCheckpointImage(t *testing.T) {
	for _, c := range []struct {
		name      string
		image     bool
		keys      int // the table holds 4552 slots: 3640 keys fill it to 0.8
		corrupt   bool
		magic     uint64
		recovered string
	}{
		{"image", true, 3640, false, ckMagicImage, "checkpoint"},
		{"entries (CK3)", false, 3640, false, ckMagic, "checkpoint"},
		{"sparse: entries", true, 500, false, ckMagic, "checkpoint"},
		{"image with a flipped byte", true, 3640, true, ckMagicImage, "scan"},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func(v bool) { writeImages = v }(writeImages)
			writeImages = c.image
			o := testOptions(t)
			o.Capacity = 64 * (64 << 10)
			l := mustOpenLog(t, o)
			keys := c.keys
			want := map[string]Loc{}
			for i := 0; i < keys; i++ {
				k := fmt.Sprintf("k%d", i)
				l.store(t, k, testValue(i, 0, 40+i%100))
			}
			for i := 0; i < keys; i += 50 { // deletes leave the table with holes
				ks := fmt.Sprintf("k%d", i)
				var k [16]byte
				copy(k[:], ks)
				loc, _ := l.lookup(ks)
				l.Lock()
				st := l.DeleteLocked(&k, len(ks), loc)
				l.Unlock()
				if st != 0 {
					t.Fatalf("delete %s: result %#x", ks, st)
				}
			}
			for i := 0; i < keys; i++ {
				k := fmt.Sprintf("k%d", i)
				if loc, ok := l.lookup(k); ok {
					want[k] = loc
				}
			}
			n := l.idx.cur.n
			l.close(t)
			b, err := os.ReadFile(o.Path + ".ckpt")
			if err != nil {
				t.Fatal(err)
			}
			if m := binary.LittleEndian.Uint64(b); m != c.magic {
				t.Fatalf("checkpoint magic %#x, want %#x", m, c.magic)
			}
			if c.corrupt {
				b[len(b)-100] ^= 0x40 // inside the image
				if err := os.WriteFile(o.Path+".ckpt", b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			l = mustOpenLog(t, o)
			defer l.close(t)
			if got := l.Stats().Recovered; got != c.recovered {
				t.Fatalf("recovered by %q, want %q", got, c.recovered)
			}
			if c.image && !c.corrupt && l.idx.cur.n != n {
				t.Fatalf("the loaded table has %d slots, the saved one %d", l.idx.cur.n, n)
			}
			if got := l.idx.len(); got != len(want) {
				t.Fatalf("index holds %d keys, want %d", got, len(want))
			}
			for k, loc := range want {
				if got, ok := l.lookup(k); !ok || got != loc {
					t.Fatalf("%s: %#x %v, want %#x", k, got, ok, loc)
				}
			}
		})
	}
}

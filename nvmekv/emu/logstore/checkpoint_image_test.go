package logstore

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"sync/atomic"
	"testing"
)

// TestCheckpointImage (E29): a clean close writes the key index as CK5
// (inline entries as tag + Loc, extent entries as key + Loc) and Open
// reads it back with every key where it was; checkpoints of the earlier
// formats, CK3 entries and a CK4 keyed-table image (written here through
// the test seam), load as well, their tags computed from their keys; a
// flipped byte fails the CRC, and Open scans the regions instead,
// finding every key.
func TestCheckpointImage(t *testing.T) {
	for _, c := range []struct {
		name      string
		format    int
		keys      int
		corrupt   bool
		magic     uint64
		recovered string
	}{
		{"tags (CK5)", 5, 3640, false, ckMagicTags, "checkpoint"},
		{"entries (CK3)", 3, 3640, false, ckMagic, "checkpoint"},
		{"image (CK4)", 4, 3640, false, ckMagicImage, "checkpoint"},
		{"few keys", 5, 500, false, ckMagicTags, "checkpoint"},
		{"tags with a flipped byte", 5, 3640, true, ckMagicTags, "scan"},
		{"image with a flipped byte", 4, 3640, true, ckMagicImage, "scan"},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func(v int) { ckWriteFormat = v }(ckWriteFormat)
			ckWriteFormat = c.format
			o := testOptions(t)
			o.Capacity = 64 * (64 << 10)
			l := mustOpenLog(t, o)
			keys := c.keys
			want := map[string]Loc{}
			for i := 0; i < keys; i++ {
				k := fmt.Sprintf("k%d", i)
				n := 40 + i%100
				if i%97 == 0 {
					n = 4096 // an extent: its key is in the index
				}
				l.store(t, k, testValue(i, 0, n))
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
			l.close(t)
			b, err := os.ReadFile(o.Path + ".ckpt")
			if err != nil {
				t.Fatal(err)
			}
			if m := binary.LittleEndian.Uint64(b); m != c.magic {
				t.Fatalf("checkpoint magic %#x, want %#x", m, c.magic)
			}
			if c.corrupt {
				b[len(b)-100] ^= 0x40 // inside the entries
				if err := os.WriteFile(o.Path+".ckpt", b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			l = mustOpenLog(t, o)
			defer l.close(t)
			if got := l.Stats().Recovered; got != c.recovered {
				t.Fatalf("recovered by %q, want %q", got, c.recovered)
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

// TestCheckpointInlineLocPastRegion (E29, E8): a checkpoint whose CRC
// holds but whose inline entry names an offset past its region's end
// (which no tag slot holds) is refused, and Open scans the regions
// instead, finding every key.
func TestCheckpointInlineLocPastRegion(t *testing.T) {
	o := testOptions(t)
	l := reopenEdited(t, o, func(b []byte, regions int) {
		if binary.LittleEndian.Uint64(b) != ckMagicTags {
			t.Fatalf("checkpoint magic %#x, want CK5's", binary.LittleEndian.Uint64(b))
		}
		e := ckTagsHdrBytes + 16*regions // the first inline entry: u32 tag, u64 Loc
		loc := Loc(binary.LittleEndian.Uint64(b[e+4:]))
		past := mkLoc(loc.Region(), loc.KLen(), 2*o.RegionBytes, loc.Size())
		binary.LittleEndian.PutUint64(b[e+4:], uint64(past))
	})
	l.close(t)
}

// reopenEdited stores 500 keys in a new log of options o, closes it,
// changes its checkpoint with edit (given the file and the log's region
// count), puts the file's CRC right, and reopens the log: the checkpoint
// must be refused, and every key is found where it was by the scan.
func reopenEdited(t *testing.T, o Options, edit func(b []byte, regions int)) *testLog {
	t.Helper()
	l := mustOpenLog(t, o)
	for i := 0; i < 500; i++ {
		l.store(t, fmt.Sprintf("k%d", i), testValue(i, 0, 40+i%100))
	}
	want := map[string]Loc{}
	for i := 0; i < 500; i++ {
		k := fmt.Sprintf("k%d", i)
		want[k], _ = l.lookup(k)
	}
	regions := len(l.regs)
	l.close(t)
	b, err := os.ReadFile(o.Path + ".ckpt")
	if err != nil {
		t.Fatal(err)
	}
	edit(b, regions)
	binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], castagnoli))
	if err := os.WriteFile(o.Path+".ckpt", b, 0o644); err != nil {
		t.Fatal(err)
	}
	l = mustOpenLog(t, o)
	if got := l.Stats().Recovered; got != "scan" {
		l.close(t)
		t.Fatalf("recovered by %q, want scan", got)
	}
	for k, loc := range want {
		if got, ok := l.lookup(k); !ok || got != loc {
			l.close(t)
			t.Fatalf("%s: %#x %v, want %#x", k, got, ok, loc)
		}
	}
	return l
}

// TestCheckpointCountPastFile (E29, E27): a checkpoint whose header counts
// more entries than its file holds (a damaged count, in CK5 and in CK3)
// is refused before an index is sized for that count, and Open scans:
// the index tables the reopen maps (through Options.BindIndex, E28) are
// what the store's 500 keys need, not the 75 MB of 6.7M keys.
func TestCheckpointCountPastFile(t *testing.T) {
	defer func(f int) { ckWriteFormat = f }(ckWriteFormat)
	for _, format := range []int{5, 3} {
		t.Run(fmt.Sprint("CK", format), func(t *testing.T) {
			ckWriteFormat = format
			o := testOptions(t)
			o.Capacity, o.Sparse = 1<<12*int64(o.RegionBytes), true
			var mapped atomic.Int64
			o.BindIndex = func(mem []byte) error { mapped.Add(int64(len(mem))); return nil }
			maxKeys := uint64(0)
			l := reopenEdited(t, o, func(b []byte, regions int) {
				maxKeys = uint64(regions) * uint64(o.RegionBytes) / recHdrBytes // maxCkKeys
				binary.LittleEndian.PutUint64(b[56:], maxKeys)                  // the header's entry count
				mapped.Store(0)
			})
			defer l.close(t)
			if m := mapped.Load(); m > 4<<20 {
				t.Fatalf("the reopen mapped %d bytes of index tables for a checkpoint counting %d entries", m, maxKeys)
			}
		})
	}
}

// TestCheckpointDuplicateEntry (E29, E6): a CK5 checkpoint whose CRC
// holds but which names one record twice (its second inline entry a copy
// of its first), so that its regions' counts are not what its entries
// hold, is refused, and Open scans: every key is found where it is, and
// the accounting adds up. Loaded, it lost the key whose entry the copy
// took, and the copy would outlive the other key's Delete.
func TestCheckpointDuplicateEntry(t *testing.T) {
	l := reopenEdited(t, testOptions(t), func(b []byte, regions int) {
		e := ckTagsHdrBytes + 16*regions // the first inline entry
		copy(b[e+ckTagEntry:e+2*ckTagEntry], b[e:e+ckTagEntry])
	})
	defer l.close(t)
	if err := l.CheckAccounting(); err != nil {
		t.Fatal(err)
	}
}

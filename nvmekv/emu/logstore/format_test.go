package logstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"strings"
	"testing"
)

// TestUseExtent: which value sizes go in an extent (E10, E13).
func TestUseExtent(t *testing.T) {
	for v, want := range map[int]bool{0: false, 100: false, 3544: false, 3545: true, 4096: true, 4150: false, 8000: true, 8192: true, 8193: false, 12000: true} {
		if got := useExtent(v); got != want {
			t.Errorf("useExtent(%d) = %v, want %v", v, got, want)
		}
	}
}

// TestWalkExtentSeeds: the fuzz seeds' meaning: an inline and an extent
// record are found; with the extent changed, only the inline one.
func TestWalkExtentSeeds(t *testing.T) {
	img := make([]byte, 12288)
	testSB.putRegionHdr(img, 9)
	putRecord(img[regionHdr:], kindStore, 9, []byte("a"), []byte("small"))
	putExtRecord(img, regionHdr+recSize(5), 9, []byte("b"), 8192, testValue(1, 1, 4096))
	count := func() (n int, end, low int, torn bool) {
		end, low, torn = walkRegion(img, 9, 4096, func(int, *rec) { n++ })
		return
	}
	if n, end, low, torn := count(); n != 2 || end != blockBytes || low != 8192 || torn {
		t.Fatalf("walk: %d records, end %d, low %d, torn %v", n, end, low, torn)
	}
	img[8192+4095] ^= 1
	if n, end, low, torn := count(); n != 1 || end != regionHdr+recSize(5) || low != len(img) || !torn {
		t.Fatalf("walk of a torn extent: %d records, end %d, low %d, torn %v", n, end, low, torn)
	}
}

// TestOldFormatRefused: E11. A store written by format version 1 is
// refused with ErrFormat saying what to do, and is not modified.
func TestOldFormatRefused(t *testing.T) {
	o := testOptions(t)
	l := mustOpenLog(t, o)
	l.store(t, "k", []byte("v"))
	l.close(t)
	f, err := os.OpenFile(o.Path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	sb := make([]byte, blockBytes)
	f.ReadAt(sb, 0)
	binary.LittleEndian.PutUint32(sb[8:], 1)
	binary.LittleEndian.PutUint32(sb[56:], crc32.Checksum(sb[:56], castagnoli))
	f.WriteAt(sb, 0)
	f.Close()
	before, _ := os.ReadFile(o.Path)
	if l, err = openLog(t, o); err == nil {
		l.close(t)
	}
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "older format") || !strings.Contains(err.Error(), o.Path) ||
		!strings.Contains(err.Error(), "delete") {
		t.Fatalf("Open of a version-1 store = %v", err)
	}
	if after, _ := os.ReadFile(o.Path); !bytes.Equal(before, after) {
		t.Fatal("the version-1 store was modified")
	}
}

// TestVersion2StoreOpens: a store whose superblock is version 2 (region
// headers without the store id) still opens by scan with every key, and
// keeps writing version-2 headers.
func TestVersion2StoreOpens(t *testing.T) {
	o := testOptions(t)
	o.CheckpointPath = "-"
	l := mustOpenLog(t, o)
	for i := 0; i < 100; i++ {
		l.store(t, fmt.Sprintf("k%03d", i), make([]byte, 3000))
	}
	l.close(t)
	asVersion2(t, o.Path)
	l = mustOpenLog(t, o)
	for i := 0; i < 100; i++ {
		if loc, ok := l.lookup(fmt.Sprintf("k%03d", i)); !ok || loc.Ext() || loc.Size() != recSize(3000) {
			t.Fatalf("k%03d of the version-2 store: %v, loc %x", i, ok, uint64(loc))
		}
	}
	if l.sb.version != sbVersionV2 {
		t.Fatalf("superblock version %d after opening a version-2 store", l.sb.version)
	}
	l.store(t, "after", []byte("v"))
	l.close(t)
	l = mustOpenLog(t, o)
	defer l.close(t)
	if _, ok := l.lookup("after"); !ok {
		t.Fatal("a key stored in the version-2 store is gone after a scan")
	}
}

// TestWalkRefusesOversizedValue (E4, E8): a record whose value is larger
// than MaxValueBytes, which no Store writes and no Loc holds (its size
// would spill into the Loc's offset, its extent's length into the
// extent's block), is not taken by a walk of a region large enough for
// it, though its CRC holds: the walk stops there as at a torn record,
// inline or extent.
func TestWalkRefusesOversizedValue(t *testing.T) {
	const seq, R = 9, 16 << 20
	for _, ext := range []bool{false, true} {
		img := make([]byte, R)
		testSB.putRegionHdr(img, seq)
		putRecord(img[regionHdr:], kindStore, seq, []byte("a"), []byte("small"))
		off, big := regionHdr+recSize(5), testValue(2, 0, MaxValueBytes+(1<<20))
		if ext {
			big = big[:4<<20+blockBytes] // an extent's whole blocks
			putExtRecord(img, off, seq, []byte("big"), R-extBytes(len(big)), big)
		} else {
			putRecord(img[off:], kindStore, seq, []byte("big"), big)
		}
		var got []string
		end, _, torn := walkRegion(img, seq, R, func(o int, r *rec) {
			got = append(got, fmt.Sprintf("%s at %d, Loc size %d", r.key[:r.klen], o, r.locIn(0, o).Size()))
		})
		if len(got) != 1 || !torn || end != off {
			t.Fatalf("extent %v: walked %q, end %d (torn %v); want the first record alone, torn at %d", ext, got, end, torn, off)
		}
	}
}

package logstore

import (
	"crypto/rand"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestDrainReleasesOldTable (E25): while a grown keyed index (the extent
// table's kind) drains its old off-heap table, the huge pages the drain
// has passed are released (TestOffHeapRelease): bytes counts cur plus
// what old has left, and the keys are still found.
func TestDrainReleasesOldTable(t *testing.T) {
	x := newIndex(0, nil)
	var keys [][16]byte
	released := false
	for i := 0; i < 900_000 && !released; i++ {
		var k [16]byte
		rand.Read(k[:])
		keys = append(keys, k)
		x.put(&k, mkLoc(i%1000+1, 16, 16*(i%1000), 64))
		if old := x.old; old != nil && old.off != nil && old.off.released >= 2*hugeTableBytes {
			released = true
			whole := x.cur.memBytes() + old.memBytes()
			if b := x.bytes(); b > whole-old.off.released {
				t.Errorf("bytes %d with %d bytes of the old table released: want at most %d", b, old.off.released, whole-old.off.released)
			}
		}
	}
	if !released {
		t.Fatal("no drain released 2 huge pages of an old table in 900,000 puts")
	}
	for i := range keys {
		if l, ok := x.get(&keys[i]); !ok || l != mkLoc(i%1000+1, 16, 16*(i%1000), 64) {
			t.Fatalf("key %d of %d not found after the release", i, len(keys))
		}
	}
}

// TestOffHeapRelease (E25): release gives the whole huge pages below its
// bound back to the kernel (the process's RSS drops by them), and the
// released slots read as empty.
func TestOffHeapRelease(t *testing.T) {
	n := 4 * hugeTableBytes / tslotBytes
	slots, h := newSlots[tslot](n, nil)
	if h == nil {
		t.Fatal("a 4-huge-page table is not off the Go heap")
	}
	for i := range slots {
		slots[i] = tslot{1, 2, 3}
	}
	before, err := vmRSS()
	if err != nil {
		t.Fatal(err)
	}
	h.release(2*hugeTableBytes + 100) // rounds down to 2 huge pages
	after, err := vmRSS()
	if err != nil {
		t.Fatal(err)
	}
	if h.released != 2*hugeTableBytes || before-after < 3*hugeTableBytes/2 {
		t.Fatalf("released %d bytes, RSS %d -> %d: want 2 huge pages given back", h.released, before, after)
	}
	// The first slot wholly above the released bytes (a slot may straddle
	// the bound: the drain releases only below its empty slots, growth.go).
	above := (2*hugeTableBytes + tslotBytes - 1) / tslotBytes
	if slots[0] != (tslot{}) || slots[above-2] != (tslot{}) || slots[above] != (tslot{1, 2, 3}) {
		t.Fatalf("slots after the release: %v %v %v, want empty, empty, kept", slots[0], slots[above-2], slots[above])
	}
	h.release(hugeTableBytes) // below what is released: nothing to do
	if h.released != 2*hugeTableBytes {
		t.Fatalf("released %d after a lower bound", h.released)
	}
}

// vmRSS is the process's resident set, from /proc/self/status.
func vmRSS() (int, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmRSS:" {
			kb, err := strconv.Atoi(f[1])
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmRSS in /proc/self/status")
}

package logstore

import (
	"crypto/rand"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestDrainReleasesOldTable (E25): while a grown index drains its old
// off-heap table, the huge pages the drain has passed are released
// (TestOffHeapRelease): IndexBytes counts cur plus what old has left, and
// the keys are still found.
func TestDrainReleasesOldTable(t *testing.T) {
	o := testOptions(t)
	o.RegionBytes = 4 << 20
	o.Capacity = 160 * int64(o.RegionBytes)
	l := mustOpenLog(t, o)
	defer l.close(t)
	v := make([]byte, 570)
	var keys [][16]byte
	released := false
	for i := 0; i < 900000 && !released; i++ {
		var k [16]byte
		rand.Read(k[:])
		keys = append(keys, k)
		l.Lock()
		if st := l.StoreLocked(&k, 16, v); st != 0 {
			l.Unlock()
			t.Fatalf("store %d: %#x", i, st)
		}
		x := l.idx.tags
		if old := x.old; old != nil && old.off != nil && old.off.released >= 2*hugeTableBytes {
			released = true
			whole := x.cur.memBytes() + old.memBytes() + l.idx.ext.bytes()
			if b := l.idx.bytes(); b > whole-old.off.released {
				t.Errorf("IndexBytes %d with %d bytes of the old table released: want at most %d", b, old.off.released, whole-old.off.released)
			}
		}
		l.Unlock()
	}
	if !released {
		t.Fatal("no drain released 2 huge pages of an old table in 900,000 stores")
	}
	for i := 0; i < len(keys); i += 61 { // an exact lookup reads a header: a sample
		if _, ok := l.Lookup(&keys[i], 16); !ok {
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

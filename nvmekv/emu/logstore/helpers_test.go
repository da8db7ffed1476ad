package logstore

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tiercache/tiercache/nvmekv/emu/dev"
	"github.com/tiercache/tiercache/nvmekv/emu/rings"
)

// testSB is the superblock of the region images tests build by hand.
var testSB = superblock{version: sbVersion, storeID: 0x5eed}

// testOptions: 16 regions of 64 KiB.
func testOptions(t testing.TB) Options {
	return Options{Path: t.TempDir() + "/log", Capacity: 16 * (64 << 10), RegionBytes: 64 << 10, MaxValueBytes: 4096}
}

// testLog is a Log on a file through its own rings, as nvmekv/emu opens
// one.
type testLog struct {
	*Log
	rg *rings.Rings
	d  dev.Device
}

func openLog(t testing.TB, o Options) (*testLog, error) {
	t.Helper()
	d, err := dev.OpenFile(o.Path)
	if err != nil {
		return nil, err
	}
	rg, err := rings.Open(d, rings.Options{Entries: 64, Buffers: []int{o.RegionBytes, o.RegionBytes, o.RegionBytes}})
	if err != nil {
		d.Close()
		return nil, err
	}
	o.WriteBuffers = []uint16{0, 1, 2}
	lg, err := Open(rg, o)
	if err != nil {
		rg.Close()
		d.Close()
		return nil, err
	}
	return &testLog{Log: lg, rg: rg, d: d}, nil
}

func mustOpenLog(t testing.TB, o Options) *testLog {
	t.Helper()
	l, err := openLog(t, o)
	if err != nil {
		t.Fatalf("open the log on %s: %v", o.Path, err)
	}
	return l
}

// close closes the log, then its rings and file.
func (l *testLog) close(t testing.TB) {
	t.Helper()
	if err := l.Log.Close(); err != nil {
		t.Error(err)
	}
	l.rg.Close()
	l.d.Close()
}

// store stores value under key.
func (l *testLog) store(t testing.TB, key string, value []byte) {
	t.Helper()
	var k [16]byte
	copy(k[:], key)
	l.Lock()
	st := l.StoreLocked(&k, len(key), value)
	l.Unlock()
	if st != 0 {
		t.Fatalf("store %s: result %#x", key, st)
	}
}

// lookup finds key in the index.
func (l *testLog) lookup(key string) (Loc, bool) {
	var k [16]byte
	copy(k[:], key)
	return l.Lookup(&k, len(key))
}

func testValue(id, gen, n int) []byte {
	v := make([]byte, n)
	for i := range v {
		v[i] = byte(id*31 + gen*7 + i)
	}
	return v
}

// testLay's slots hold whole tags and the Locs index tests make (regions
// up to 1022 of 64 KiB); deepLay's, those of 2^19-2 regions of 1 MiB,
// hold a tag's low 23 bits, its segment's prefix of 9 or more the rest
// (E8).
var testLay, deepLay = mustLayout(1023, 64<<10), mustLayout(maxRegions, 1<<20)

func mustLayout(regions, regionBytes int) *slotLayout {
	y, err := newSlotLayout(regions, regionBytes)
	if err != nil {
		panic(err)
	}
	return &y
}

// churnKey is the i-th key churn writes: 1 to 16 bytes.
func churnKey(i int) string { return fmt.Sprintf("%0*d", 1+i%16, i) }

// churn runs ops random writes over keys churnKey(0..keys-1): one in
// delEvery deletes the key (if found), the rest store 1..maxValue bytes,
// or 4096 (an extent) one time in extentEvery.
func (l *testLog) churn(t testing.TB, r *rand.Rand, keys, ops, delEvery, maxValue, extentEvery int) {
	t.Helper()
	for i := 0; i < ops; i++ {
		key := churnKey(r.IntN(keys))
		if r.IntN(delEvery) == 0 {
			var k [16]byte
			copy(k[:], key)
			l.Lock()
			if loc, ok, err := l.FindLocked(&k, len(key)); err == nil && ok {
				if st := l.DeleteLocked(&k, len(key), loc); st != 0 {
					l.Unlock()
					t.Fatalf("delete %s: %#x", key, st)
				}
			}
			l.Unlock()
			continue
		}
		n := 1 + r.IntN(maxValue)
		if r.IntN(extentEvery) == 0 {
			n = 4096 // an extent
		}
		l.store(t, key, testValue(i, 0, n))
	}
}

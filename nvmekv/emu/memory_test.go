package emu

import (
	"fmt"
	"testing"

	"github.com/tiercache/tiercache/nvmekv/emu/readpath"
)

// TestReadBuffersBySize: E24. The namespace pins its three region write
// buffers and a read slab of ReadSlots × 8 KiB, nothing more; a batch
// mixing small records (a slot each), larger ones (a pooled heap buffer
// each) and a 3 MiB extent read straight into its buffer reads every value
// from the device, twice (the second time from the pools).
func TestReadBuffersBySize(t *testing.T) {
	o := testOptions(t)
	o.RegionBytes, o.Capacity, o.MaxValueBytes, o.ReadSlots = 8<<20, 64<<20, 4<<20-4096, 16
	ns := mustOpen(t, o)
	defer ns.Close()
	st := ns.Stats()
	if want := 3*o.RegionBytes + o.ReadSlots*readpath.SlotBytes; st.BufferBytes != want || st.SlabBytes != o.ReadSlots*8<<10 {
		t.Fatalf("registered buffers %d bytes (slab %d), want %d (three regions and %d slots of 8 KiB)", st.BufferBytes, st.SlabBytes, want, o.ReadSlots)
	}
	sizes := []int{100, 3000, 6000, 9000, 20000, 70000, 300000, 3 << 20}
	want := map[string][]byte{}
	var keys []string
	for i := range 3 * len(sizes) {
		k := fmt.Sprintf("v%02d", i)
		want[k] = extValue(i, 0, sizes[i%len(sizes)])
		if err := ns.Store(ctx, []byte(k), want[k], 0); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	if err := pushOut(ns); err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		st0 := ns.Stats()
		disk, _, _ := retrieveAll(t, ns, keys, want)
		st := ns.Stats()
		if disk != uint64(len(keys)) || st.HeapReads-st0.HeapReads != 3*4 {
			t.Fatalf("round %d: %d disk reads, %d into heap buffers; want %d and 12 (the 9000-, 20000-, 70000- and 300000-byte values)",
				round, disk, st.HeapReads-st0.HeapReads, len(keys))
		}
	}
}

// TestIndexGrowsWithKeys: E25. A 1 GiB namespace starts with a small
// index (not one sized for its capacity: 14 MB), which grows with the keys
// stored, keeps every key through growth, a reopen from the checkpoint and
// a scan, and stays within a few dozen bytes a key.
func TestIndexGrowsWithKeys(t *testing.T) {
	o := testOptions(t)
	o.RegionBytes, o.Capacity, o.MaxValueBytes, o.Sparse = 1<<20, 1<<30, 64<<10, true
	ns := mustOpen(t, o)
	if b := ns.Stats().IndexBytes; b > 128<<10 {
		t.Fatalf("an empty 1 GiB namespace has a %d-byte index, want it sized for 4096 keys", b)
	}
	const keys = 30_000
	for i := range keys {
		if err := ns.Store(ctx, []byte(fmt.Sprintf("k%05d", i)), []byte("v"), 0); err != nil {
			t.Fatal(err)
		}
	}
	bound := func(what string, ns *Namespace) {
		t.Helper()
		st := ns.Stats()
		if st.Items != keys || st.IndexBytes > 24*3*keys {
			t.Fatalf("%s: %d keys in a %d-byte index, want %d in at most %d", what, st.Items, st.IndexBytes, keys, 24*3*keys)
		}
		for i := 0; i < keys; i += 7 {
			if ok, err := ns.Exist(ctx, []byte(fmt.Sprintf("k%05d", i))); !ok || err != nil {
				t.Fatalf("%s: k%05d: %v %v", what, i, ok, err)
			}
		}
	}
	checkReopened(t, o, ns, func(ns *Namespace, what string) { bound(what, ns) })
}

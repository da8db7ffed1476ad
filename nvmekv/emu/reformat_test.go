package emu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"testing"

	"github.com/tiercache/tiercache/nvmekv"
)

// TestReformatIgnoresEarlierStore: E22. A store is written and closed; its
// superblock is cleared (as a test, an operator or a new deployment does
// to a device), a new store is formatted over it and crashes after one
// Store. The scan that reopens it finds that key and none of the earlier
// store's, although their regions and records are still on the device.
func TestReformatIgnoresEarlierStore(t *testing.T) {
	o := testOptions(t)
	ns := mustOpen(t, o)
	for i := 0; i < 300; i++ { // 300 × 3 KiB: every region written at least once
		if err := ns.Store(ctx, []byte(fmt.Sprintf("old%03d", i)), make([]byte, 3000), 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := ns.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(o.Path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, blockBytes), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	os.Remove(o.Path + ".ckpt")

	ns = mustOpen(t, o)
	if r := ns.Stats().Recovered; r != "fresh" {
		t.Fatalf("a cleared superblock opened by %q, want fresh", r)
	}
	if err := ns.Store(ctx, []byte("new"), []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	if err := ns.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	crashDrop(ns)
	o.CheckpointPath = "-"
	ns = mustOpen(t, o)
	defer ns.Close()
	buf := make([]byte, 4096)
	if n, err := ns.Retrieve(ctx, []byte("new"), buf); err != nil || string(buf[:n]) != "v" {
		t.Fatalf("Retrieve new after the crash: %q, %v", buf[:n], err)
	}
	for i := 0; i < 300; i++ {
		k := fmt.Sprintf("old%03d", i)
		if _, err := ns.Retrieve(ctx, []byte(k), buf); !errors.Is(err, nvmekv.ErrKeyNotFound) {
			t.Fatalf("Retrieve %s of the earlier store = %v, want not found", k, err)
		}
	}
}

// TestVersion2StoreOpens: a store whose superblock is version 2 (region
// headers without the store id) still opens by scan with every key, and
// keeps writing version-2 headers.
func TestVersion2StoreOpens(t *testing.T) {
	o := testOptions(t)
	o.CheckpointPath = "-"
	ns := mustOpen(t, o)
	for i := 0; i < 100; i++ {
		if err := ns.Store(ctx, []byte(fmt.Sprintf("k%03d", i)), make([]byte, 3000), 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := ns.Close(); err != nil {
		t.Fatal(err)
	}
	img, err := os.ReadFile(o.Path)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	sb, _, err := parseSuperblock(img)
	if err != nil {
		t.Fatal(err)
	}
	le.PutUint32(img[8:], sbVersionV2) // the superblock as version 2 wrote it
	le.PutUint32(img[56:], crc32.Checksum(img[:56], castagnoli))
	v2 := superblock{version: sbVersionV2}
	R := int(sb.regionBytes)
	for r := 0; r < int(sb.regions); r++ {
		h := img[blockBytes+r*R:]
		if seq := sb.regionSeq(h); seq != 0 {
			v2.putRegionHdr(h, seq)
		}
	}
	if err := os.WriteFile(o.Path, img, 0o644); err != nil {
		t.Fatal(err)
	}
	ns = mustOpen(t, o)
	buf := make([]byte, 4096)
	for i := 0; i < 100; i++ {
		if n, err := ns.Retrieve(ctx, []byte(fmt.Sprintf("k%03d", i)), buf); err != nil || n != 3000 {
			t.Fatalf("Retrieve k%03d of the version-2 store: %d, %v", i, n, err)
		}
	}
	if err := ns.Store(ctx, []byte("after"), []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	if err := ns.Close(); err != nil {
		t.Fatal(err)
	}
	ns = mustOpen(t, o)
	defer ns.Close()
	if n, err := ns.Retrieve(ctx, []byte("after"), buf); err != nil || string(buf[:n]) != "v" {
		t.Fatalf("Retrieve after in the version-2 store: %q, %v", buf[:n], err)
	}
}

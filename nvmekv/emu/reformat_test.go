package emu

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu/logstore"
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
	if _, err := f.WriteAt(make([]byte, logstore.BlockBytes), 0); err != nil {
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

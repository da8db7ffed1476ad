package emu

import (
	"errors"
	"os"
	"syscall"
	"testing"
)

// TestCloseOnFullFilesystem (E20): when the filesystem holding the
// checkpoint is full, Close still succeeds, since every write is durable
// and only the checkpoint (a start-up shortcut) is missing; the superblock
// stays dirty, so the next Open scans the log and finds every key.
func TestCloseOnFullFilesystem(t *testing.T) {
	o, ns := fullStore(t)
	if err := ns.Close(); err != nil {
		t.Fatalf("Close with the data durable and no room for the checkpoint: %v", err)
	}
	if _, err := os.Stat(o.Path + ".ckpt.tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("partial checkpoint left behind: %v", err)
	}
	ns = mustOpen(t, o)
	defer ns.Close()
	if got := ns.Stats().Recovered; got != "scan" {
		t.Fatalf("reopened by %q, want a scan", got)
	}
	checkN(t, ns, 0, 200, 2000)
}

// fullStore opens a namespace on a 2 MiB tmpfs, stores 200 keys of 2000
// bytes (storeN) and fills the filesystem.
func fullStore(t *testing.T) (Options, *Namespace) {
	t.Helper()
	dir := mountTmpfs(t, "2m")
	o := Options{Path: dir + "/ns", Capacity: 16 * (64 << 10), RegionBytes: 64 << 10, MaxValueBytes: 4096, ReadSlots: 8, RingEntries: 64}
	ns := mustOpen(t, o)
	if err := storeN(t, ns, 0, 200, 2000); err != nil {
		t.Fatal(err)
	}
	fillFilesystem(t, dir+"/filler")
	return o, ns
}

// fillFilesystem writes path until its filesystem has no room left.
func fillFilesystem(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the filesystem: %v", err)
			}
			return
		}
	}
}

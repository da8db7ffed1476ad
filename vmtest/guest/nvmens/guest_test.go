// Package nvmens runs the emulated KV namespace (nvmekv/emu) on an
// ordinary NVMe namespace through NVM passthrough, in the vmtest QEMU
// guest: /dev/ng1n1, the generic char device of the cold-tier controller
// (vmtest.ColdSerial), driven by the real Linux NVMe driver. It also
// benchmarks that path against the block device /dev/nvme1n1 under the
// same namespace.
//
// nvme1 is shared with the sidecar suite: every test here starts from a
// zeroed superblock and zeroes it again when done, so whichever suite
// runs next formats afresh.
package nvmens

import (
	"os"
	"testing"

	"github.com/tiercache/tiercache/vmtest"
)

const (
	ngPath    = "/dev/ng1n1"   // NVM passthrough
	blockPath = "/dev/nvme1n1" // the same namespace through the block layer
)

// requireGuest skips outside the QEMU guest; scripts/vmtest runs these
// tests in the guest (TIERCACHE_GUEST=1), where nothing skips.
func requireGuest(t testing.TB) {
	t.Helper()
	if os.Getenv("TIERCACHE_GUEST") != "1" {
		t.Skip("guest-only test: scripts/vmtest runs it inside the QEMU guest with an emulated NVMe controller (TIERCACHE_GUEST=1)")
	}
}

// wipe zeroes the namespace's first 4 KiB (the emulated store's
// superblock) now and when t ends.
func wipe(t testing.TB) {
	t.Helper()
	if err := vmtest.ZeroSuperblock(ngPath); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := vmtest.ZeroSuperblock(ngPath); err != nil {
			t.Error(err)
		}
	})
}

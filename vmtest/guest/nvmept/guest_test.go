// Package nvmept checks NVMe io_uring passthrough end to end on the real
// Linux NVMe driver, against the NVMe controller QEMU emulates in the
// vmtest guest: /dev/nvme0 (admin), /dev/ng0n1 (generic char device, the
// passthrough path), /dev/nvme0n1 (block device, the cross-check path).
package nvmept

import (
	"os"
	"strconv"
	"testing"
)

const (
	ctrlPath  = "/dev/nvme0"
	ngPath    = "/dev/ng0n1"
	blockPath = "/dev/nvme0n1"
	nsid      = 1             // QEMU's -device nvme,drive=... is namespace 1
	serial    = "tiercachevm" // vmtest.QEMUArgs: -device nvme,serial=tiercachevm
)

// requireGuest skips outside the QEMU guest; scripts/vmtest runs these
// tests in the guest (TIERCACHE_GUEST=1), where nothing skips.
func requireGuest(t *testing.T) {
	t.Helper()
	if os.Getenv("TIERCACHE_GUEST") != "1" {
		t.Skip("guest-only test: scripts/vmtest runs it inside the QEMU guest with an emulated NVMe controller (TIERCACHE_GUEST=1)")
	}
}

// imageBytes is the size of the host image behind the namespace, as the
// host harness passes it (TIERCACHE_VM_IMAGE_BYTES), 0 if unknown.
func imageBytes() uint64 {
	n, _ := strconv.ParseUint(os.Getenv("TIERCACHE_VM_IMAGE_BYTES"), 10, 64)
	return n
}

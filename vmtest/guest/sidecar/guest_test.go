// Package sidecar runs the real tiercache binary in the vmtest QEMU guest:
// warm tier bound to the CPU-less node 1, cold tier (the emulated KV
// namespace) on the NVMe block device /dev/nvme1n1, driven through its
// Unix socket by go-redis; other tests put cold on a KV SSD over NVMe/TCP
// (V25) with tenants' KV namespaces on it (V32).
package sidecar

import (
	"os"
	"testing"
)

// requireGuest skips outside the QEMU guest; scripts/vmtest runs these
// tests in the guest (TIERCACHE_GUEST=1), where nothing skips.
func requireGuest(t *testing.T) {
	t.Helper()
	if os.Getenv("TIERCACHE_GUEST") != "1" {
		t.Skip("guest-only test: scripts/vmtest runs it inside the QEMU guest with a CPU-less node 1 and an NVMe disk (TIERCACHE_GUEST=1)")
	}
}

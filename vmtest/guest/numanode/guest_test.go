package numanode

import (
	"os"
	"testing"
)

// requireGuest skips outside the QEMU guest, where node 1 does not exist;
// scripts/vmtest runs these tests in the guest (TIERCACHE_GUEST=1), where
// nothing skips.
func requireGuest(t *testing.T) {
	t.Helper()
	if os.Getenv("TIERCACHE_GUEST") != "1" {
		t.Skip("guest-only test: scripts/vmtest runs it inside the QEMU guest with a CPU-less node 1 (TIERCACHE_GUEST=1)")
	}
}

package emu

import (
	"testing"

	"github.com/tiercache/tiercache/nvmekv/kvconform"
)

// TestKVConformance runs the KV SSD conformance suite on the emulated
// namespace called directly (kvconform KC1), the reference the NVMe/TCP
// target and the kernel path are held to.
func TestKVConformance(t *testing.T) {
	o := testOptions(t)
	o.Capacity, o.RegionBytes, o.MaxValueBytes = 64<<20, 1<<20, 128<<10
	ns := mustOpen(t, o)
	defer ns.Close()
	kvconform.Run(t, kvconform.Target{NS: ns})
}

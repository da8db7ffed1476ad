package kvtcp

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/kvconform"
)

func requireGuest(t testing.TB) {
	t.Helper()
	if os.Getenv("TIERCACHE_GUEST") != "1" {
		t.Skip("guest-only test: scripts/vmtest runs it inside the QEMU guest with the nvme-tcp host driver (TIERCACHE_GUEST=1)")
	}
}

// openKV opens the attached namespace through nvmekv's passthrough, which
// reads its CSI with Identify CNS 03h through the kernel and refuses
// anything but 1.
func openKV(t testing.TB, d *Device) *nvmekv.Passthrough {
	t.Helper()
	p, err := nvmekv.OpenPassthrough(d.NG, nvmekv.PassthroughOptions{RingEntries: 64})
	if err != nil {
		t.Fatalf("OpenPassthrough(%s): %v", d.NG, err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// TestAttachKVNamespace (V23): the kernel keeps the target's namespace as a
// KV namespace: /dev/ngXnY exists and no block device does; in /sys its
// gendisk is hidden with size 0, which 6.1 does only for a command set it
// has no block driver for (drivers/nvme/host/core.c
// nvme_update_ns_info_generic), its uuid is the target's, and where the
// kernel has a csi attribute (drivers/nvme/host/sysfs.c, after 6.1) it
// reads 1; Identify CNS 03h through the kernel says CSI 1 and the KV
// format is the target's.
func TestAttachKVNamespace(t *testing.T) {
	requireGuest(t)
	d := Attach(t, "/tmp/kv-attach.img", "64MiB")
	blk := "/dev/" + d.NS[strings.LastIndex(d.NS, "/")+1:]
	if _, err := os.Stat(blk); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s exists (%v): the kernel made a block device for a KV namespace", blk, err)
	}
	for attr, want := range map[string]string{"hidden": "1", "size": "0", "nsid": "1"} {
		if got := readAttr(d.NS + "/" + attr); got != want {
			t.Fatalf("%s/%s = %q, want %q", d.NS, attr, got, want)
		}
	}
	if csi, err := os.ReadFile(d.NS + "/csi"); err == nil {
		if strings.TrimSpace(string(csi)) != "1" {
			t.Fatalf("%s/csi = %q, want 1", d.NS, csi)
		}
	} else {
		t.Logf("%s/csi: %v (Linux 6.1 has no csi attribute); hidden=1 size=0 is the generic-namespace path", d.NS, err)
	}
	if u := readAttr(d.NS + "/uuid"); len(u) != 36 || u == "00000000-0000-0000-0000-000000000000" {
		t.Fatalf("%s/uuid = %q, want the target's namespace UUID", d.NS, u)
	}
	p := openKV(t, d)
	if p.CSI() != nvmekv.CSIKV || p.NSID() != 1 {
		t.Fatalf("through the kernel: NSID %d CSI %d, want 1 and 1", p.NSID(), p.CSI())
	}
	lim := p.Limits()
	if lim.MaxKeyLen != 16 || lim.MaxValueLen != 128<<10 || lim.Capacity == 0 {
		t.Fatalf("KV limits through the kernel %+v", lim)
	}
	c, err := p.IdentifyController()
	if err != nil || c.Serial != "tiercache-kv" || c.MDTS == 0 {
		t.Fatalf("Identify Controller through the kernel: %+v, %v", c, err)
	}
	t.Logf("kernel on the namespace: %s", KernelLog(d.Ctrl))
	if log := KernelLog("not reported"); log != "" {
		t.Fatalf("kernel: %s", log)
	}
}

// TestKVConformanceThroughKernel (V24) runs the nvmekv conformance suite
// on /dev/ngXnY through NVME_URING_CMD_IO and the kernel's nvme-tcp host:
// the same checks the emulated namespace passes called directly.
func TestKVConformanceThroughKernel(t *testing.T) {
	requireGuest(t)
	d := Attach(t, "/tmp/kv-conform.img", "64MiB")
	p := openKV(t, d)
	raw := func(ctx context.Context, c nvmekv.Command, buf []byte) (int32, uint32, error) {
		res, err := p.Raw(ctx, nvmekv.RawCmd{Cmd: c, Buf: buf})
		if err != nil {
			return 0, 0, err
		}
		return res[0].Res, uint32(res[0].Big[0]), nil
	}
	kvconform.Run(t, kvconform.Target{NS: p, NSID: p.NSID(), Raw: raw})
	// The controller is still live: no command made the host reset it.
	if s := readAttr("/sys/class/nvme/" + d.Ctrl + "/state"); s != "live" {
		t.Fatalf("%s state %q after the suite\nkernel: %s", d.Ctrl, s, KernelLog("nvme"))
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := p.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
}

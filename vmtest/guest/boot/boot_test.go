package boot

import (
	"io"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/tiercache/tiercache/vmtest"
)

// requireGuest skips outside the QEMU guest: these tests only make sense in
// the guest that scripts/vmtest boots (which sets TIERCACHE_GUEST=1, and
// there nothing skips).
func requireGuest(t *testing.T) {
	t.Helper()
	if os.Getenv("TIERCACHE_GUEST") != "1" {
		t.Skip("guest-only test: scripts/vmtest runs it inside the QEMU guest (TIERCACHE_GUEST=1)")
	}
}

func TestNVMeDevicesPresent(t *testing.T) {
	requireGuest(t)
	for _, d := range []string{"/dev/nvme0", "/dev/nvme0n1", "/dev/ng0n1", "/dev/nvme1n1", "/dev/ng1n1", "/dev/ng2n1"} {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatalf("NVMe device %s missing: %v", d, err)
		}
		if fi.Mode()&os.ModeDevice == 0 {
			t.Fatalf("%s is not a device node (mode %v)", d, fi.Mode())
		}
	}
}

// TestNVMeControllerOrder: nvme0 is the passthrough test disk, nvme1 the
// sidecar's cold disk and nvme2 the namespace with metadata
// (vmtest.QEMUArgs serials), so tests may rely on names.
func TestNVMeControllerOrder(t *testing.T) {
	requireGuest(t)
	for ctrl, want := range map[string]string{"nvme0": vmtest.PassthroughSerial, "nvme1": vmtest.ColdSerial, "nvme2": vmtest.MetadataSerial} {
		b, err := os.ReadFile("/sys/class/nvme/" + ctrl + "/serial")
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(string(b)); got != want {
			t.Fatalf("%s serial = %q, want %q", ctrl, got, want)
		}
	}
}

func TestNodeOneIsMemoryOnly(t *testing.T) {
	requireGuest(t)
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("read %s: %v", p, err)
		}
		return strings.TrimSpace(string(b))
	}
	if got := read("/sys/devices/system/node/has_memory"); got != "0-1" {
		t.Fatalf("has_memory = %q, want 0-1 (QEMU -numa flags)", got)
	}
	if got := read("/sys/devices/system/node/has_cpu"); got != "0" {
		t.Fatalf("has_cpu = %q, want 0 (node 1 must be CPU-less)", got)
	}
}

func TestLoopbackUp(t *testing.T) {
	requireGuest(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen on 127.0.0.1 (guest init brings lo up): %v", err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Write([]byte("hi"))
			c.Close()
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("dial loopback: %v", err)
	}
	defer c.Close()
	b, err := io.ReadAll(c)
	if err != nil || string(b) != "hi" {
		t.Fatalf("read over loopback = %q, %v", b, err)
	}
}

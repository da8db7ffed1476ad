package nvmens

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu"
	"github.com/tiercache/tiercache/nvmekv/emu/dev"
)

// TestNVMeOpenIdentify: OpenNVMe reads the geometry QEMU gives (512-byte
// blocks, the host image's size, MDTS bounding the transfer; the NVM
// command set's namespace data, CNS 05h, exactly when the controller
// reports extended LBA formats; the format in use without metadata,
// protection or storage tag) and refuses the block device of the same
// namespace.
func TestNVMeOpenIdentify(t *testing.T) {
	requireGuest(t)
	d, err := dev.OpenNVMe(ngPath, dev.NVMeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	g := d.Geometry()
	t.Logf("%s: nsid %d, %d-byte blocks, %d bytes, largest transfer %d; geometry %+v", ngPath, d.NSID(), d.BlockBytes(), d.Size(), d.MaxTransfer(), g)
	buf := make([]byte, nvmekv.IdentifyBytes)
	if err := nvmekv.AdminIdentify(fdOf(t), nvmekv.EncodeIdentify(0, nvmekv.CNSController, 0, 0), buf); err != nil {
		t.Fatal(err)
	}
	ctrl, err := nvmekv.ParseController(buf)
	if err != nil {
		t.Fatal(err)
	}
	if elbas := ctrl.CTRATT&nvmekv.CtrattELBAS != 0; g.ELBAF != elbas {
		t.Fatalf("CNS 05h read: %v, but the controller's CTRATT %#x says extended LBA formats: %v", g.ELBAF, ctrl.CTRATT, elbas)
	}
	if g.CSI != nvmekv.CSINVM || g.Metadata != 0 || g.PIType != 0 || g.StorageTag != 0 || g.NLBAF < 1 || g.LBAF >= g.NLBAF || g.WriteProtected {
		t.Fatalf("geometry %+v: want NVM, no metadata, no protection, no storage tag, a format in range", g)
	}
	if n, _ := strconv.ParseInt(os.Getenv("TIERCACHE_VM_IMAGE_BYTES"), 10, 64); n != 0 && d.Size() != n {
		t.Fatalf("size %d, want the %d-byte image", d.Size(), n)
	}
	if d.BlockBytes() < 512 || d.BlockBytes() > 4096 || d.MaxTransfer() < 4096 || d.MaxTransfer()%4096 != 0 {
		t.Fatalf("block %d, largest transfer %d", d.BlockBytes(), d.MaxTransfer())
	}
	if _, err := dev.OpenNVMe(blockPath, dev.NVMeOptions{}); !errors.Is(err, dev.ErrNotDevice) || !strings.Contains(err.Error(), blockPath) {
		t.Fatalf("OpenNVMe(%s) = %v, want ErrNotDevice naming it", blockPath, err)
	}
}

// TestNVMeRefusedBeforeSubmission: unaligned and out-of-range requests
// are refused by dev.NVMe before they reach the device: the same Read sent
// raw comes back from the device as LBA Out of Range, while through
// dev.NVMe the device reports nothing (no NVMe status is ever seen).
func TestNVMeRefusedBeforeSubmission(t *testing.T) {
	requireGuest(t)
	d, err := dev.OpenNVMe(ngPath, dev.NVMeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	buf := make([]byte, 8192)
	for _, tc := range []struct {
		name string
		off  int64
		n    int
		want error
	}{
		{"unaligned offset", 100, 4096, dev.ErrUnaligned},
		{"unaligned length", 0, 1000, dev.ErrUnaligned},
		{"past the end", d.Size(), 4096, dev.ErrOutOfRange},
		{"across the end", d.Size() - 512, 1024, dev.ErrOutOfRange},
	} {
		if err := d.ReadAt(buf[:tc.n], tc.off); !errors.Is(err, tc.want) || !strings.Contains(err.Error(), ngPath) {
			t.Errorf("%s: ReadAt = %v, want %v naming %s", tc.name, err, tc.want, ngPath)
		}
		if err := d.WriteAt(buf[:tc.n], tc.off); !errors.Is(err, tc.want) {
			t.Errorf("%s: WriteAt = %v, want %v", tc.name, err, tc.want)
		}
		if res, refused := d.Refuse(false, tc.off, tc.n); !refused || res >= 0 {
			t.Errorf("%s: Refuse = %d, %v", tc.name, res, refused)
		}
	}
	refused, statuses := d.Stats()
	if refused != 12 || statuses != 0 || d.LastStatus() != nil {
		t.Fatalf("%d refused, %d NVMe statuses (last %v): want 12 refused and none reaching the device", refused, statuses, d.LastStatus())
	}
	// The device itself answers the out-of-range read with a status.
	err = nvmekv.IOCommand(fdOf(t), nvmekv.EncodeNVMRead(d.NSID(), uint64(d.Size())/uint64(d.BlockBytes()), 1), buf[:d.BlockBytes()])
	var se *nvmekv.StatusError
	if !errors.As(err, &se) || se.SC != 0x80 {
		t.Fatalf("raw Read past the end: %v, want LBA Out of Range from the device", err)
	}
	// In range and aligned: through.
	if err := d.ReadAt(buf[:4096], d.Size()-4096); err != nil {
		t.Fatalf("last 4 KiB: %v", err)
	}
}

func fdOf(t *testing.T) int {
	fd, err := nvmekv.OpenNVMeFd(ngPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	return fd
}

// TestNVMeFlushAndDeallocate: Flush is accepted; a deallocated range reads
// back as zeros (QEMU's namespace reports DLFEAT read-zeroes), and other
// blocks keep their bytes.
func TestNVMeFlushAndDeallocate(t *testing.T) {
	requireGuest(t)
	wipe(t)
	d, err := dev.OpenNVMe(ngPath, dev.NVMeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	w := bytes.Repeat([]byte{0xa5}, 64<<10)
	off := int64(1 << 20)
	if err := d.WriteAt(w, off); err != nil {
		t.Fatal(err)
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := d.Deallocate(off, 32<<10); err != nil {
		t.Fatal(err)
	}
	if !d.DeallocatedReadsZero() {
		t.Fatal("the namespace does not report Dataset Management with deallocated blocks reading as zeros (ONCS, DLFEAT); QEMU's does with discard=unmap")
	}
	r := make([]byte, 64<<10)
	if err := d.ReadAt(r, off); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(r[:32<<10], make([]byte, 32<<10)) || !bytes.Equal(r[32<<10:], w[32<<10:]) {
		t.Fatalf("after deallocating the first 32 KiB: first byte %#x, byte 32K %#x; want zeros then the written bytes", r[0], r[32<<10])
	}
}

// metaPath is the generic char device of nvme2's namespace, which QEMU
// formats with 8 bytes of metadata per block holding protection
// information type 1 (vmtest.MetadataNamespace).
const metaPath = "/dev/ng2n1"

// TestNVMeRefusesMetadataNamespace: D3 through the real driver. OpenNVMe,
// and so the namespace and the sidecar's nvme backend, refuse a namespace
// whose LBA format carries metadata, with ErrNotNVM naming the device and
// the metadata; Identify shows the format as QEMU made it.
func TestNVMeRefusesMetadataNamespace(t *testing.T) {
	requireGuest(t)
	_, err := dev.OpenNVMe(metaPath, dev.NVMeOptions{})
	if !errors.Is(err, dev.ErrNotNVM) || !strings.Contains(err.Error(), metaPath) || !strings.Contains(err.Error(), "8 metadata bytes") {
		t.Fatalf("OpenNVMe(%s) = %v, want ErrNotNVM naming the device and its 8 metadata bytes", metaPath, err)
	}
	t.Logf("refused: %v", err)
	if _, err := emu.Open(emu.Options{Path: metaPath, NVMe: true, Capacity: 8 << 20, RegionBytes: 1 << 20}); !errors.Is(err, dev.ErrNotNVM) {
		t.Fatalf("emu.Open on %s = %v, want ErrNotNVM", metaPath, err)
	}
	fd, err := nvmekv.OpenNVMeFd(metaPath)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	buf := make([]byte, nvmekv.IdentifyBytes)
	if err := nvmekv.AdminIdentify(fd, nvmekv.EncodeIdentify(1, nvmekv.CNSNamespace, 0, 0), buf); err != nil {
		t.Fatal(err)
	}
	ns, err := nvmekv.ParseNVMNamespace(buf)
	if err != nil || ns.MetadataBytes != 8 || ns.DPS&7 != 1 {
		t.Fatalf("identify namespace of %s: %+v, %v; want 8 metadata bytes and protection type 1", metaPath, ns, err)
	}
}

package dev

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/uring"
)

func TestCheckGeometry(t *testing.T) {
	ok := Geometry{CSI: 0, BlockBytes: 512, Blocks: 1 << 20}
	if err := CheckGeometry("/dev/ng1n1", ok); err != nil {
		t.Fatalf("NVM namespace with 512-byte blocks refused: %v", err)
	}
	for _, tc := range []struct {
		name string
		g    Geometry
		want string
	}{
		{"kv", Geometry{CSI: 1, BlockBytes: 512, Blocks: 1}, "command set identifier 1"},
		{"zns", Geometry{CSI: 2, BlockBytes: 512, Blocks: 1}, "command set identifier 2"},
		{"metadata", Geometry{BlockBytes: 512, Metadata: 8, LBAF: 2, Blocks: 1}, "8 metadata bytes"},
		{"extended lba", Geometry{BlockBytes: 512, Metadata: 16, Extended: true, LBAF: 3, Blocks: 1}, "extended LBA"},
		{"pi", Geometry{BlockBytes: 512, PIType: 1, Blocks: 1}, "protection information type 1"},
		{"storage tag", Geometry{BlockBytes: 4096, ELBAF: true, StorageTag: 8, LBAF: 1, Blocks: 1}, "8-bit storage tag"},
		{"format past nlbaf", Geometry{BlockBytes: 512, LBAF: 4, NLBAF: 2, Blocks: 1}, "LBA format 4 is in use but reports 2"},
		{"write protected", Geometry{BlockBytes: 512, Blocks: 1, WriteProtected: true}, "write protected"},
		{"8k blocks", Geometry{BlockBytes: 8192, Blocks: 1}, "8192-byte logical blocks"},
		{"no size", Geometry{BlockBytes: 4096}, "no blocks"},
	} {
		err := CheckGeometry("/dev/ng1n1", tc.g)
		if !errors.Is(err, ErrNotNVM) || !strings.Contains(err.Error(), "/dev/ng1n1") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrNotNVM naming the device and %q", tc.name, err, tc.want)
		}
	}
}

// TestDSMCommands: a deallocation is split into Dataset Management
// commands within the controller's limits (D7), covering every block
// exactly once, in order.
func TestDSMCommands(t *testing.T) {
	for _, tc := range []struct {
		name      string
		slba, nlb uint64
		g         Geometry
		cmds      int
	}{
		{"no limits", 100, 8192, Geometry{}, 1},
		{"range size", 0, 8192, Geometry{DMRSL: 1000}, 1}, // 9 ranges in one command
		{"ranges per command", 0, 8192, Geometry{DMRSL: 1000, DMRL: 4}, 3},
		{"size per command", 0, 8192, Geometry{DMSL: 3000}, 3},
		{"all three", 7, 100000, Geometry{DMRL: 2, DMRSL: 700, DMSL: 1000}, 100},
		{"past 2^32 blocks", 0, 1<<33 + 5, Geometry{}, 1},
		{"past 256 ranges", 0, 300, Geometry{DMRSL: 1}, 2},
	} {
		cmds := dsmCommands(tc.slba, tc.nlb, tc.g)
		next, total := tc.slba, uint64(0)
		for _, c := range cmds {
			var blocks uint64
			if len(c) == 0 || len(c) > maxDSMRanges || tc.g.DMRL > 0 && len(c) > int(tc.g.DMRL) {
				t.Fatalf("%s: a command of %d ranges", tc.name, len(c))
			}
			for _, r := range c {
				if r.slba != next || r.nlb == 0 || tc.g.DMRSL > 0 && r.nlb > tc.g.DMRSL {
					t.Fatalf("%s: range %+v, want it to start at %d with 1..%d blocks", tc.name, r, next, tc.g.DMRSL)
				}
				next += uint64(r.nlb)
				blocks += uint64(r.nlb)
			}
			if tc.g.DMSL > 0 && blocks > tc.g.DMSL {
				t.Fatalf("%s: a command of %d blocks, limit %d", tc.name, blocks, tc.g.DMSL)
			}
			total += blocks
		}
		if total != tc.nlb || len(cmds) != tc.cmds {
			t.Errorf("%s: %d commands covering %d blocks, want %d covering %d", tc.name, len(cmds), total, tc.cmds, tc.nlb)
		}
	}
}

func TestMaxTransfer(t *testing.T) {
	for _, tc := range []struct {
		mdts      uint8
		hwKB, seg int
		want      int
	}{
		{0, 0, 0, 128 * 4096},  // no MDTS, no sysfs: NVME_MAX_SEGS pages
		{7, 0, 0, 512 << 10},   // QEMU's default MDTS 7
		{5, 0, 0, 128 << 10},   // MDTS 5
		{7, 256, 0, 256 << 10}, // max_hw_sectors_kb bounds it
		{9, 0, 1024, 1 << 20},  // 1 MiB cap
		{7, 0, 33, 33 * 4096},  // segments
		{0, 2, 0, 4096},        // never below a block
		{9, 1023, 256, (1023 << 10) &^ 4095},
	} {
		got := maxTransfer(tc.mdts, tc.hwKB, tc.seg)
		if got != tc.want || got%4096 != 0 {
			t.Errorf("maxTransfer(%d, %d, %d) = %d, want %d", tc.mdts, tc.hwKB, tc.seg, got, tc.want)
		}
	}
}

func testNVMe() *NVMe {
	return &NVMe{path: "/dev/ngTn1", fd: -1, nsid: 1, lba: 512, size: 1 << 20, maxXfer: 128 << 10, log: zap.NewNop()}
}

func TestNVMeCheck(t *testing.T) {
	d := testNVMe()
	for _, tc := range []struct {
		off  int64
		n    int
		want error
	}{
		{0, 512, nil},
		{512, 4096, nil},
		{1<<20 - 512, 512, nil},
		{100, 512, ErrUnaligned},
		{0, 100, ErrUnaligned},
		{0, 0, ErrUnaligned},
		{-512, 512, ErrUnaligned},
		{1 << 20, 512, ErrOutOfRange},
		{1<<20 - 512, 1024, ErrOutOfRange},
		{0, 256 << 10, ErrTooLarge},
	} {
		err := d.Check(tc.off, tc.n)
		if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("Check(%d, %d) = %v, want %v", tc.off, tc.n, err, tc.want)
		}
		if err != nil && !strings.Contains(err.Error(), "/dev/ngTn1") {
			t.Errorf("Check(%d, %d) = %v: does not name the device", tc.off, tc.n, err)
		}
		res, refused := d.Refuse(false, tc.off, tc.n)
		if refused != (tc.want != nil) || refused && res >= 0 {
			t.Errorf("Refuse(%d, %d) = %d, %v", tc.off, tc.n, res, refused)
		}
		if errors.Is(tc.want, ErrOutOfRange) && res != -int32(syscall.ERANGE) {
			t.Errorf("Refuse(%d, %d) = %d, want -ERANGE", tc.off, tc.n, res)
		}
	}
	// The synchronous path refuses too, without touching the (absent) device.
	if err := d.ReadAt(make([]byte, 512), 1<<20); !errors.Is(err, ErrOutOfRange) {
		t.Fatalf("ReadAt past the end = %v, want ErrOutOfRange", err)
	}
	if err := d.WriteAt(make([]byte, 100), 0); !errors.Is(err, ErrUnaligned) {
		t.Fatalf("WriteAt of 100 bytes = %v, want ErrUnaligned", err)
	}
	d.dsm = true
	if err := d.Deallocate(100, 4096); !errors.Is(err, ErrUnaligned) {
		t.Fatalf("Deallocate at 100 = %v, want ErrUnaligned", err)
	}
}

func TestNVMeDone(t *testing.T) {
	d := testNVMe()
	if got := d.Done(0, 4096); got != 4096 {
		t.Fatalf("Done(0) = %d, want 4096", got)
	}
	if got := d.Done(-int32(syscall.EAGAIN), 4096); got != -int32(syscall.EAGAIN) {
		t.Fatalf("Done(-EAGAIN) = %d", got)
	}
	// LBA Out of Range with DNR, as QEMU answers a read past the end.
	if got := d.Done(0x4080, 4096); got != -int32(syscall.EIO) {
		t.Fatalf("Done(0x4080) = %d, want -EIO", got)
	}
	if _, st := d.Stats(); st != 1 || d.LastStatus() == nil || d.LastStatus().SC != 0x80 || !d.LastStatus().DNR {
		t.Fatalf("status not kept: %d statuses, last %v", st, d.LastStatus())
	}
}

func TestNVMePrep(t *testing.T) {
	d := testNVMe()
	var sqe [2]uring.SQE // a 128-byte SQE
	s := &sqe[0]
	buf := make([]byte, 4096)
	for _, write := range []bool{false, true} {
		clear(sqe[:])
		op := nvmekv.NVMOpRead
		if write {
			op = nvmekv.NVMOpWrite
			d.PrepWrite(s, buf, 8192, true, 3)
		} else {
			d.PrepRead(s, buf, 8192, true, 3)
		}
		c := s.Cmd80()
		le := binary.LittleEndian
		if s.Opcode != uring.OpUringCmd || uint32(s.Off) != nvmekv.NVMeURingCmdIO || s.BufIndex != 3 || s.OpFlags&uring.UringCmdFixed == 0 {
			t.Fatalf("SQE: opcode %d cmd_op %#x buf index %d flags %#x", s.Opcode, s.Off, s.BufIndex, s.OpFlags)
		}
		// nvme_uring_cmd: opcode, nsid, data_len, cdw10/11 = SLBA, cdw12 = NLB-1.
		if c[0] != op || le.Uint32(c[4:]) != 1 || le.Uint32(c[36:]) != 4096 || le.Uint32(c[40:]) != 16 || le.Uint32(c[44:]) != 0 || le.Uint32(c[48:]) != 7 {
			t.Fatalf("nvme_uring_cmd of a %d: % x", op, c[:52])
		}
	}
}

func TestOpenNVMeRefusesFiles(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenNVMe(p, NVMeOptions{}); !errors.Is(err, ErrNotDevice) || !strings.Contains(err.Error(), p) {
		t.Fatalf("OpenNVMe(regular file) = %v, want ErrNotDevice naming it", err)
	}
	if _, err := OpenNVMe("/dev/null", NVMeOptions{}); !errors.Is(err, ErrNotDevice) || !strings.Contains(err.Error(), "NVME_IOCTL_ID") {
		t.Fatalf("OpenNVMe(/dev/null) = %v, want ErrNotDevice (not an NVMe namespace)", err)
	}
	if _, err := OpenNVMe("/dev/ng-missing", NVMeOptions{}); !errors.Is(err, syscall.ENOENT) || !strings.Contains(err.Error(), "/dev/ng-missing") {
		t.Fatalf("OpenNVMe(missing) = %v, want ENOENT naming it", err)
	}
}

func TestFileRoundTrip(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	f, err := OpenFile(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Fixed() || f.MaxTransfer() != 0 {
		t.Fatalf("a regular file is fixed=%v with max transfer %d", f.Fixed(), f.MaxTransfer())
	}
	if err := f.Resize(1 << 20); err != nil || f.Size() != 1<<20 {
		t.Fatalf("Resize: %v, size %d", err, f.Size())
	}
	w := alignedBuf(4096)
	copy(w, bytes.Repeat([]byte("x"), 4096))
	if err := f.WriteAt(w, 8192); err != nil {
		t.Fatal(err)
	}
	if err := f.Deallocate(0, 1<<20); err != nil {
		t.Fatal(err)
	}
	r := alignedBuf(4096)
	if err := f.ReadAt(r, 8192); err != nil || !bytes.Equal(r, w) {
		t.Fatalf("ReadAt after Deallocate: %v, equal %v (a file keeps its bytes)", err, bytes.Equal(r, w))
	}
	if got := f.Done(123, 4096); got != 123 {
		t.Fatalf("Done(123) = %d", got)
	}
	if _, refused := f.Refuse(true, 1, 1); refused {
		t.Fatal("a file refused a request")
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestFault(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	f, err := OpenFile(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Resize(1 << 20); err != nil {
		t.Fatal(err)
	}
	w := alignedBuf(4096)
	copy(w, bytes.Repeat([]byte("y"), 4096))
	fw := NewFault(f, Errno(OpWrite, syscall.ENOSPC))
	if res, ok := fw.Refuse(true, 0, 4096); !ok || res != -int32(syscall.ENOSPC) {
		t.Fatalf("Refuse(write) = %d, %v, want -ENOSPC", res, ok)
	}
	if _, ok := fw.Refuse(false, 0, 4096); ok {
		t.Fatal("a read was refused by a write fault")
	}
	if err := fw.WriteAt(w, 0); !errors.Is(err, syscall.ENOSPC) || !errors.Is(err, ErrInjected) {
		t.Fatalf("WriteAt = %v, want injected ENOSPC", err)
	}
	if err := fw.Sync(); err != nil {
		t.Fatalf("Sync with a write fault: %v", err)
	}
	if err := NewFault(f, Errno(OpSync, syscall.EIO)).Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Sync fault = %v, want EIO", err)
	}
	if err := f.WriteAt(w, 0); err != nil {
		t.Fatal(err)
	}
	fr := NewFault(f, Short(OpRead))
	if res, ok := fr.Refuse(false, 0, 4096); !ok || res != 2048 {
		t.Fatalf("Short read = %d, %v, want 2048", res, ok)
	}
	if err := fr.ReadAt(alignedBuf(4096), 0); !errors.Is(err, ErrInjected) {
		t.Fatalf("ReadAt with a short fault = %v", err)
	}
	if fw.Injected() != 2 || fr.Injected() != 2 {
		t.Fatalf("injected %d and %d, want 2 and 2", fw.Injected(), fr.Injected())
	}
	// What it does not inject reaches the device.
	r := alignedBuf(4096)
	if err := fw.ReadAt(r, 0); err != nil || !bytes.Equal(r, w) {
		t.Fatalf("ReadAt through a write fault: %v", err)
	}
}

// alignedBuf is n bytes at a 4096-byte boundary (O_DIRECT).
func alignedBuf(n int) []byte {
	b := make([]byte, n+4096)
	o := int(-uintptr(unsafe.Pointer(&b[0])) & 4095)
	return b[o : o+n]
}

package nvmekv

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/tiercache/tiercache/uring"
)

// TestPrepCmdVector checks a whole 128-byte passthrough SQE against a
// hand-computed vector: URING_CMD (46) at 0, IO_LINK flag 4 at 1, fd at 4,
// cmd_op 0xC0484E80 at 8 (LE 80 4E 48 C0), __pad1 0 at 12, uring_cmd_flags
// FIXED (1) at 28, buf_index at 40, nvme_uring_cmd at 48
// (include/uapi/linux/io_uring.h, include/uapi/linux/nvme_ioctl.h).
func TestPrepCmdVector(t *testing.T) {
	var raw [128]byte
	s := (*uring.SQE)(unsafe.Pointer(&raw))
	buf := make([]byte, 4096)
	c, _ := EncodeRetrieve(1, key16, 4096, 0)
	PrepCmd(s, 5, NVMeURingCmdIO, &c, buf, true, true, 3)
	a := addrOf(buf)
	var addr [8]byte
	for i := range addr {
		addr[i] = byte(a >> (8 * i))
	}
	want := vec(128, map[int][]byte{
		0: {46, 0x04}, 4: {5, 0, 0, 0}, 8: {0x80, 0x4e, 0x48, 0xc0, 0, 0, 0, 0}, 28: {1, 0, 0, 0}, 40: {3, 0},
		48: {0x02}, 52: {1, 0, 0, 0}, 56: []byte("01234567"), 72: addr[:], 84: {0, 0x10, 0, 0},
		88: {0, 0x10, 0, 0}, 92: {16, 0}, 104: []byte("89abcdef"),
	})
	if !bytes.Equal(raw[:], want) {
		t.Fatalf("SQE\n got %x\nwant %x", raw, want)
	}
	// Every KV command lands in the SQE the same way: opcode at 48, KL at 92.
	for _, tc := range []struct {
		enc  func() (Command, error)
		op   byte
		opts byte
	}{
		{func() (Command, error) { return EncodeStore(1, key16[:3], 7, StoreMustExist) }, 0x01, 0x01},
		{func() (Command, error) { return EncodeDelete(1, key16[:3]) }, 0x10, 0},
		{func() (Command, error) { return EncodeExist(1, key16[:3]) }, 0x14, 0},
		{func() (Command, error) { return EncodeList(1, key16[:3], 64) }, 0x06, 0},
	} {
		clear(raw[:])
		c, _ := tc.enc()
		PrepCmd(s, 5, NVMeURingCmdIO, &c, nil, false, false, 0)
		if raw[0] != 46 || raw[1] != 0 || raw[48] != tc.op || raw[92] != 3 || raw[93] != tc.opts || !bytes.Equal(raw[56:59], key16[:3]) || raw[28] != 0 {
			t.Errorf("opcode %#x: SQE %x", tc.op, raw)
		}
	}
}

// TestRefuseNonKV: a namespace with CSI 0 never gets a KV opcode, and the
// error names the device and its CSI.
func TestRefuseNonKV(t *testing.T) {
	p := &Passthrough{path: "/dev/ng0n1", csi: CSINVM}
	p.Singles.D = p
	err := p.Store(context.Background(), []byte("k"), []byte("v"), 0)
	if !errors.Is(err, ErrNotKV) || !strings.Contains(err.Error(), "/dev/ng0n1") || !strings.Contains(err.Error(), "identifier 0 (NVM)") {
		t.Fatalf("Store on CSI 0: %v", err)
	}
	if _, err := p.Retrieve(context.Background(), []byte("k"), make([]byte, 4)); !errors.Is(err, ErrNotKV) {
		t.Fatalf("Retrieve on CSI 0: %v", err)
	}
}

func TestOpenPassthroughNotNVMe(t *testing.T) {
	f := t.TempDir() + "/plain"
	os.WriteFile(f, make([]byte, 4096), 0o644)
	_, err := OpenPassthrough(f, PassthroughOptions{})
	if err == nil || !strings.Contains(err.Error(), f) {
		t.Fatalf("OpenPassthrough(regular file) = %v", err)
	}
}

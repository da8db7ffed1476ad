package nvmekv

import (
	"bytes"
	"errors"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// vec builds a hand-written byte vector of n bytes: every other byte is 0.
func vec(n int, parts map[int][]byte) []byte {
	b := make([]byte, n)
	for off, p := range parts {
		copy(b[off:], p)
	}
	return b
}

var key16 = []byte("0123456789abcdef")

// Hand-computed 64-byte NVMe commands (KV Command Set 1.0, §3.1–§3.2):
// opcode @0, NSID @4 LE, key bytes 0..7 @8, CDW10 @40 LE, KL @44, options
// @45, key bytes 8..15 @56.
func TestEncodeVectors(t *testing.T) {
	tests := []struct {
		name string
		enc  func() (Command, error)
		want []byte
	}{
		{"store 16B key, 4096 B, must-not-exist", func() (Command, error) { return EncodeStore(1, key16, 4096, StoreMustNotExist) },
			vec(64, map[int][]byte{0: {0x01}, 4: {1, 0, 0, 0}, 8: []byte("01234567"), 40: {0x00, 0x10, 0, 0}, 44: {16, 0x02}, 56: []byte("89abcdef")})},
		{"store 3B key, 5 B, must-exist, nsid 0x01020304", func() (Command, error) { return EncodeStore(0x01020304, []byte("abc"), 5, StoreMustExist) },
			vec(64, map[int][]byte{0: {0x01}, 4: {4, 3, 2, 1}, 8: []byte("abc"), 40: {5, 0, 0, 0}, 44: {3, 0x01}})},
		{"retrieve 10B key, buffer 0x12345", func() (Command, error) { return EncodeRetrieve(1, []byte("0123456789"), 0x12345, 0) },
			vec(64, map[int][]byte{0: {0x02}, 4: {1, 0, 0, 0}, 8: []byte("01234567"), 40: {0x45, 0x23, 0x01, 0}, 44: {10}, 56: []byte("89")})},
		{"retrieve raw", func() (Command, error) { return EncodeRetrieve(2, []byte{0xff}, 1, RetrieveRaw) },
			vec(64, map[int][]byte{0: {0x02}, 4: {2, 0, 0, 0}, 8: {0xff}, 40: {1, 0, 0, 0}, 44: {1, 0x01}})},
		{"delete 8B key", func() (Command, error) { return EncodeDelete(1, []byte("01234567")) },
			vec(64, map[int][]byte{0: {0x10}, 4: {1, 0, 0, 0}, 8: []byte("01234567"), 44: {8}})},
		{"exist 9B key", func() (Command, error) { return EncodeExist(7, []byte("012345678")) },
			vec(64, map[int][]byte{0: {0x14}, 4: {7, 0, 0, 0}, 8: []byte("01234567"), 44: {9}, 56: []byte("8")})},
		{"list from empty key, 64 KiB", func() (Command, error) { return EncodeList(1, nil, 65536) },
			vec(64, map[int][]byte{0: {0x06}, 4: {1, 0, 0, 0}, 40: {0, 0, 1, 0}})},
		{"list from 16B key", func() (Command, error) { return EncodeList(1, key16, 4096) },
			vec(64, map[int][]byte{0: {0x06}, 4: {1, 0, 0, 0}, 8: []byte("01234567"), 40: {0, 0x10, 0, 0}, 44: {16}, 56: []byte("89abcdef")})},
		{"flush", func() (Command, error) { return EncodeFlush(1), nil }, vec(64, map[int][]byte{4: {1, 0, 0, 0}})},
		{"identify ns descriptors", func() (Command, error) { return EncodeIdentify(1, CNSNSDescriptorList, 0, 0), nil },
			vec(64, map[int][]byte{0: {0x06}, 4: {1, 0, 0, 0}, 40: {0x03}})},
		{"identify KV ns, CSI 1", func() (Command, error) { return EncodeIdentify(1, CNSIOCSNamespace, 0, CSIKV), nil },
			vec(64, map[int][]byte{0: {0x06}, 4: {1, 0, 0, 0}, 40: {0x05}, 44: {0, 0, 0, 0x01}})},
		{"identify controller cntid 0x0203", func() (Command, error) { return EncodeIdentify(0, CNSController, 0x0203, 0), nil },
			vec(64, map[int][]byte{0: {0x06}, 40: {0x01, 0, 0x03, 0x02}})},
		{"nvm read slba 0x1_00000002 nlb 8", func() (Command, error) { return EncodeNVMRead(1, 0x100000002, 8), nil },
			vec(64, map[int][]byte{0: {0x02}, 4: {1, 0, 0, 0}, 40: {2, 0, 0, 0, 1, 0, 0, 0, 7, 0}})},
		{"nvm write slba 3 nlb 1", func() (Command, error) { return EncodeNVMWrite(1, 3, 1), nil },
			vec(64, map[int][]byte{0: {0x01}, 4: {1, 0, 0, 0}, 40: {3}})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := tt.enc()
			if err != nil {
				t.Fatal(err)
			}
			got := c.Bytes()
			if !bytes.Equal(got[:], tt.want) {
				t.Fatalf("command bytes\n got %x\nwant %x", got, tt.want)
			}
			if back := ParseCommand(&got); back != c {
				t.Fatalf("ParseCommand(Bytes()) = %+v, want %+v", back, c)
			}
		})
	}
}

func TestEncodeRejects(t *testing.T) {
	if _, err := EncodeStore(1, nil, 1, 0); !errors.Is(err, ErrInvalidKeySize) {
		t.Errorf("empty store key: %v", err)
	}
	if _, err := EncodeRetrieve(1, make([]byte, 17), 1, 0); !errors.Is(err, ErrInvalidKeySize) {
		t.Errorf("17-byte key: %v", err)
	}
	if _, err := EncodeStore(1, []byte("k"), 1, StoreMustExist|StoreMustNotExist); !errors.Is(err, ErrBadOptions) {
		t.Errorf("both store options: %v", err)
	}
	if _, err := EncodeList(1, nil, 4); err != nil {
		t.Errorf("list with empty key: %v", err)
	}
}

func TestUnpackKey(t *testing.T) {
	for n := 1; n <= 16; n++ {
		c, _ := EncodeStore(1, key16[:n], 0, 0)
		k, kl, ok := UnpackKey(&c)
		if !ok || kl != n || !bytes.Equal(k[:n], key16[:n]) || !bytes.Equal(k[n:], make([]byte, 16-n)) {
			t.Fatalf("n=%d: got %q kl=%d ok=%v", n, k, kl, ok)
		}
	}
	c := Command{CDW11: 17}
	if _, _, ok := UnpackKey(&c); ok {
		t.Fatal("KL 17 unpacked")
	}
}

// TestUringCmdVector checks the 72-byte nvme_uring_cmd at byte 48 of the
// 128-byte SQE (struct nvme_uring_cmd, include/uapi/linux/nvme_ioctl.h, at
// SQE byte 48: opcode@48, nsid@52, cdw2@56, cdw3@60, addr@72, data_len@84,
// cdw10@88, cdw11@92 (KL@92, options@93), cdw14@104, cdw15@108).
func TestUringCmdVector(t *testing.T) {
	c, _ := EncodeStore(1, key16, 4096, StoreMustNotExist)
	u := UringCmdFrom(&c, 0x00007f0012345000, 4096)
	var sqe [128]byte
	u.MarshalTo((*[80]byte)(sqe[48:]))
	want := vec(128, map[int][]byte{
		48: {0x01}, 52: {1, 0, 0, 0}, 56: []byte("01234567"),
		72: {0x00, 0x50, 0x34, 0x12, 0x00, 0x7f, 0, 0}, 84: {0, 0x10, 0, 0},
		88: {0, 0x10, 0, 0}, 92: {16, 0x02}, 104: []byte("89abcdef"),
	})
	if !bytes.Equal(sqe[:], want) {
		t.Fatalf("SQE bytes\n got %x\nwant %x", sqe, want)
	}
}

func TestABIOffsets(t *testing.T) {
	var c Command
	var u UringCmd
	for _, tc := range []struct {
		name      string
		got, want uintptr
	}{
		{"Command.NSID", unsafe.Offsetof(c.NSID), 4}, {"Command.CDW2", unsafe.Offsetof(c.CDW2), 8},
		{"Command.MPTR", unsafe.Offsetof(c.MPTR), 16}, {"Command.PRP1", unsafe.Offsetof(c.PRP1), 24},
		{"Command.CDW10", unsafe.Offsetof(c.CDW10), 40}, {"Command.CDW11", unsafe.Offsetof(c.CDW11), 44},
		{"Command.CDW14", unsafe.Offsetof(c.CDW14), 56}, {"Command.CDW15", unsafe.Offsetof(c.CDW15), 60},
		{"UringCmd.NSID", unsafe.Offsetof(u.NSID), 4}, {"UringCmd.CDW2", unsafe.Offsetof(u.CDW2), 8},
		{"UringCmd.Metadata", unsafe.Offsetof(u.Metadata), 16}, {"UringCmd.Addr", unsafe.Offsetof(u.Addr), 24},
		{"UringCmd.MetadataLen", unsafe.Offsetof(u.MetadataLen), 32}, {"UringCmd.DataLen", unsafe.Offsetof(u.DataLen), 36},
		{"UringCmd.CDW10", unsafe.Offsetof(u.CDW10), 40}, {"UringCmd.CDW14", unsafe.Offsetof(u.CDW14), 56},
		{"UringCmd.TimeoutMs", unsafe.Offsetof(u.TimeoutMs), 64}, {"UringCmd.Rsvd2", unsafe.Offsetof(u.Rsvd2), 68},
	} {
		if tc.got != tc.want {
			t.Errorf("%s at %d, want %d", tc.name, tc.got, tc.want)
		}
	}
	if NVMeURingCmdIO != 3<<30|72<<16|'N'<<8|0x80 || NVMeIoctlAdminCmd != 3<<30|72<<16|'N'<<8|0x41 {
		t.Error("ioctl numbers do not match _IOWR('N', nr, 72 bytes)")
	}
}

func TestDecodeResult(t *testing.T) {
	tests := []struct {
		res    int32
		target error
		sc     uint8
		dnr    bool
		more   bool
	}{
		{0, nil, 0, false, false},
		{0x4087, ErrKeyNotFound, 0x87, true, false},
		{0x0087, ErrKeyNotFound, 0x87, false, false},
		{0x4089, ErrKeyExists, 0x89, true, false},
		{0x6081, ErrCapacityExceeded, 0x81, true, true},
		{0x0085, ErrInvalidValueSize, 0x85, false, false},
		{0x0086, ErrInvalidKeySize, 0x86, false, false},
		{0x4088, ErrUnrecovered, 0x88, true, false},
		{-int32(syscall.EIO), syscall.EIO, 0, false, false},
		{-int32(syscall.ECANCELED), ErrCanceled, 0, false, false},
	}
	for _, tt := range tests {
		err := DecodeResult(OpRetrieve, tt.res)
		if tt.target == nil {
			if err != nil {
				t.Errorf("res %#x: %v", tt.res, err)
			}
			continue
		}
		if !errors.Is(err, tt.target) {
			t.Errorf("res %#x: %v is not %v", tt.res, err, tt.target)
		}
		var se *StatusError
		if tt.res > 0 {
			if !errors.As(err, &se) || se.SC != tt.sc || se.SCT != 0 || se.DNR != tt.dnr || se.More != tt.more {
				t.Errorf("res %#x: decoded %+v", tt.res, se)
			}
		}
	}
	// A non-generic SCT is not a KV sentinel.
	err := DecodeResult(OpStore, 0x287)
	if errors.Is(err, ErrKeyNotFound) {
		t.Errorf("SCT 2 SC 0x87 matched ErrKeyNotFound: %v", err)
	}
	if Status(0, SCKeyNotExists, true) != 0x4087 {
		t.Error("Status(0, 0x87, dnr) != 0x4087")
	}
	// The error text names what the status means, also outside the KV set.
	for res, want := range map[int32]string{
		0x80:  "LBA out of range",
		0x287: "media and data integrity error",
		0x181: "command specific status",
		0x87:  "key does not exist",
		0xc0:  "unknown status",
	} {
		if err := DecodeResult(OpStore, res); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("res %#x: error %v, want it to say %q", res, err, want)
		}
	}
}

func TestListFormat(t *testing.T) {
	keys := [][]byte{[]byte("a"), []byte("bcdef"), key16}
	buf := make([]byte, 4+ListEntryBytes(1)+ListEntryBytes(5)+ListEntryBytes(16))
	if n := PutList(buf, keys); n != 3 {
		t.Fatalf("PutList = %d", n)
	}
	// Hand-computed: count 3; "a" len 1 pad 3; "bcdef" len 5 pad 3; 16 bytes pad 0.
	want := vec(len(buf), map[int][]byte{0: {3}, 4: {1, 0, 'a'}, 10: {5, 0, 'b', 'c', 'd', 'e', 'f'}, 20: {16, 0}, 22: key16})
	if !bytes.Equal(buf, want) {
		t.Fatalf("list buffer\n got %x\nwant %x", buf, want)
	}
	got, err := ParseList(buf)
	if err != nil || len(got) != 3 || !bytes.Equal(got[2], key16) {
		t.Fatalf("ParseList = %q, %v", got, err)
	}
	// Entry-padded layout (2+L rounded up to 4) parses too.
	alt := vec(4+8+20, map[int][]byte{0: {2}, 4: {5, 0, 'h', 'e', 'l', 'l', 'o'}, 12: {16, 0}, 14: key16})
	got, err = ParseList(alt)
	if err != nil || len(got) != 2 || string(got[0]) != "hello" {
		t.Fatalf("entry-padded ParseList = %q, %v", got, err)
	}
	// Malformed: claims more keys than the buffer holds; zero length.
	for _, bad := range [][]byte{{9, 0, 0, 0, 1, 0}, vec(12, map[int][]byte{0: {1}, 4: {0, 0}}), {1, 0}} {
		if _, err := ParseList(bad); !errors.Is(err, ErrShortBuffer) {
			t.Errorf("ParseList(%x) = %v, want ErrShortBuffer", bad, err)
		}
	}
	// Too small a buffer keeps the entries that fit.
	small := make([]byte, 4+ListEntryBytes(1)+3)
	if n := PutList(small, keys); n != 1 {
		t.Fatalf("PutList into small buffer = %d", n)
	}
}

func TestIdentifyParse(t *testing.T) {
	// NS descriptor list: EUI64 (type 1, len 8), CSI (type 4, len 1) = 1.
	d := vec(4096, map[int][]byte{0: {1, 8, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}, 12: {4, 1, 0, 0, 1}})
	ds, err := ParseNSDescriptors(d)
	if err != nil || len(ds) != 2 || CSIFromDescriptors(ds) != CSIKV {
		t.Fatalf("descriptors %+v, %v", ds, err)
	}
	if csi := CSIFromDescriptors(nil); csi != CSINVM {
		t.Fatalf("no CSI descriptor → %d, want 0", csi)
	}
	if _, err := ParseNSDescriptors([]byte{4, 200, 0, 0, 1}); !errors.Is(err, ErrShortBuffer) {
		t.Fatalf("overlong descriptor: %v", err)
	}
	// KV identify namespace: NSZE 1 GiB @0, NUSE 4096 @16, NKVF 1 (two formats) @25,
	// KVFC 1 @29, format 1: KVKML 16, KVVML 1 MiB, MNKS 1000 @88.
	b := vec(4096, map[int][]byte{0: {0, 0, 0, 0x40}, 16: {0, 0x10}, 25: {1}, 29: {1},
		72: {8, 0, 0, 0, 0, 1, 0, 0}, 88: {16, 0, 0, 0, 0, 0, 0x10, 0, 0xe8, 0x03}})
	n, err := ParseKVNamespace(b)
	if err != nil {
		t.Fatal(err)
	}
	f := n.Format()
	if n.Size != 1<<30 || n.Utilization != 4096 || len(n.Formats) != 2 || f.MaxKeyLen != 16 || f.MaxValueLen != 1<<20 || f.MaxKeys != 1000 {
		t.Fatalf("parsed %+v format %+v", n, f)
	}
	out := make([]byte, 4096)
	PutKVNamespace(out, &n)
	if !bytes.Equal(out, b) {
		t.Fatal("PutKVNamespace(ParseKVNamespace(b)) != b")
	}
	// NVM identify namespace: NSZE 0x800 blocks, FLBAS 1, LBAF1 LBADS 12.
	nb := vec(4096, map[int][]byte{0: {0, 8}, 26: {1}, 132: {0, 0, 12, 0}})
	nn, err := ParseNVMNamespace(nb)
	if err != nil || nn.NSZE != 0x800 || nn.BlockBytes != 4096 {
		t.Fatalf("nvm ns %+v, %v", nn, err)
	}
	// DPS @29 = 1 (PI type 1), NSATTR @99 bit 0, FLBAS bit 4 (extended LBA).
	// LBA format 2 @136: MS 8, LBADS 9.
	nb = vec(4096, map[int][]byte{0: {0, 8}, 26: {0x12}, 29: {1}, 99: {1}, 136: {8, 0, 9, 0}})
	if nn, err = ParseNVMNamespace(nb); err != nil || nn.DPS != 1 || !nn.WriteProtected() || !nn.ExtendedLBA() || nn.LBAF != 2 ||
		nn.MetadataBytes != 8 || nn.BlockBytes != 512 {
		t.Fatalf("nvm ns %+v, %v", nn, err)
	}
	cb := vec(4096, map[int][]byte{0: {0x36, 0x1b}, 4: []byte("deadbeef            "), 24: []byte("QEMU NVMe Ctrl"), 96: {0, 0x80}, 516: {1}})
	ctl, err := ParseController(cb)
	if err != nil || ctl.VID != 0x1b36 || ctl.Serial != "deadbeef" || ctl.Model != "QEMU NVMe Ctrl" || ctl.NN != 1 || ctl.CTRATT&CtrattELBAS == 0 {
		t.Fatalf("controller %+v, %v", ctl, err)
	}
	// NVM command set namespace data (CNS 05h): LBSTM @0, PIC @8, ELBAF 1
	// @16 = STS 8 | PIF 2 (64-bit guard) << 7.
	in, err := ParseNVMNamespaceIOCS(vec(4096, map[int][]byte{0: {0xff}, 8: {3}, 16: {8, 1}}))
	if err != nil || in.LBSTM != 0xff || in.PIC != 3 || in.StorageTagBits(1) != 8 || in.GuardFormat(1) != 2 || in.StorageTagBits(0) != 0 || in.StorageTagBits(64) != 0 {
		t.Fatalf("nvm iocs namespace %+v, %v", in, err)
	}
	// NVM command set controller data (CNS 06h): DMRL @3, DMRSL @4, DMSL @8.
	ic, err := ParseNVMControllerIOCS(vec(4096, map[int][]byte{3: {16}, 4: {0, 0x10}, 8: {0, 0, 1}}))
	if err != nil || ic.DMRL != 16 || ic.DMRSL != 0x1000 || ic.DMSL != 0x10000 {
		t.Fatalf("nvm iocs controller %+v, %v", ic, err)
	}
	if _, err := ParseNVMNamespaceIOCS(make([]byte, 100)); !errors.Is(err, ErrShortBuffer) {
		t.Fatalf("short CNS 05h data: %v", err)
	}
}

// FuzzParseList: the List parser never panics and returns keys of 1..16 bytes.
func FuzzParseList(f *testing.F) {
	buf := make([]byte, 64)
	PutList(buf, [][]byte{[]byte("a"), key16})
	f.Add(buf)
	f.Add([]byte{255, 255, 255, 255, 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		keys, _ := ParseList(b)
		for _, k := range keys {
			if len(k) < 1 || len(k) > 16 {
				t.Fatalf("key of %d bytes", len(k))
			}
		}
	})
}

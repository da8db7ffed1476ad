package uring

import (
	"reflect"
	"testing"
	"unsafe"
)

// TestABIOffsets checks every field offset of the ABI structs against the C
// layout (include/uapi/linux/io_uring.h).
func TestABIOffsets(t *testing.T) {
	cases := []struct {
		typ  any
		size uintptr
		offs map[string]uintptr
	}{
		{SQE{}, 64, map[string]uintptr{"Opcode": 0, "Flags": 1, "Ioprio": 2, "Fd": 4, "Off": 8, "Addr": 16, "Len": 24,
			"OpFlags": 28, "UserData": 32, "BufIndex": 40, "Personality": 42, "SpliceFdIn": 44, "Addr3": 48, "Pad2": 56}},
		{rawCQE{}, 16, map[string]uintptr{"UserData": 0, "Res": 8, "Flags": 12}},
		{rawCQE32{}, 32, map[string]uintptr{"rawCQE": 0, "Big": 16}},
		{sqringOffsets{}, 40, map[string]uintptr{"Head": 0, "Tail": 4, "RingMask": 8, "RingEntries": 12, "Flags": 16,
			"Dropped": 20, "Array": 24, "Resv1": 28, "UserAddr": 32}},
		{cqringOffsets{}, 40, map[string]uintptr{"Head": 0, "Tail": 4, "RingMask": 8, "RingEntries": 12, "Overflow": 16,
			"Cqes": 20, "Flags": 24, "Resv1": 28, "UserAddr": 32}},
		{params{}, 120, map[string]uintptr{"SQEntries": 0, "CQEntries": 4, "Flags": 8, "SQThreadCPU": 12,
			"SQThreadIdle": 16, "Features": 20, "WQFd": 24, "Resv": 28, "SQOff": 40, "CQOff": 80}},
		{getEventsArg{}, 24, map[string]uintptr{"Sigmask": 0, "SigmaskSz": 8, "MinWaitUs": 12, "Ts": 16}},
		{kernelTimespec{}, 16, map[string]uintptr{"Sec": 0, "Nsec": 8}},
		{probeOp{}, 8, map[string]uintptr{"Op": 0, "Resv": 1, "Flags": 2, "Resv2": 4}},
		{probeHdr{}, 16, map[string]uintptr{"LastOp": 0, "OpsLen": 1, "Resv": 2, "Resv2": 4}},
		{probeBuf{}, 16 + 256*8, map[string]uintptr{"hdr": 0, "ops": 16}},
	}
	for _, tc := range cases {
		rt := reflect.TypeOf(tc.typ)
		if rt.Size() != tc.size {
			t.Errorf("%s: size %d, want %d", rt.Name(), rt.Size(), tc.size)
		}
		if rt.NumField() != len(tc.offs) {
			t.Errorf("%s: %d fields, table has %d", rt.Name(), rt.NumField(), len(tc.offs))
		}
		for i := 0; i < rt.NumField(); i++ {
			f := rt.Field(i)
			want, ok := tc.offs[f.Name]
			if !ok {
				t.Errorf("%s.%s: not in the table", rt.Name(), f.Name)
			} else if f.Offset != want {
				t.Errorf("%s.%s: offset %d, want %d", rt.Name(), f.Name, f.Offset, want)
			}
		}
	}
}

// TestSQEUnions checks the union views: cmd_op/__pad1 inside Off and the cmd
// area at byte 48.
func TestSQEUnions(t *testing.T) {
	var raw [128]byte
	s := (*SQE)(unsafe.Pointer(&raw[0]))
	s.Off = ^uint64(0)
	s.SetCmdOp(0x1200)
	if raw[8] != 0x00 || raw[9] != 0x12 || raw[10] != 0 || raw[11] != 0 || raw[12]|raw[13]|raw[14]|raw[15] != 0 {
		t.Fatalf("SetCmdOp bytes 8..15 = % x, want 00 12 00 00 00 00 00 00", raw[8:16])
	}
	s.SetPad1(1)
	if raw[12] != 1 || s.CmdOp() != 0x1200 {
		t.Fatalf("SetPad1: bytes % x, cmd_op %#x", raw[8:16], s.CmdOp())
	}
	s.Cmd80()[79] = 0xAB
	s.Cmd16()[0] = 0xCD
	if raw[127] != 0xAB || raw[48] != 0xCD || s.Addr3 != 0xCD {
		t.Fatalf("cmd area misplaced: raw[48]=%#x raw[127]=%#x", raw[48], raw[127])
	}
}

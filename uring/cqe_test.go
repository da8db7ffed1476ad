package uring

import (
	"syscall"
	"testing"
)

// TestCQE32Big: on a CQE32 ring, big_cqe of every CQE reaches Big, across
// several laps of the 32-byte-stride CQ (IORING_NOP_CQE32 makes the kernel
// fill big_cqe with the SQE's off and addr); a 16-byte ring refuses the flag
// and a normal CQE on a CQE32 ring has zeros.
func TestCQE32Big(t *testing.T) {
	r := newRing(t, Options{Entries: 4, CQE32: true, SQE128: true})
	for i := uint64(1); i <= 4*uint64(r.CQEntries()); i++ {
		s := r.NextSQE()
		s.PrepNop()
		s.OpFlags = nopCQE32
		s.Off, s.Addr = i, ^i
		s.UserData = i
		c := waitOne(t, r)
		if c.Res == -int32(syscall.EINVAL) && i == 1 {
			skipOrFail(t, "kernel without IORING_NOP_CQE32 (Linux 6.18)")
		}
		if c.Res != 0 || c.UserData != i || c.Big() != [2]uint64{i, ^i} {
			t.Fatalf("CQE %d: %+v big %x, want big {%x %x}", i, c, c.Big(), i, ^i)
		}
		// A plain CQE on the same ring has zero big_cqe.
		s = r.NextSQE()
		s.PrepNop()
		s.OpFlags = nopInjectResult
		s.Len = 7
		if c := waitOne(t, r); c.Res != 7 || c.Big() != [2]uint64{} {
			t.Fatalf("plain CQE %+v big %x, want res 7 and zeros", c, c.Big())
		}
	}
	small := newRing(t, Options{Entries: 4})
	s := small.NextSQE()
	s.PrepNop()
	s.OpFlags = nopCQE32
	if c := waitOne(t, small); c.Res != -int32(syscall.EINVAL) {
		t.Fatalf("NOP_CQE32 on a 16-byte CQE ring res %d, want -EINVAL", c.Res)
	}
}

// TestNextSQEZeroed: an SQE slot handed out again is zeroed over all 128
// bytes of an SQE128 ring, whatever was left in it.
func TestNextSQEZeroed(t *testing.T) {
	r := newRing(t, Options{Entries: 4, SQE128: true, SubmitAll: true})
	for lap := 0; lap < 3; lap++ {
		for i := 0; i < 4; i++ {
			s := r.NextSQE()
			b := sqeBytes(s, 128)
			for j, v := range b {
				if v != 0 {
					t.Fatalf("lap %d slot %d byte %d = %#x, want 0", lap, i, j, v)
				}
			}
			for j := range b {
				b[j] = 0xFF
			}
			s.PrepNop() // opcode, fd, addr, len, off; the rest stays 0xFF
			s.Flags = 0
			s.OpFlags = 0
			s.UserData = uint64(i)
		}
		if _, err := r.SubmitAndWait(4); err != nil {
			t.Fatalf("SubmitAndWait: %v", err)
		}
		if n := r.ForEachCQE(func(*CQE) {}); n != 4 {
			t.Fatalf("lap %d: %d completions, want 4", lap, n)
		}
	}
}

package uring

import (
	"bytes"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// reapN waits for n completions and returns them by user data.
func reapN(t *testing.T, r *Ring, n int) map[uint64]CQE {
	t.Helper()
	got := make(map[uint64]CQE)
	for len(got) < n {
		c, err := r.WaitCQE(5 * time.Second)
		if err != nil {
			t.Fatalf("WaitCQE after %d of %d: %v", len(got), n, err)
		}
		got[c.UserData] = *c
		r.CQESeen()
	}
	return got
}

func TestLinkWriteFsyncRead(t *testing.T) {
	r := newRing(t, Options{Entries: 8})
	f, _ := tempFile(t, 0, 0)
	fd := int32(f.Fd())
	w, rb := alignedBuf(t, 4096), alignedBuf(t, 4096)
	fill(w, 42)
	s := r.NextSQE()
	s.PrepWrite(fd, w, 4096)
	s.Flags |= FlagIOLink
	s.UserData = 1
	s = r.NextSQE()
	s.PrepFsync(fd, false)
	s.Flags |= FlagIOLink
	s.UserData = 2
	s = r.NextSQE()
	s.PrepRead(fd, rb, 4096)
	s.UserData = 3
	if n, err := r.Submit(); err != nil || n != 3 {
		t.Fatalf("Submit: %d %v", n, err)
	}
	got := reapN(t, r, 3)
	if got[1].Res != 4096 || got[2].Res != 0 || got[3].Res != 4096 {
		t.Fatalf("chain results %+v", got)
	}
	if !bytes.Equal(w, rb) {
		t.Fatal("the linked read did not return what the linked write wrote")
	}
}

func TestLinkFailureCancelsRest(t *testing.T) {
	r := newRing(t, Options{Entries: 8})
	buf := alignedBuf(t, 4096)
	s := r.NextSQE()
	s.PrepRead(-1, buf, 0) // bad fd: fails
	s.Flags |= FlagIOLink
	s.UserData = 1
	for ud := uint64(2); ud <= 3; ud++ {
		s = r.NextSQE()
		s.PrepNop()
		if ud == 2 {
			s.Flags |= FlagIOLink
		}
		s.UserData = ud
	}
	got := reapN(t, r, 3)
	if got[1].Res != -int32(unix.EBADF) {
		t.Fatalf("first link res %d, want -EBADF", got[1].Res)
	}
	for ud := uint64(2); ud <= 3; ud++ {
		if got[ud].Res != -int32(unix.ECANCELED) {
			t.Fatalf("link %d res %d, want -ECANCELED", ud, got[ud].Res)
		}
	}
}

func TestHardlinkContinues(t *testing.T) {
	r := newRing(t, Options{Entries: 8})
	buf := alignedBuf(t, 4096)
	s := r.NextSQE()
	s.PrepRead(-1, buf, 0)
	s.Flags |= FlagIOHardlink
	s.UserData = 1
	s = r.NextSQE()
	s.PrepNop()
	s.UserData = 2
	got := reapN(t, r, 2)
	if got[1].Res != -int32(unix.EBADF) || got[2].Res != 0 {
		t.Fatalf("hardlinked chain results %+v, want -EBADF then 0", got)
	}
}

func TestLinkTimeoutCancelsPipeRead(t *testing.T) {
	r := newRing(t, Options{Entries: 8})
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	buf := alignedBuf(t, 4096)
	ts := (*unix.Timespec)(unsafePointerOf(buf[1024:])) // off-heap timespec
	*ts = unix.NsecToTimespec(int64(20 * time.Millisecond))
	s := r.NextSQE()
	s.PrepRead(int32(p[0]), buf[:16], 0)
	s.Flags |= FlagIOLink
	s.UserData = 1
	s = r.NextSQE()
	s.PrepLinkTimeout(ts, 0)
	s.UserData = 2
	got := reapN(t, r, 2)
	if got[1].Res != -int32(unix.ECANCELED) {
		t.Fatalf("pipe read res %d, want -ECANCELED", got[1].Res)
	}
	if got[2].Res != -int32(unix.ETIME) {
		t.Fatalf("link timeout res %d, want -ETIME", got[2].Res)
	}
}

// TestCQOverflow: more completions than the CQ holds are kept by the kernel
// (FEAT_NODROP) and delivered by ForEachCQE through the overflow flush.
func TestCQOverflow(t *testing.T) {
	r := newRing(t, Options{Entries: 4, CQEntries: 4})
	if r.Features()&FeatNoDrop == 0 {
		skipOrFail(t, "kernel without IORING_FEAT_NODROP drops overflowing CQEs")
	}
	submitted := 0
	for round := 0; round < 4; round++ {
		for i := 0; i < 4; i++ {
			s := r.NextSQE()
			s.PrepNop()
			s.UserData = uint64(submitted + i)
		}
		n, err := r.Submit()
		if err != nil {
			t.Fatalf("Submit round %d: %v", round, err)
		}
		submitted += n
	}
	if r.SQReady() != 0 {
		t.Fatalf("%d SQEs not consumed", r.SQReady())
	}
	if !r.cqNeedsEnter() {
		t.Fatal("IORING_SQ_CQ_OVERFLOW not set after 16 completions into a 4-entry CQ")
	}
	seen := make(map[uint64]bool)
	r.ForEachCQE(func(c *CQE) { seen[c.UserData] = true })
	if len(seen) != submitted || submitted != 16 {
		t.Fatalf("reaped %d distinct completions of %d submitted (want 16)", len(seen), submitted)
	}
	if r.PeekCQE() != nil {
		t.Fatal("CQ not empty after ForEachCQE")
	}
}

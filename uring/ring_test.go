package uring

import (
	"bytes"
	"errors"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestRingSetupVariants(t *testing.T) {
	cases := []struct {
		name string
		opts Options
		want uint32
	}{
		{"default", Options{}, 0},
		{"cqsize", Options{Entries: 8, CQEntries: 64}, SetupCQSize},
		{"big", Options{Entries: 16, SQE128: true, CQE32: true}, SetupSQE128 | SetupCQE32},
		{"coop", Options{CoopTaskrun: true}, SetupCoopTaskrun | SetupTaskrunFlag},
		{"single", Options{SingleIssuer: true}, SetupSingleIssuer},
		{"defer", Options{SingleIssuer: true, DeferTaskrun: true}, SetupSingleIssuer | SetupDeferTaskrun},
		{"nosqarray", Options{NoSQArray: true, SQE128: true}, SetupNoSQArray | SetupSQE128},
		{"sqpoll", Options{SQPoll: true, SQThreadCPU: -1, SQThreadIdle: 10 * time.Millisecond}, SetupSQPoll},
		{"sqpoll-aff", Options{SQPoll: true, SQThreadCPU: 0}, SetupSQPoll | SetupSQAff},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.opts.SingleIssuer {
				lockThread(t)
			}
			r := newRing(t, tc.opts)
			if got := r.SetupFlags(); got&tc.want != tc.want {
				t.Fatalf("setup flags %#x, want %#x set", got, tc.want)
			}
			if r.Features()&FeatSingleMmap == 0 {
				t.Logf("kernel without FEAT_SINGLE_MMAP: two mmaps used")
			}
			wantSQ := tc.opts.Entries
			if wantSQ == 0 {
				wantSQ = 256
			}
			if r.SQEntries() != wantSQ || r.SQSpace() != int(wantSQ) {
				t.Fatalf("SQ entries %d space %d, want %d", r.SQEntries(), r.SQSpace(), wantSQ)
			}
			if tc.opts.CQEntries != 0 && r.CQEntries() != tc.opts.CQEntries {
				t.Fatalf("CQ entries %d, want %d", r.CQEntries(), tc.opts.CQEntries)
			}
			// Fill the whole SQ with NOPs twice over: every slot (and the
			// 128-byte stride) is used and every completion comes back.
			for round := 0; round < 2; round++ {
				for i := uint32(0); i < r.SQEntries(); i++ {
					s := r.NextSQE()
					if s == nil {
						t.Fatalf("NextSQE nil after %d", i)
					}
					s.PrepNop()
					s.UserData = uint64(round)<<32 | uint64(i)
				}
				if r.NextSQE() != nil {
					t.Fatal("NextSQE not nil on a full SQ")
				}
				if _, err := r.SubmitAndWait(r.SQEntries()); err != nil && !tc.opts.SQPoll {
					t.Fatalf("SubmitAndWait: %v", err)
				}
				seen := make(map[uint64]bool)
				for len(seen) < int(r.SQEntries()) {
					c, err := r.WaitCQE(5 * time.Second)
					if err != nil {
						t.Fatalf("WaitCQE after %d: %v", len(seen), err)
					}
					if c.Res != 0 || seen[c.UserData] || c.UserData>>32 != uint64(round) {
						t.Fatalf("bad CQE %+v (seen before: %v)", *c, seen[c.UserData])
					}
					seen[c.UserData] = true
					r.CQESeen()
				}
			}
		})
	}
}

func TestRingReadWriteBuffered(t *testing.T) {
	r := newRing(t, Options{Entries: 8})
	f, _ := tempFile(t, 0, 0)
	fd := int32(f.Fd())
	w := alignedBuf(t, 8192)
	fill(w, 3)
	s := r.NextSQE()
	s.PrepWrite(fd, w[:5000], 100)
	s.UserData = 1
	if c := waitOne(t, r); c.Res != 5000 || c.UserData != 1 {
		t.Fatalf("write CQE %+v, want res 5000", c)
	}
	got := make([]byte, 5000)
	if _, err := f.ReadAt(got, 100); err != nil || !bytes.Equal(got, w[:5000]) {
		t.Fatalf("file content differs after the ring's write (err %v)", err)
	}
	rb := alignedBuf(t, 8192)
	s = r.NextSQE()
	s.PrepRead(fd, rb[:5000], 100)
	if c := waitOne(t, r); c.Res != 5000 || !bytes.Equal(rb[:5000], w[:5000]) {
		t.Fatalf("read CQE %+v, data equal %v", c, bytes.Equal(rb[:5000], w[:5000]))
	}
}

func TestRingReadWriteDirect(t *testing.T) {
	r := newRing(t, Options{Entries: 8})
	f, _ := tempFile(t, 1<<20, unix.O_DIRECT)
	fd := int32(f.Fd())
	w := alignedBuf(t, 64<<10)
	fill(w, 9)
	s := r.NextSQE()
	s.PrepWrite(fd, w, 128<<10)
	if c := waitOne(t, r); c.Res == -int32(unix.EINVAL) {
		skipOrFail(t, "O_DIRECT not supported by the temp directory's filesystem")
	} else if c.Res != int32(len(w)) {
		t.Fatalf("O_DIRECT write res %d, want %d", c.Res, len(w))
	}
	rb := alignedBuf(t, 64<<10)
	s = r.NextSQE()
	s.PrepRead(fd, rb, 128<<10)
	if c := waitOne(t, r); c.Res != int32(len(rb)) || !bytes.Equal(rb, w) {
		t.Fatalf("O_DIRECT read res %d, data equal %v", c.Res, bytes.Equal(rb, w))
	}
	// An O_DIRECT read at a misaligned file offset is refused by the
	// kernel (proof the file really is in O_DIRECT mode).
	s = r.NextSQE()
	s.PrepRead(fd, rb[:512], 128<<10+1) // inside the written range (holes read fine)
	if c := waitOne(t, r); c.Res != -int32(unix.EINVAL) {
		t.Fatalf("misaligned O_DIRECT read res %d, want -EINVAL", c.Res)
	}
}

func TestRingReadvWritev(t *testing.T) {
	r := newRing(t, Options{Entries: 8})
	f, _ := tempFile(t, 0, 0)
	fd := int32(f.Fd())
	mem := alignedBuf(t, 3*4096)
	a, b, c := mem[:100], mem[4096:4096+300], mem[8192:8192+50]
	fill(a, 1)
	fill(b, 2)
	fill(c, 3)
	iovs := alignedIovecs(t, a, b, c)
	s := r.NextSQE()
	s.PrepWritev(fd, iovs, 0)
	if cq := waitOne(t, r); cq.Res != 450 {
		t.Fatalf("writev res %d, want 450", cq.Res)
	}
	want := append(append(append([]byte(nil), a...), b...), c...)
	clear(mem)
	s = r.NextSQE()
	s.PrepReadv(fd, iovs, 0)
	if cq := waitOne(t, r); cq.Res != 450 {
		t.Fatalf("readv res %d, want 450", cq.Res)
	}
	got := append(append(append([]byte(nil), a...), b...), c...)
	if !bytes.Equal(got, want) {
		t.Fatal("readv data differs from what writev wrote")
	}
}

// alignedIovecs builds an iovec array in off-heap memory.
func alignedIovecs(t testing.TB, bufs ...[]byte) []unix.Iovec {
	mem := alignedBuf(t, 4096)
	iovs := unsafeIovecs(mem, len(bufs))
	for i, b := range bufs {
		iovs[i].Base = &b[0]
		iovs[i].SetLen(len(b))
	}
	return iovs
}

func TestRingFixedBuffersAndFiles(t *testing.T) {
	r := newRing(t, Options{Entries: 8})
	f, _ := tempFile(t, 0, 0)
	bufs := [][]byte{alignedBuf(t, 4096), alignedBuf(t, 8192)}
	if err := r.RegisterBuffers(bufs); err != nil {
		t.Fatalf("RegisterBuffers: %v", err)
	}
	if err := r.RegisterFiles([]int{-1, int(f.Fd())}); err != nil {
		t.Fatalf("RegisterFiles: %v", err)
	}
	fill(bufs[1], 5)
	s := r.NextSQE()
	s.PrepWriteFixed(1, bufs[1][4096:], 0, 1) // registered file index 1
	s.Flags |= FlagFixedFile
	if c := waitOne(t, r); c.Res != 4096 {
		t.Fatalf("write_fixed res %d, want 4096", c.Res)
	}
	s = r.NextSQE()
	s.PrepReadFixed(1, bufs[0], 0, 0)
	s.Flags |= FlagFixedFile
	if c := waitOne(t, r); c.Res != 4096 || !bytes.Equal(bufs[0], bufs[1][4096:]) {
		t.Fatalf("read_fixed res %d, data equal %v", c.Res, bytes.Equal(bufs[0], bufs[1][4096:]))
	}
	// A fixed read outside the registered buffer is refused.
	other := alignedBuf(t, 4096)
	s = r.NextSQE()
	s.PrepReadFixed(int32(f.Fd()), other, 0, 0)
	if c := waitOne(t, r); c.Res != -int32(unix.EFAULT) {
		t.Fatalf("read_fixed outside the buffer res %d, want -EFAULT", c.Res)
	}
	// Empty file slot 0.
	s = r.NextSQE()
	s.PrepRead(0, bufs[0], 0)
	s.Flags |= FlagFixedFile
	if c := waitOne(t, r); c.Res != -int32(unix.EBADF) {
		t.Fatalf("read on an empty fixed-file slot res %d, want -EBADF", c.Res)
	}
	if err := r.UnregisterBuffers(); err != nil {
		t.Fatalf("UnregisterBuffers: %v", err)
	}
	if err := r.UnregisterFiles(); err != nil {
		t.Fatalf("UnregisterFiles: %v", err)
	}
	if err := r.RegisterBuffers([][]byte{{}}); err == nil {
		t.Fatal("RegisterBuffers with an empty buffer succeeded")
	}
}

func TestRingWaitTimeout(t *testing.T) {
	r := newRing(t, Options{Entries: 4})
	start := time.Now()
	_, err := r.WaitCQE(20 * time.Millisecond)
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, unix.ETIME) {
		t.Fatalf("WaitCQE on an idle ring: %v, want ErrTimeout wrapping ETIME", err)
	}
	if time.Since(start) < 20*time.Millisecond {
		t.Fatalf("WaitCQE returned before its timeout")
	}
}

func TestRingProbe(t *testing.T) {
	r := newRing(t, Options{Entries: 4})
	p, err := r.Probe()
	if err != nil {
		t.Fatalf("Probe: %v", err)
	}
	for _, op := range []uint8{OpNop, OpRead, OpWrite, OpReadFixed, OpFsync, OpLinkTimeout, OpUringCmd} {
		if !p.Supported(op) {
			t.Errorf("probe says opcode %d is unsupported", op)
		}
	}
	if p.Supported(255) {
		t.Errorf("probe says opcode 255 is supported")
	}
}

func TestRingCloseIdempotent(t *testing.T) {
	r, err := New(Options{Entries: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := r.Submit(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Submit after Close: %v, want ErrClosed", err)
	}
}

func TestOptionsValidate(t *testing.T) {
	o := Options{Entries: 1 << 20, CQEntries: 3, DeferTaskrun: true, SQPoll: true, SQThreadCPU: -5}
	err := o.Validate()
	if !errors.Is(err, ErrBadOptions) {
		t.Fatalf("Validate: %v, want ErrBadOptions", err)
	}
	for _, want := range []string{"Entries", "CQEntries", "DeferTaskrun requires", "SQPoll", "SQThreadCPU"} {
		if !bytes.Contains([]byte(err.Error()), []byte(want)) {
			t.Errorf("Validate error %q does not mention %q", err, want)
		}
	}
	if _, err := New(o); !errors.Is(err, ErrBadOptions) {
		t.Fatalf("New with bad options: %v", err)
	}
}

func TestMain(m *testing.M) {
	if os.Getenv(seccompChildEnv) == "1" {
		os.Exit(seccompChild())
	}
	os.Exit(m.Run())
}

// TestSQPollWakeup: once the SQPOLL thread has gone idle it sets
// IORING_SQ_NEED_WAKEUP, and Submit wakes it (IORING_ENTER_SQ_WAKEUP).
func TestSQPollWakeup(t *testing.T) {
	r := newRing(t, Options{Entries: 8, SQPoll: true, SQThreadCPU: -1, SQThreadIdle: time.Millisecond})
	for round := 0; round < 3; round++ {
		deadline := time.Now().Add(5 * time.Second)
		for atomic.LoadUint32(r.sqFlags)&sqNeedWakeup == 0 {
			if time.Now().After(deadline) {
				t.Fatal("the SQPOLL thread never set IORING_SQ_NEED_WAKEUP")
			}
			time.Sleep(2 * time.Millisecond)
		}
		s := r.NextSQE()
		s.PrepNop()
		s.UserData = uint64(round)
		if _, err := r.Submit(); err != nil {
			t.Fatalf("Submit: %v", err)
		}
		c, err := r.WaitCQE(5 * time.Second)
		if err != nil || c.UserData != uint64(round) {
			t.Fatalf("round %d: %v %+v", round, err, c)
		}
		r.CQESeen()
	}
}

package uring

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// cmdRings are the two ring shapes uring_cmd is tested on.
var cmdRings = []struct {
	name string
	opts Options
}{
	{"sqe64", Options{Entries: 8}},
	{"sqe128-cqe32", Options{Entries: 8, SQE128: true, CQE32: true}},
}

// udpWithQueued returns a bound UDP socket with one n-byte datagram queued.
func udpWithQueued(t *testing.T, n int) int {
	t.Helper()
	rx, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(rx) })
	if err := unix.Bind(rx, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := unix.Getsockname(rx)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(tx)
	if err := unix.Sendto(tx, bytes.Repeat([]byte{'x'}, n), 0, sa); err != nil {
		t.Fatal(err)
	}
	return rx
}

func TestUringCmdSIOCINQ(t *testing.T) {
	for _, rc := range cmdRings {
		t.Run(rc.name, func(t *testing.T) {
			r := newRing(t, rc.opts)
			const n = 13
			sock := udpWithQueued(t, n)
			s := r.NextSQE()
			s.PrepUringCmd(int32(sock), SocketOpSIOCINQ)
			c := waitOne(t, r)
			if c.Res == -int32(unix.EOPNOTSUPP) {
				skipOrFail(t, "kernel without SOCKET_URING_OP_SIOCINQ (Linux 6.7+)")
			}
			if c.Res != n {
				t.Fatalf("SIOCINQ res %d, want %d", c.Res, n)
			}
			if big := c.Big(); big != [2]uint64{} {
				t.Fatalf("big_cqe %v, want zeros", big)
			}
			// __pad1 != 0 is refused: proves cmd_op/__pad1 placement.
			s = r.NextSQE()
			s.PrepUringCmd(int32(sock), SocketOpSIOCINQ)
			s.SetPad1(1)
			if c := waitOne(t, r); c.Res != -int32(unix.EINVAL) {
				t.Fatalf("uring_cmd with __pad1=1 res %d, want -EINVAL", c.Res)
			}
		})
	}
}

// loopDevice attaches a temp file of size bytes filled with 0xAA to a free
// loop device (root only) and returns its path; detached at cleanup.
func loopDevice(t *testing.T, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		skipOrFail(t, "losetup needs root")
	}
	losetup, err := exec.LookPath("losetup")
	if err != nil {
		skipOrFail(t, "losetup not installed: %v", err)
	}
	path := t.TempDir() + "/loop.img"
	if err := os.WriteFile(path, bytes.Repeat([]byte{0xAA}, size), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(losetup, "-f", "--show", path).CombinedOutput()
	if err != nil {
		skipOrFail(t, "losetup -f --show: %v: %s", err, out)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if out, err := exec.Command(losetup, "-d", dev).CombinedOutput(); err != nil {
			t.Errorf("losetup -d %s: %v: %s", dev, err, out)
		}
	})
	return dev
}

func TestUringCmdBlockDiscard(t *testing.T) {
	const size, off, length = 4 << 20, 1 << 20, 256 << 10
	dev := loopDevice(t, size)
	for _, rc := range cmdRings {
		t.Run(rc.name, func(t *testing.T) {
			r := newRing(t, rc.opts)
			// O_DIRECT keeps the device's page cache empty, so the
			// discard is issued inline (with pages cached, the kernel
			// answers -EAGAIN to the non-blocking try and re-issues it
			// from an io-wq worker).
			f, err := os.OpenFile(dev, os.O_RDWR|unix.O_DIRECT, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			buf := alignedBuf(t, size)
			for i := range buf {
				buf[i] = 0xAA
			}
			if _, err := f.WriteAt(buf, 0); err != nil {
				t.Fatal(err)
			}
			s := r.NextSQE()
			s.PrepUringCmd(int32(f.Fd()), BlockCmdDiscard)
			s.Addr, s.Addr3 = off, length
			c := waitOne(t, r)
			if c.Res == -int32(unix.EOPNOTSUPP) {
				skipOrFail(t, "kernel without BLOCK_URING_CMD_DISCARD (Linux 6.12+)")
			}
			if c.Res != 0 {
				t.Fatalf("discard res %d, want 0", c.Res)
			}
			got := buf
			clear(got)
			if _, err := f.ReadAt(got, 0); err != nil {
				t.Fatal(err)
			}
			for i, b := range got {
				inside := i >= off && i < off+length
				if (inside && b != 0) || (!inside && b != 0xAA) {
					t.Fatalf("byte %d = %#x after discard of [%d, %d)", i, b, off, off+length)
				}
			}
			// A misaligned discard is refused.
			s = r.NextSQE()
			s.PrepUringCmd(int32(f.Fd()), BlockCmdDiscard)
			s.Addr, s.Addr3 = 1, length
			if c := waitOne(t, r); c.Res != -int32(unix.EINVAL) {
				t.Fatalf("misaligned discard res %d, want -EINVAL", c.Res)
			}
		})
	}
}

func TestUringCmdRegularFileUnsupported(t *testing.T) {
	r := newRing(t, Options{Entries: 4})
	f, _ := tempFile(t, 0, 0)
	s := r.NextSQE()
	s.PrepUringCmd(int32(f.Fd()), 0)
	if c := waitOne(t, r); c.Res != -int32(unix.EOPNOTSUPP) {
		t.Fatalf("uring_cmd on a regular file res %d, want -EOPNOTSUPP", c.Res)
	}
}

// TestUringCmdFront runs SIOCINQ through a Front on an SQE128|CQE32 ring
// using the 80-byte command area accessor (left zero) and checks Result.Big.
func TestUringCmdFront(t *testing.T) {
	f := newFront(t, FrontOptions{Ring: Options{Entries: 8, SQE128: true, CQE32: true}})
	sock := udpWithQueued(t, 21)
	res, err := f.Do(t.Context(), &Request{Prep: func(s *SQE) {
		s.PrepUringCmd(int32(sock), SocketOpSIOCINQ)
		if s.Cmd80()[79] != 0 {
			panic(fmt.Sprintf("SQE128 tail not zeroed: %#x", s.Cmd80()[79]))
		}
	}})
	if err != nil || res[0].Res != 21 || res[0].Big != [2]uint64{} {
		t.Fatalf("SIOCINQ through the Front: %v %+v", err, res)
	}
	// Result.Big carries big_cqe (IORING_NOP_CQE32, Linux 6.18).
	res, err = f.Do(t.Context(), &Request{Prep: func(s *SQE) {
		s.PrepNop()
		s.OpFlags = nopCQE32
		s.Off, s.Addr = 0xABCDEF, 0x123456789
	}})
	if err != nil || res[0].Big != [2]uint64{0xABCDEF, 0x123456789} {
		if res != nil && res[0].Res == -int32(unix.EINVAL) {
			skipOrFail(t, "kernel without IORING_NOP_CQE32 (Linux 6.18)")
		}
		t.Fatalf("NOP_CQE32 through the Front: %v %+v", err, res)
	}
}

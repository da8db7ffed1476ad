package server

import (
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// setUmask sets the process umask and returns the previous one (umask(2)
// cannot fail).
func setUmask(mask int) int { return syscall.Umask(mask) }

// writevNonblock writes iov to the socket fd without waiting (Go sets
// O_NONBLOCK on every socket): the bytes it took, 0 and no error if none
// (EAGAIN). A non-blocking socket's writev cannot block, so it is a
// RawSyscall: no entersyscall/exitsyscall handshake with the scheduler,
// which costs as much as the rest of an unpipelined GET's user time in Go.
func writevNonblock(fd int, iov []unix.Iovec) (int, error) {
	if len(iov) == 0 {
		return 0, nil
	}
	for {
		n, _, e := unix.RawSyscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)))
		switch e {
		case 0:
			return int(n), nil
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return 0, nil
		}
		return 0, os.NewSyscallError("writev", e)
	}
}

// readNonblock reads from the socket fd without waiting: 0 and no error if
// nothing has arrived (EAGAIN), eof if the peer closed. It is a
// RawSyscall as writevNonblock is: read(2) of a non-blocking socket
// cannot block.
func readNonblock(fd int, p []byte) (n int, eof bool, err error) {
	if len(p) == 0 {
		return 0, false, nil
	}
	for {
		r, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		switch {
		case e == 0 && r == 0:
			return 0, true, nil
		case e == 0:
			return int(r), false, nil
		case e == unix.EINTR:
			continue
		case e == unix.EAGAIN:
			return 0, false, nil
		}
		return 0, false, os.NewSyscallError("read", e)
	}
}

// pollFor waits up to timeoutMs for fd to become writable, or readable too
// if read (or to fail: the next read or write reports why); in reports
// readable (data, or the peer's close).
func pollFor(fd int, read bool, timeoutMs int) (in bool, err error) {
	ev := int16(unix.POLLOUT)
	if read {
		ev |= unix.POLLIN
	}
	fds := []unix.PollFd{{Fd: int32(fd), Events: ev}}
	for {
		_, err := unix.Poll(fds, timeoutMs)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return false, os.NewSyscallError("poll", err)
		}
		return fds[0].Revents&(unix.POLLIN|unix.POLLHUP|unix.POLLRDHUP) != 0, nil
	}
}

// cpuTimes is the CPU time the process spent in user and system mode
// (getrusage(2), RUSAGE_SELF), zero where it cannot be read.
func cpuTimes() (user, sys float64) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0
	}
	return float64(ru.Utime.Nano()) / 1e9, float64(ru.Stime.Nano()) / 1e9
}

// fileLimit is the soft RLIMIT_NOFILE (getrlimit(2)).
func fileLimit() (uint64, error) {
	var r unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &r); err != nil {
		return 0, os.NewSyscallError("getrlimit", err)
	}
	return r.Cur, nil
}

// openFiles counts the process's open descriptors (proc(5): /proc/self/fd).
func openFiles() (int, error) {
	d, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, err
	}
	return len(d) - 1, nil // less the directory ReadDir itself had open
}

// openSpare opens /dev/null to hold a descriptor in reserve (spareFd).
func openSpare() (int, error) {
	fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, os.NewSyscallError("open /dev/null", err)
	}
	return fd, nil
}

func closeFd(fd int) { unix.Close(fd) }

// peekHangup looks at the socket fd without taking anything from it: eof
// if the peer closed or shut down its writing, with or without requests
// still unread (POLLRDHUP or POLLHUP behind the unread bytes: a peek alone
// cannot see a close queued after them); ready when it can tell, false and
// false while nothing or only requests have arrived.
func peekHangup(fd int) (eof, ready bool) {
	var b [1]byte
	for {
		n, _, err := unix.Recvfrom(fd, b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return false, false
		case err != nil:
			return true, true // a reset connection is gone too
		case n == 0:
			return true, true
		}
		// Requests are waiting: poll(2) with no wait tells whether the
		// peer's close or shutdown came after them (tcp_poll and
		// unix_poll set EPOLLRDHUP once the receive side is shut).
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
		if _, err := unix.Poll(fds, 0); err == unix.EINTR {
			continue
		}
		hup := fds[0].Revents&(unix.POLLRDHUP|unix.POLLHUP|unix.POLLERR) != 0
		return hup, hup
	}
}

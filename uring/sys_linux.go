package uring

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Raw system calls. Shaped like x/sys's generated code: an errno of 0 becomes
// a nil error, never a bare Errno(0). io_uring_enter can block (GETEVENTS),
// so it uses Syscall6; setup and register use Syscall6 too because
// registering buffers pins pages and may sleep.

// sysSetup calls io_uring_setup(entries, p).
func sysSetup(entries uint32, p *params) (int, error) {
	fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(p)), 0)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

// sysEnter calls io_uring_enter(fd, toSubmit, minComplete, flags, arg, argSz).
// arg is either nil or a *getEventsArg (with enterExtArg); it must not live on
// a goroutine stack because it holds a pointer read by the kernel.
func sysEnter(fd int, toSubmit, minComplete, flags uint32, arg *getEventsArg) (int, error) {
	var argSz uintptr
	if arg != nil {
		argSz = unsafe.Sizeof(*arg)
	}
	n, _, e := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(fd), uintptr(toSubmit), uintptr(minComplete),
		uintptr(flags), uintptr(unsafe.Pointer(arg)), argSz)
	if e != 0 {
		return int(n), e
	}
	return int(n), nil
}

// sysRegister calls io_uring_register(fd, opcode, arg, nrArgs).
func sysRegister(fd int, opcode uint32, arg unsafe.Pointer, nrArgs uint32) (int, error) {
	n, _, e := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(fd), uintptr(opcode), uintptr(arg), uintptr(nrArgs), 0, 0)
	if e != 0 {
		return int(n), e
	}
	return int(n), nil
}

// sysMmap maps a ring region of fd at the given IORING_OFF_* offset.
func sysMmap(fd int, offset uint64, length int) ([]byte, error) {
	return unix.Mmap(fd, int64(offset), length, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
}

// sysMunmap unmaps exactly what sysMmap returned.
func sysMunmap(b []byte) error { return unix.Munmap(b) }

// sysEventfd creates a blocking, close-on-exec eventfd.
func sysEventfd() (int, error) { return unix.Eventfd(0, unix.EFD_CLOEXEC) }

// sysEventfdSignal adds 1 to an eventfd counter.
func sysEventfdSignal(fd int) error {
	one := [8]byte{1} // little-endian uint64(1); amd64 and arm64 are LE
	for {
		_, err := unix.Write(fd, one[:])
		if err != unix.EINTR {
			return err
		}
	}
}

// sysClose closes a file descriptor.
func sysClose(fd int) error { return unix.Close(fd) }

// sysGettid returns the calling OS thread's id.
func sysGettid() int { return unix.Gettid() }

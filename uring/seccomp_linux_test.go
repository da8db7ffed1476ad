package uring

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// denyIOUringSetup installs a seccomp filter on every thread of the process
// that makes io_uring_setup fail with EPERM and allows everything else.
// Classic BPF over struct seccomp_data (nr at offset 0); see
// Documentation/userspace-api/seccomp_filter.rst.
func denyIOUringSetup() error {
	const (
		ldAbsW  = 0x20 // BPF_LD|BPF_W|BPF_ABS
		jeqK    = 0x15 // BPF_JMP|BPF_JEQ|BPF_K
		retK    = 0x06 // BPF_RET|BPF_K
		errnoMs = 0xffff
	)
	prog := []unix.SockFilter{
		{Code: ldAbsW, K: 0},
		{Code: jeqK, Jt: 0, Jf: 1, K: unix.SYS_IO_URING_SETUP},
		{Code: retK, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)&errnoMs},
		{Code: retK, K: unix.SECCOMP_RET_ALLOW},
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	_, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC,
		uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if e != 0 {
		return e
	}
	return nil
}

package nvmekv

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ioctlNVMeID returns the namespace id of an NVMe namespace device (NVME_IOCTL_ID).
func ioctlNVMeID(fd int) (uint32, error) {
	r, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(NVMeIoctlID), 0)
	if e != 0 {
		return 0, e
	}
	return uint32(r), nil
}

// ioctlPassthru issues NVME_IOCTL_ADMIN_CMD or NVME_IOCTL_IO_CMD with cmd
// (whose Rsvd2 receives the completion's DW0) and data buffer buf. It
// returns the NVMe status (> 0) as res, or an errno.
func ioctlPassthru(fd int, req uint32, cmd *PassthruCmd, buf []byte) (res int32, err error) {
	var p runtime.Pinner
	defer p.Unpin()
	if len(buf) > 0 {
		p.Pin(&buf[0])
		cmd.Addr, cmd.DataLen = addrOf(buf), uint32(len(buf))
	}
	r, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(unsafe.Pointer(cmd)))
	runtime.KeepAlive(cmd)
	if e != 0 {
		return 0, e
	}
	return int32(r), nil
}

func openRW(path string) (int, error) {
	return unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
}

func closeFd(fd int) error { return unix.Close(fd) }

// mapAnon maps n bytes of anonymous memory (chunkBufs): page-aligned, off
// the Go heap, backed by the kernel as it is first written.
func mapAnon(n int) ([]byte, error) {
	return unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
}

// unmapAnon unmaps what mapAnon returned.
func unmapAnon(b []byte) error { return unix.Munmap(b[:cap(b)]) }

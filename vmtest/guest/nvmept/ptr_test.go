package nvmept

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// addr is the user address of b[0] for a command's data pointer. The
// buffers come from mmapBuf (off the Go heap, page aligned), so they never
// move and need no pinning.
func addr(b []byte) uint64 { return uint64(uintptr(unsafe.Pointer(&b[0]))) }

// mmapBuf maps n bytes of anonymous memory, unmapped at the end of the test.
func mmapBuf(t *testing.T, n int) []byte {
	t.Helper()
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatalf("mmap %d bytes: %v", n, err)
	}
	t.Cleanup(func() { unix.Munmap(b) })
	return b
}

// ioctlPassthru issues NVME_IOCTL_ADMIN_CMD / NVME_IOCTL_IO_CMD and returns
// the ioctl's return value: 0, or the positive NVMe status.
func ioctlPassthru(fd uintptr, req uint32, cmd unsafe.Pointer) (int, error) {
	r, _, errno := unix.Syscall(unix.SYS_IOCTL, fd, uintptr(req), uintptr(cmd))
	if errno != 0 {
		return 0, errno
	}
	return int(r), nil
}

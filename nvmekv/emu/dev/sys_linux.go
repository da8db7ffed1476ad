package dev

import (
	"errors"
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// openDev opens path read-write with O_DIRECT (created as a regular file
// if missing). A filesystem without O_DIRECT (EINVAL) is opened buffered.
func openDev(path string) (fd int, isBlock bool, size int64, direct bool, err error) {
	flags := unix.O_RDWR | unix.O_CLOEXEC | unix.O_CREAT
	fd, err = unix.Open(path, flags|unix.O_DIRECT, 0o644)
	direct = err == nil
	if errors.Is(err, unix.EINVAL) {
		fd, err = unix.Open(path, flags, 0o644)
	}
	if err != nil {
		return -1, false, 0, false, fmt.Errorf("dev: open %s: %w", path, err)
	}
	var st unix.Stat_t
	if err = unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, false, 0, false, fmt.Errorf("dev: stat %s: %w", path, err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFBLK:
		var sz uint64
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.BLKGETSIZE64, uintptr(unsafe.Pointer(&sz))); e != 0 {
			unix.Close(fd)
			return -1, false, 0, false, fmt.Errorf("dev: BLKGETSIZE64 on %s: %w", path, e)
		}
		return fd, true, int64(sz), direct, nil
	case unix.S_IFREG:
		return fd, false, st.Size, direct, nil
	}
	unix.Close(fd)
	return -1, false, 0, false, fmt.Errorf("dev: %s is neither a regular file nor a block device", path)
}

// openChar opens path read-write and checks that it is a character
// device (an NVMe generic char device /dev/ngXnY).
func openChar(path string) (int, error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("dev: open %s (an NVMe generic char device /dev/ngXnY is needed): %w", path, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("dev: stat %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFCHR {
		unix.Close(fd)
		return -1, fmt.Errorf("%w: %s is not a character device; NVM passthrough needs the generic char device /dev/ngXnY (not the block device /dev/nvmeXnY, nor a file)", ErrNotDevice, path)
	}
	return fd, nil
}

// dioAlign is the O_DIRECT offset/length alignment of fd (statx
// STATX_DIOALIGN, Linux 6.1+; BLKSSZGET for a block device), or 4096 when
// unknown. Reads use it; writes always use 4096.
func dioAlign(fd int, isBlock bool) int {
	var stx unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_DIOALIGN, &stx); err == nil && stx.Mask&unix.STATX_DIOALIGN != 0 {
		if a := int(stx.Dio_offset_align); a >= 512 && a <= blockBytes && a&(a-1) == 0 && int(stx.Dio_mem_align) <= a {
			return a
		}
	}
	if isBlock {
		if a, err := unix.IoctlGetInt(fd, unix.BLKSSZGET); err == nil && a >= 512 && a <= blockBytes && a&(a-1) == 0 {
			return a
		}
	}
	return blockBytes
}

func ftruncate(fd int, n int64) error { return unix.Ftruncate(fd, n) }

// fallocate allocates bytes [0, n) of fd (mode 0: blocks are reserved,
// reads of never-written ones return zeros).
func fallocate(fd int, n int64) error {
	for {
		err := unix.Fallocate(fd, 0, 0, n)
		if err != unix.EINTR {
			return err
		}
	}
}

// fsFree is the free space of fd's filesystem for an unprivileged user.
func fsFree(fd int) (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		return 0, err
	}
	return st.Bavail * uint64(st.Bsize), nil
}

// pread/pwrite loop until n bytes moved (used for the superblock only).
func pread(fd int, b []byte, off int64) error {
	for len(b) > 0 {
		n, err := unix.Pread(fd, b, off)
		if err != nil {
			return err
		}
		if n == 0 {
			return syscall.EIO
		}
		b, off = b[n:], off+int64(n)
	}
	return nil
}

// preadShort reads up to len(b) bytes at off; bytes past the end of the
// file read as zero.
func preadShort(fd int, b []byte, off int64) error {
	clear(b)
	for len(b) > 0 {
		n, err := unix.Pread(fd, b, off)
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		b, off = b[n:], off+int64(n)
	}
	return nil
}

func pwrite(fd int, b []byte, off int64) error {
	for len(b) > 0 {
		n, err := unix.Pwrite(fd, b, off)
		if err != nil {
			return err
		}
		b, off = b[n:], off+int64(n)
	}
	return nil
}

func fdatasync(fd int) error { return unix.Fdatasync(fd) }

func closeFd(fd int) error { return unix.Close(fd) }

// MapBuffer returns n bytes of page-aligned anonymous memory off the Go
// heap (mmap(2)): aligned for O_DIRECT and passthrough transfers, never
// moved, and free to register with io_uring. Release it with UnmapBuffer.
func MapBuffer(n int) ([]byte, error) {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("dev: mmap %d bytes: %w", n, err)
	}
	return b, nil
}

// UnmapBuffer releases what MapBuffer returned (nil: nothing).
func UnmapBuffer(b []byte) error {
	if b == nil {
		return nil
	}
	return unix.Munmap(b)
}

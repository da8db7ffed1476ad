package emu

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapBuf returns n bytes of page-aligned anonymous memory (off the Go heap).
func mapBuf(n int) ([]byte, error) {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("emu: mmap %d bytes: %w", n, err)
	}
	return b, nil
}

// mapHuge maps n bytes (rounded up to 2 MiB) of zeroed anonymous memory and
// advises transparent huge pages for it (madvise(2) MADV_HUGEPAGE; with THP
// off or "never" the advice fails and 4 KiB pages are used).
func mapHuge(n int) ([]byte, error) {
	const huge = 2 << 20
	sz := (n + huge - 1) &^ (huge - 1)
	b, err := mapBuf(sz)
	if err != nil {
		return nil, err
	}
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE) // advice only
	return b[:n], nil
}

func unmapBuf(b []byte) error {
	if b == nil {
		return nil
	}
	return unix.Munmap(b)
}

// aligned reports whether b is not empty and starts at a multiple of a (a
// power of two) in memory: O_DIRECT's buffer alignment.
func aligned(b []byte, a int) bool {
	return len(b) > 0 && uintptr(unsafe.Pointer(unsafe.SliceData(b)))&uintptr(a-1) == 0
}

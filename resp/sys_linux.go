package resp

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size of a transparent huge page (x86-64's and arm64's
// PMD with 4 KiB pages).
const hugePage = 2 << 20

// mapBig maps n bytes of anonymous memory for a big bulk: the kernel backs
// a page when it is first written, so a declared length commits memory
// only as its bytes arrive (R1, R12). Huge pages (fewer page faults as
// bytes arrive) are asked for only past the first 2 MiB-aligned address
// at least hugePage into the buffer, and refused before it: a huge page
// is backed whole at its first byte, so one at the buffer's start would
// commit 2 MiB for the first few bytes a client sends; past that point at
// least 2 MiB have arrived, and what is backed is at most twice that.
func mapBig(n int) ([]byte, error) {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("resp: mmap %d bytes: %w", n, err)
	}
	base := uintptr(unsafe.Pointer(&b[0]))
	head := min(n, int((base+2*hugePage-1)&^(hugePage-1)-base))
	// Advice only: an error leaves the kernel's default.
	_ = unix.Madvise(b[:head], unix.MADV_NOHUGEPAGE)
	if head < n {
		_ = unix.Madvise(b[head:], unix.MADV_HUGEPAGE)
	}
	return b, nil
}

// unmapBig unmaps what mapBig returned.
func unmapBig(b []byte) error {
	if err := unix.Munmap(b); err != nil {
		return fmt.Errorf("resp: munmap %d bytes: %w", len(b), err)
	}
	return nil
}

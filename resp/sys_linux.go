package resp

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// mapBig maps n bytes of anonymous memory for a big bulk: the kernel backs
// a page when it is first written, so a declared length commits memory
// only as its bytes arrive (R1).
func mapBig(n int) ([]byte, error) {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("resp: mmap %d bytes: %w", n, err)
	}
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE) // advice only: fewer page faults as bytes arrive
	return b, nil
}

// unmapBig unmaps what mapBig returned.
func unmapBig(b []byte) error {
	if err := unix.Munmap(b); err != nil {
		return fmt.Errorf("resp: munmap %d bytes: %w", len(b), err)
	}
	return nil
}

package logstore

import (
	"golang.org/x/sys/unix"

	"github.com/tiercache/tiercache/nvmekv/emu/dev"
)

// mapHuge maps n bytes (rounded up to 2 MiB) of zeroed anonymous memory and
// advises transparent huge pages for it (madvise(2) MADV_HUGEPAGE; with THP
// off or "never" the advice fails and 4 KiB pages are used).
func mapHuge(n int) ([]byte, error) {
	const huge = 2 << 20
	sz := (n + huge - 1) &^ (huge - 1)
	b, err := dev.MapBuffer(sz)
	if err != nil {
		return nil, err
	}
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE) // advice only
	return b[:n], nil
}

// dontNeed gives the pages of b back to the kernel (madvise(2)
// MADV_DONTNEED): in an anonymous private mapping they read as zeros
// afterwards and take no memory until written.
func dontNeed(b []byte) error { return unix.Madvise(b, unix.MADV_DONTNEED) }

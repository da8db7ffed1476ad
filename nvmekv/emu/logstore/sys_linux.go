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

// mapPages maps n bytes (rounded up to a page) of zeroed anonymous
// memory, left unadvised: its pages come in as prefault writes them.
func mapPages(n int) ([]byte, error) {
	sz := (n + pageBytes - 1) &^ (pageBytes - 1)
	b, err := dev.MapBuffer(sz)
	if err != nil {
		return nil, err
	}
	return b[:n], nil
}

// prefault makes every page of b resident and writable in one call
// (madvise(2) MADV_POPULATE_WRITE, Linux 5.14), after the bind hook has
// set its placement, rather than a page fault per 4 KiB page at its
// first write: in a VM a fault costs some 15 µs, and faulting page by
// page BenchmarkTagIndex/add takes about 4 µs an add, against about 1 µs
// prefaulted (E35). A kernel without it leaves the pages to fault in as
// written; the table works either way.
func prefault(b []byte) { _ = unix.Madvise(b, unix.MADV_POPULATE_WRITE) }

// pageBytes is the kernel's page size, the unit of a mapping (getpagesize(2)).
var pageBytes = unix.Getpagesize()

package numa

import "unsafe"

// The package's only pointer arithmetic: addresses of arena pages, which
// live in mmap'd memory outside the Go heap and never move.

func baseAddr(b []byte) uintptr {
	if len(b) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(unsafe.SliceData(b)))
}

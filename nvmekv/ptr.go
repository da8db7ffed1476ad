package nvmekv

import "unsafe"

// The package's only pointer-to-integer conversions: addresses of buffers
// that go into NVMe commands. The caller pins (runtime.Pinner or
// uring.Request.Pin) or mmaps the memory until the command completes.

// addrOf is the address of b's first byte, 0 if b is empty.
func addrOf(b []byte) uint64 {
	if len(b) == 0 {
		return 0
	}
	return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
}

package uring

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// All pointer arithmetic of the package lives here. Every pointer made here
// points into memory mapped from the ring fd (never the Go heap), except
// bytesAddr/sliceAddr which only take an address for the kernel.

// u32At returns a pointer to the uint32 at byte offset off of the mapping m.
func u32At(m []byte, off uint32) *uint32 {
	return (*uint32)(unsafe.Pointer(&m[off]))
}

// sqeAt returns the SQE of slot i in the SQE mapping (shift 6 for 64-byte
// SQEs, 7 for 128-byte SQEs).
func sqeAt(sqes []byte, i uint32, shift uint) *SQE {
	return (*SQE)(unsafe.Pointer(&sqes[uintptr(i)<<shift]))
}

// cqeAt returns slot i of the CQE array at byte offset off of the mapping m
// (shift 4 for 16-byte CQEs, 5 for 32-byte CQEs).
func cqeAt(m []byte, off uint32, i uint32, shift uint) *rawCQE32 {
	return (*rawCQE32)(unsafe.Pointer(&m[uintptr(off)+uintptr(i)<<shift]))
}

// sqeBytes views an SQE (and, on an SQE128 ring, the 64 bytes after it) as
// bytes. Only valid for SQEs inside the SQE mapping.
func sqeBytes(s *SQE, n int) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(s)), n)
}

// sqeCmd returns the cmd area of an SQE: bytes 48.. of it.
func sqeCmd(s *SQE) unsafe.Pointer { return unsafe.Add(unsafe.Pointer(s), 48) }

// bytesAddr is the address of b's first byte for an SQE field, 0 if empty.
func bytesAddr(b []byte) uint64 {
	if len(b) == 0 {
		return 0
	}
	return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
}

// ptrAddr is the address of p for an SQE field.
func ptrAddr(p unsafe.Pointer) uint64 { return uint64(uintptr(p)) }

// unsafePointer converts a kernelTimespec pointer for an address field.
func unsafePointer(ts *kernelTimespec) unsafe.Pointer { return unsafe.Pointer(ts) }

// unsafeIovecs views the start of mem as n iovecs (tests keep iovec arrays
// off-heap this way).
func unsafeIovecs(mem []byte, n int) []unix.Iovec {
	return unsafe.Slice((*unix.Iovec)(unsafe.Pointer(&mem[0])), n)
}

// unsafePointerOf is the address of b's first byte as an unsafe.Pointer.
func unsafePointerOf(b []byte) unsafe.Pointer { return unsafe.Pointer(&b[0]) }

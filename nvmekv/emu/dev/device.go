package dev

import "github.com/tiercache/tiercache/uring"

// Device is the storage under an emulated namespace, addressed in bytes.
// The namespace prepares its asynchronous I/O with PrepRead/PrepWrite on
// its own rings (set up with what Ring asks for) and hands each completion
// to Done; the superblock, flushes and deallocation go through the
// synchronous methods. Every offset and length the namespace passes is a
// multiple of ReadAlign (reads) or 4096 (writes), and no transfer is longer
// than MaxTransfer.
type Device interface {
	// Path names the device in errors.
	Path() string
	// Size is the addressable size in bytes (a file: its current size).
	Size() int64
	// Fixed reports a device whose size cannot change (block device, NVMe
	// namespace): Resize and Reserve only check, and the namespace keeps
	// no side checkpoint file for it by default.
	Fixed() bool
	// Direct reports I/O that bypasses the page cache.
	Direct() bool
	// ReadAlign is the offset and length alignment of reads (512..4096).
	ReadAlign() int
	// MaxTransfer is the largest single I/O in bytes, a multiple of 4096;
	// 0 means no limit.
	MaxTransfer() int
	// Ring sets the ring options this device's SQEs need.
	Ring(o *uring.Options)
	// PrepRead and PrepWrite fill s with a transfer of mem at byte offset
	// off; fixed says mem lies in registered buffer idx.
	PrepRead(s *uring.SQE, mem []byte, off int64, fixed bool, idx uint16)
	PrepWrite(s *uring.SQE, mem []byte, off int64, fixed bool, idx uint16)
	// Done turns the cqe.res of a transfer of n bytes into the bytes moved
	// (0..n) or a negative errno.
	Done(res int32, n int) int32
	// Refuse is asked before each asynchronous transfer is submitted: when
	// refused, the transfer is not submitted and completes with res (a
	// negative errno, or a short byte count) instead.
	Refuse(write bool, off int64, n int) (res int32, refused bool)
	// ReadAt and WriteAt move b at off synchronously (a regular file's
	// bytes past its end read as zero).
	ReadAt(b []byte, off int64) error
	WriteAt(b []byte, off int64) error
	// Sync makes every completed write durable (fdatasync, NVM Flush).
	Sync() error
	// Deallocate tells the device that bytes [off, off+n) hold nothing
	// (NVM Dataset Management); a no-op where it would cost a reservation.
	Deallocate(off, n int64) error
	// Resize makes the device at least n bytes long (a regular file is
	// extended; a fixed device fails if it is smaller).
	Resize(n int64) error
	// Reserve allocates the first n bytes (fallocate) so later writes
	// cannot meet ENOSPC; nil on a fixed device.
	Reserve(n int64) error
	// FreeBytes is the free space of the filesystem holding a file.
	FreeBytes() (uint64, error)
	// Close releases the device. Idempotent.
	Close() error
}

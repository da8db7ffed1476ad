package dev

import (
	"fmt"
	"sync"

	"github.com/tiercache/tiercache/uring"
)

// File is a regular file or a block device, read and written with
// io_uring read/write (O_DIRECT where the filesystem allows it).
type File struct {
	path    string
	fd      int
	isBlock bool
	size    int64
	direct  bool
	align   int
	once    sync.Once
	err     error
}

// OpenFile opens path read-write with O_DIRECT, creating a regular file if
// it is missing; a filesystem that refuses O_DIRECT is opened buffered
// (Direct reports which).
func OpenFile(path string) (*File, error) {
	fd, isBlock, size, direct, err := openDev(path)
	if err != nil {
		return nil, err
	}
	f := &File{path: path, fd: fd, isBlock: isBlock, size: size, direct: direct, align: blockBytes}
	if direct {
		f.align = dioAlign(fd, isBlock)
	}
	return f, nil
}

// blockBytes is the write alignment of every device.
const blockBytes = 4096

func (f *File) Path() string          { return f.path }
func (f *File) Size() int64           { return f.size }
func (f *File) Fixed() bool           { return f.isBlock }
func (f *File) Direct() bool          { return f.direct }
func (f *File) ReadAlign() int        { return f.align }
func (f *File) MaxTransfer() int      { return 0 }
func (f *File) Ring(o *uring.Options) {}

func (f *File) PrepRead(s *uring.SQE, mem []byte, off int64, fixed bool, idx uint16) {
	if fixed {
		s.PrepReadFixed(int32(f.fd), mem, uint64(off), idx)
	} else {
		s.PrepRead(int32(f.fd), mem, uint64(off))
	}
}

func (f *File) PrepWrite(s *uring.SQE, mem []byte, off int64, fixed bool, idx uint16) {
	if fixed {
		s.PrepWriteFixed(int32(f.fd), mem, uint64(off), idx)
	} else {
		s.PrepWrite(int32(f.fd), mem, uint64(off))
	}
}

// Done: a read or write's cqe.res already is the byte count or -errno.
func (f *File) Done(res int32, n int) int32 { return res }

func (f *File) Refuse(write bool, off int64, n int) (int32, bool) { return 0, false }

func (f *File) ReadAt(b []byte, off int64) error {
	if err := preadShort(f.fd, b, off); err != nil {
		return fmt.Errorf("dev: read %d bytes at %d of %s: %w", len(b), off, f.path, err)
	}
	return nil
}

func (f *File) WriteAt(b []byte, off int64) error {
	if err := pwrite(f.fd, b, off); err != nil {
		return fmt.Errorf("dev: write %d bytes at %d of %s: %w", len(b), off, f.path, err)
	}
	return nil
}

func (f *File) Sync() error {
	if err := fdatasync(f.fd); err != nil {
		return fmt.Errorf("dev: fdatasync %s: %w", f.path, err)
	}
	return nil
}

// Deallocate does nothing: punching holes would give up the blocks Reserve
// took (E14 of the namespace), and a region is rewritten soon after.
func (f *File) Deallocate(off, n int64) error { return nil }

func (f *File) Resize(n int64) error {
	switch {
	case n <= f.size:
		return nil
	case f.isBlock:
		return fmt.Errorf("%w: block device %s has %d bytes, %d needed", ErrOutOfRange, f.path, f.size, n)
	}
	if err := ftruncate(f.fd, n); err != nil {
		return fmt.Errorf("dev: size %s to %d bytes: %w", f.path, n, err)
	}
	f.size = n
	return nil
}

// Truncate shrinks or grows a regular file to n bytes.
func (f *File) Truncate(n int64) error {
	if f.isBlock {
		return nil
	}
	if err := ftruncate(f.fd, n); err != nil {
		return err
	}
	f.size = n
	return nil
}

func (f *File) Reserve(n int64) error {
	if f.isBlock {
		return nil
	}
	return fallocate(f.fd, n)
}

func (f *File) FreeBytes() (uint64, error) { return fsFree(f.fd) }

func (f *File) Close() error {
	f.once.Do(func() { f.err = closeFd(f.fd) })
	return f.err
}

var _ Device = (*File)(nil)

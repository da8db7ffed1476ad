package dev

import (
	"fmt"
	"syscall"

	"github.com/tiercache/tiercache/uring"
)

// Window is a byte range [Base, Base+Len) of another Device, seen as a
// device of Len bytes of its own: an emulated namespace of a volume
// (nvmekv/emu/volume), on a file, a block device or an NVM namespace's
// LBA range. Every offset is moved by Base; a request that reaches past
// Len is refused before it is submitted (D8). The window shares the
// device: its Close does not close it, and Sync syncs all of it.
type Window struct {
	d         Device
	base, len int64
	name      string
}

// NewWindow returns the range [base, base+n) of d, named name in errors.
// base and n must be multiples of 4096 within d's size.
func NewWindow(d Device, base, n int64, name string) (*Window, error) {
	if base < 0 || n <= 0 || base%blockBytes != 0 || n%blockBytes != 0 || base+n > d.Size() {
		return nil, fmt.Errorf("%w: window [%d, %d) of %s (%d bytes) is not whole 4096-byte blocks within it",
			ErrOutOfRange, base, base+n, d.Path(), d.Size())
	}
	return &Window{d: d, base: base, len: n, name: name}, nil
}

// Base is the window's first byte on the device below.
func (w *Window) Base() int64 { return w.base }

func (w *Window) Path() string          { return w.name }
func (w *Window) Size() int64           { return w.len }
func (w *Window) Fixed() bool           { return true }
func (w *Window) Direct() bool          { return w.d.Direct() }
func (w *Window) ReadAlign() int        { return w.d.ReadAlign() }
func (w *Window) MaxTransfer() int      { return w.d.MaxTransfer() }
func (w *Window) Ring(o *uring.Options) { w.d.Ring(o) }

// CheckIOPoll is the device's, when it has one.
func (w *Window) CheckIOPoll() error {
	if c, ok := w.d.(interface{ CheckIOPoll() error }); ok {
		return c.CheckIOPoll()
	}
	return nil
}

func (w *Window) PrepRead(s *uring.SQE, mem []byte, off int64, fixed bool, idx uint16) {
	w.d.PrepRead(s, mem, w.base+off, fixed, idx)
}

func (w *Window) PrepWrite(s *uring.SQE, mem []byte, off int64, fixed bool, idx uint16) {
	w.d.PrepWrite(s, mem, w.base+off, fixed, idx)
}

func (w *Window) Done(res int32, n int) int32 { return w.d.Done(res, n) }

// Refuse refuses a transfer that is not within the window (-ERANGE), then
// asks the device.
func (w *Window) Refuse(write bool, off int64, n int) (int32, bool) {
	if !w.within(off, int64(n)) {
		return -int32(syscall.ERANGE), true
	}
	return w.d.Refuse(write, w.base+off, n)
}

func (w *Window) within(off, n int64) bool { return off >= 0 && n >= 0 && off+n <= w.len }

func (w *Window) check(off, n int64) error {
	if !w.within(off, n) {
		return fmt.Errorf("%w: %d bytes at %d of %s, a window of %d bytes", ErrOutOfRange, n, off, w.name, w.len)
	}
	return nil
}

func (w *Window) ReadAt(b []byte, off int64) error {
	if err := w.check(off, int64(len(b))); err != nil {
		return err
	}
	return w.d.ReadAt(b, w.base+off)
}

func (w *Window) WriteAt(b []byte, off int64) error {
	if err := w.check(off, int64(len(b))); err != nil {
		return err
	}
	return w.d.WriteAt(b, w.base+off)
}

func (w *Window) Sync() error { return w.d.Sync() }

func (w *Window) Deallocate(off, n int64) error {
	if err := w.check(off, n); err != nil {
		return err
	}
	return w.d.Deallocate(w.base+off, n)
}

// Resize only checks: a window does not grow.
func (w *Window) Resize(n int64) error {
	if n > w.len {
		return fmt.Errorf("%w: %s has %d bytes, %d needed", ErrOutOfRange, w.name, w.len, n)
	}
	return nil
}

// Reserve does nothing: the volume reserved the window's blocks when it
// made the window.
func (w *Window) Reserve(n int64) error { return nil }

func (w *Window) FreeBytes() (uint64, error) { return w.d.FreeBytes() }

// Close leaves the device open: it is the volume's.
func (w *Window) Close() error { return nil }

var _ Device = (*Window)(nil)

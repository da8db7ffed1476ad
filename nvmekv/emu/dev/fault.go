package dev

import (
	"fmt"
	"sync/atomic"
	"syscall"
)

// Op is the kind of request a fault applies to.
type Op int

const (
	OpRead    Op = iota // an asynchronous read (through Refuse)
	OpWrite             // an asynchronous write (through Refuse)
	OpReadAt            // a synchronous ReadAt
	OpWriteAt           // a synchronous WriteAt
	OpSync              // Sync
)

func (o Op) String() string {
	return [...]string{"read", "write", "read", "write", "sync"}[o]
}

// like reports whether o is op or its synchronous twin.
func (o Op) like(op Op) bool { return o == op || o == op+2 && op <= OpWrite }

// FaultFunc decides the fate of one request of n bytes at off (n is 0 for
// a Sync): inject false lets it through; otherwise it completes with res
// instead, a negative errno or, for a transfer, a short byte count
// (0 <= res < n).
type FaultFunc func(op Op, off int64, n int) (res int32, inject bool)

// Fault wraps a Device and makes requests fail as its FaultFunc says: EIO
// on reads, writes or flushes, ENOSPC on writes, short completions. It is
// for tests. Everything it does not inject goes to the wrapped device.
type Fault struct {
	Device
	fn       FaultFunc
	injected atomic.Uint64
}

// NewFault wraps d.
func NewFault(d Device, fn FaultFunc) *Fault { return &Fault{Device: d, fn: fn} }

// Errno is a FaultFunc that fails every request of kind op with en
// (OpRead and OpWrite include their synchronous twins).
func Errno(op Op, en syscall.Errno) FaultFunc {
	return func(o Op, off int64, n int) (int32, bool) { return -int32(en), o.like(op) }
}

// Short is a FaultFunc that completes every transfer of kind op (and its
// synchronous twin) with half its bytes (rounded down to 512).
func Short(op Op) FaultFunc {
	return func(o Op, off int64, n int) (int32, bool) { return int32(n/2) &^ 511, o.like(op) && n > 0 }
}

// Injected counts the requests the wrapper failed.
func (f *Fault) Injected() uint64 { return f.injected.Load() }

func (f *Fault) decide(op Op, off int64, n int) (int32, bool) {
	res, ok := f.fn(op, off, n)
	if ok {
		f.injected.Add(1)
	}
	return res, ok
}

// Refuse injects before asking the wrapped device.
func (f *Fault) Refuse(write bool, off int64, n int) (int32, bool) {
	op := OpRead
	if write {
		op = OpWrite
	}
	if res, ok := f.decide(op, off, n); ok {
		return res, true
	}
	return f.Device.Refuse(write, off, n)
}

func (f *Fault) syncErr(op Op, off int64, n int, res int32) error {
	var err error = syscall.EIO
	if res < 0 {
		err = syscall.Errno(-res)
	}
	return fmt.Errorf("dev: %s of %d bytes at offset %d of %s: %w: %w", op, n, off, f.Path(), ErrInjected, err)
}

func (f *Fault) ReadAt(b []byte, off int64) error {
	if res, ok := f.decide(OpReadAt, off, len(b)); ok {
		return f.syncErr(OpReadAt, off, len(b), res)
	}
	return f.Device.ReadAt(b, off)
}

func (f *Fault) WriteAt(b []byte, off int64) error {
	if res, ok := f.decide(OpWriteAt, off, len(b)); ok {
		if res > 0 && int(res) < len(b) {
			_ = f.Device.WriteAt(b[:res], off) // the first part lands, as a short write's would
		}
		return f.syncErr(OpWriteAt, off, len(b), res)
	}
	return f.Device.WriteAt(b, off)
}

func (f *Fault) Sync() error {
	if res, ok := f.decide(OpSync, 0, 0); ok {
		return f.syncErr(OpSync, 0, 0, res)
	}
	return f.Device.Sync()
}

var _ Device = (*Fault)(nil)

package uring

import (
	"fmt"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// register calls io_uring_register, retrying on EINTR (registering buffers
// may be interrupted while it waits for the ring to quiesce).
func (r *Ring) register(op uint32, arg unsafe.Pointer, nr uint32) error {
	if r.closed {
		return ErrClosed
	}
	for {
		_, err := sysRegister(r.fd, op, arg, nr)
		if err != syscall.EINTR {
			return err
		}
	}
}

// RegisterBuffers registers bufs as fixed buffers 0..len(bufs)-1 for
// ReadFixed/WriteFixed and uring_cmd with UringCmdFixed. The kernel pins
// their pages; the Ring keeps bufs reachable until UnregisterBuffers or Close.
// Each buffer must be non-empty and at most 1 GiB.
func (r *Ring) RegisterBuffers(bufs [][]byte) error {
	if len(bufs) == 0 {
		return fmt.Errorf("uring: register buffers: no buffers given: %w", syscall.EINVAL)
	}
	iovs := make([]unix.Iovec, len(bufs))
	for i, b := range bufs {
		if len(b) == 0 {
			return fmt.Errorf("uring: register buffers: buffer %d is empty: %w", i, syscall.EINVAL)
		}
		iovs[i].Base = &b[0]
		iovs[i].SetLen(len(b))
	}
	err := r.register(registerBuffers, unsafe.Pointer(&iovs[0]), uint32(len(iovs)))
	runtime.KeepAlive(iovs)
	if err != nil {
		return fmt.Errorf("uring: register %d buffers: %w", len(bufs), err)
	}
	r.regBufs = append([][]byte(nil), bufs...)
	return nil
}

// UnregisterBuffers drops the registered buffers.
func (r *Ring) UnregisterBuffers() error {
	if err := r.register(unregisterBuffers, nil, 0); err != nil {
		return fmt.Errorf("uring: unregister buffers: %w", err)
	}
	r.regBufs = nil
	return nil
}

// RegisterFiles registers fds as fixed files 0..len(fds)-1: an SQE with
// FlagFixedFile names one by its index in Fd. An fd of -1 leaves a slot empty.
func (r *Ring) RegisterFiles(fds []int) error {
	if len(fds) == 0 {
		return fmt.Errorf("uring: register files: no files given: %w", syscall.EINVAL)
	}
	arr := make([]int32, len(fds))
	for i, fd := range fds {
		arr[i] = int32(fd)
	}
	err := r.register(registerFiles, unsafe.Pointer(&arr[0]), uint32(len(arr)))
	runtime.KeepAlive(arr)
	if err != nil {
		return fmt.Errorf("uring: register %d files: %w", len(fds), err)
	}
	return nil
}

// UnregisterFiles drops the registered files.
func (r *Ring) UnregisterFiles() error {
	if err := r.register(unregisterFiles, nil, 0); err != nil {
		return fmt.Errorf("uring: unregister files: %w", err)
	}
	return nil
}

// Probe says which opcodes this kernel supports.
type Probe struct {
	// LastOp is the highest opcode the kernel knows.
	LastOp    uint8
	supported [256]bool
}

// Supported reports whether the kernel supports opcode op.
func (p *Probe) Supported(op uint8) bool { return p.supported[op] }

// Probe asks the kernel which opcodes it supports (IORING_REGISTER_PROBE, 5.6).
func (r *Ring) Probe() (*Probe, error) {
	buf := new(probeBuf)
	err := r.register(registerProbe, unsafe.Pointer(buf), uint32(len(buf.ops)))
	runtime.KeepAlive(buf)
	if err == syscall.EINVAL {
		return nil, fmt.Errorf("%w: %w", ErrNoProbe, err)
	}
	if err != nil {
		return nil, fmt.Errorf("uring: probe opcodes: %w", err)
	}
	p := &Probe{LastOp: buf.hdr.LastOp}
	for _, op := range buf.ops[:buf.hdr.OpsLen] {
		if op.Flags&probeOpSupported != 0 {
			p.supported[op.Op] = true
		}
	}
	return p, nil
}

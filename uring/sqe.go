package uring

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Prep helpers. Each fills the opcode and operands of a (zeroed) SQE and
// leaves Flags, UserData and BufIndex alone unless they are operands. They
// store addresses of Go memory as integers: the caller keeps that memory
// valid and unmoved until the completion arrives (mmap'd, or pinned with
// runtime.Pinner — the Front does that for Request.Pin).

// Cmd16 returns the 16-byte cmd area of a 64-byte SQE (bytes 48..63, the
// place of Addr3 and Pad2).
func (s *SQE) Cmd16() *[16]byte { return (*[16]byte)(sqeCmd(s)) }

// Cmd80 returns the 80-byte cmd area of a 128-byte SQE (bytes 48..127). It is
// valid only on an SQE obtained from an SQE128 ring (Ring.SQE128 true);
// elsewhere the last 64 bytes belong to the next SQE or lie outside the ring.
func (s *SQE) Cmd80() *[80]byte { return (*[80]byte)(sqeCmd(s)) }

// SetCmdOp sets cmd_op, the low 32 bits of Off; __pad1 (the high 32 bits)
// becomes 0, which the kernel requires for uring_cmd.
func (s *SQE) SetCmdOp(op uint32) { s.Off = uint64(op) }

// CmdOp returns cmd_op, the low 32 bits of Off.
func (s *SQE) CmdOp() uint32 { return uint32(s.Off) }

// SetPad1 sets __pad1, the high 32 bits of Off. The kernel rejects a
// uring_cmd with a non-zero __pad1 (-EINVAL); this exists to test that.
func (s *SQE) SetPad1(v uint32) { s.Off = uint64(uint32(s.Off)) | uint64(v)<<32 }

// PrepRW fills the fields shared by the read/write style opcodes.
func (s *SQE) PrepRW(op uint8, fd int32, addr uint64, length uint32, off uint64) {
	s.Opcode = op
	s.Fd = fd
	s.Addr = addr
	s.Len = length
	s.Off = off
}

// PrepNop makes a no-op.
func (s *SQE) PrepNop() { s.PrepRW(OpNop, -1, 0, 0, 0) }

// PrepRead reads len(buf) bytes at file offset off into buf.
func (s *SQE) PrepRead(fd int32, buf []byte, off uint64) {
	s.PrepRW(OpRead, fd, bytesAddr(buf), uint32(len(buf)), off)
}

// PrepWrite writes buf at file offset off.
func (s *SQE) PrepWrite(fd int32, buf []byte, off uint64) {
	s.PrepRW(OpWrite, fd, bytesAddr(buf), uint32(len(buf)), off)
}

// PrepReadFixed reads into buf, which lies inside registered buffer bufIndex.
func (s *SQE) PrepReadFixed(fd int32, buf []byte, off uint64, bufIndex uint16) {
	s.PrepRW(OpReadFixed, fd, bytesAddr(buf), uint32(len(buf)), off)
	s.BufIndex = bufIndex
}

// PrepWriteFixed writes buf, which lies inside registered buffer bufIndex.
func (s *SQE) PrepWriteFixed(fd int32, buf []byte, off uint64, bufIndex uint16) {
	s.PrepRW(OpWriteFixed, fd, bytesAddr(buf), uint32(len(buf)), off)
	s.BufIndex = bufIndex
}

// PrepReadv reads into the buffers of iovs (the iovec array itself must stay
// valid until the completion too).
func (s *SQE) PrepReadv(fd int32, iovs []unix.Iovec, off uint64) {
	s.PrepRW(OpReadv, fd, iovecsAddr(iovs), uint32(len(iovs)), off)
}

// PrepWritev writes the buffers of iovs.
func (s *SQE) PrepWritev(fd int32, iovs []unix.Iovec, off uint64) {
	s.PrepRW(OpWritev, fd, iovecsAddr(iovs), uint32(len(iovs)), off)
}

// PrepFsync flushes fd (fdatasync semantics if datasync).
func (s *SQE) PrepFsync(fd int32, datasync bool) {
	s.PrepRW(OpFsync, fd, 0, 0, 0)
	if datasync {
		s.OpFlags = FsyncDatasync
	} else {
		s.OpFlags = 0
	}
}

// PrepUringCmd makes an IORING_OP_URING_CMD with command cmdOp for fd. The
// command payload goes in Cmd16 / Cmd80 (or Addr/Addr3 for the block and
// socket commands); set OpFlags = UringCmdFixed and BufIndex for a command
// whose data lies in a registered buffer.
func (s *SQE) PrepUringCmd(fd int32, cmdOp uint32) {
	s.Opcode = OpUringCmd
	s.Fd = fd
	s.SetCmdOp(cmdOp)
}

// PrepLinkTimeout makes an IORING_OP_LINK_TIMEOUT for the SQE before it (which
// must carry FlagIOLink): if that request has not completed after ts, it is
// cancelled. flags may be TimeoutAbs. ts must stay valid until completion.
func (s *SQE) PrepLinkTimeout(ts *unix.Timespec, flags uint32) {
	s.PrepRW(OpLinkTimeout, -1, ptrAddr(unsafe.Pointer(ts)), 1, 0)
	s.OpFlags = flags
}

// PrepCancel makes an IORING_OP_ASYNC_CANCEL of the request whose user data is
// userData (flags 0 cancels the first match).
func (s *SQE) PrepCancel(userData uint64, flags uint32) {
	s.PrepRW(OpAsyncCancel, -1, userData, 0, 0)
	s.OpFlags = flags
}

// iovecsAddr is the address of the first iovec, 0 if none.
func iovecsAddr(iovs []unix.Iovec) uint64 {
	if len(iovs) == 0 {
		return 0
	}
	return ptrAddr(unsafe.Pointer(unsafe.SliceData(iovs)))
}

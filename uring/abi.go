package uring

import "unsafe"

// ABI structs. Each mirrors its C struct field by field (C unions noted in
// comments); sizes are asserted at compile time in both directions below and
// offsets are checked by TestABIOffsets. Source: include/uapi/linux/io_uring.h
// (struct io_uring_sqe, io_uring_cqe, io_uring_params, io_sqring_offsets,
// io_cqring_offsets).

// SQE mirrors struct io_uring_sqe (64 bytes). On an SQE128 ring the 64 bytes
// after it belong to it too (the rest of the 80-byte cmd area, see Cmd80).
type SQE struct {
	Opcode      uint8  // 0
	Flags       uint8  // 1: IOSQE_* (FlagIOLink ...)
	Ioprio      uint16 // 2
	Fd          int32  // 4
	Off         uint64 // 8: off / addr2 / {cmd_op u32 @8, __pad1 u32 @12}
	Addr        uint64 // 16: addr / splice_off_in / {level u32, optname u32}
	Len         uint32 // 24
	OpFlags     uint32 // 28: rw_flags / fsync_flags / timeout_flags / uring_cmd_flags / cancel_flags ...
	UserData    uint64 // 32
	BufIndex    uint16 // 40: buf_index / buf_group (packed)
	Personality uint16 // 42
	SpliceFdIn  int32  // 44: splice_fd_in / file_index / optlen / {addr_len u16, pad}
	Addr3       uint64 // 48: addr3 / attr_ptr / optval / start of cmd[]
	Pad2        uint64 // 56: __pad2[0] / attr_type_mask
}

// rawCQE mirrors struct io_uring_cqe (16 bytes).
type rawCQE struct {
	UserData uint64 // 0
	Res      int32  // 8: result, or -errno
	Flags    uint32 // 12: IORING_CQE_F_*
}

// rawCQE32 is the 32-byte CQE of a CQE32 ring: io_uring_cqe plus big_cqe[2].
type rawCQE32 struct {
	rawCQE
	Big [2]uint64 // 16: big_cqe[0..1]
}

// sqringOffsets mirrors struct io_sqring_offsets (40 bytes).
type sqringOffsets struct {
	Head        uint32 // 0
	Tail        uint32 // 4
	RingMask    uint32 // 8
	RingEntries uint32 // 12
	Flags       uint32 // 16
	Dropped     uint32 // 20
	Array       uint32 // 24
	Resv1       uint32 // 28
	UserAddr    uint64 // 32
}

// cqringOffsets mirrors struct io_cqring_offsets (40 bytes).
type cqringOffsets struct {
	Head        uint32 // 0
	Tail        uint32 // 4
	RingMask    uint32 // 8
	RingEntries uint32 // 12
	Overflow    uint32 // 16
	Cqes        uint32 // 20
	Flags       uint32 // 24
	Resv1       uint32 // 28
	UserAddr    uint64 // 32
}

// params mirrors struct io_uring_params (120 bytes).
type params struct {
	SQEntries    uint32        // 0
	CQEntries    uint32        // 4
	Flags        uint32        // 8
	SQThreadCPU  uint32        // 12
	SQThreadIdle uint32        // 16: milliseconds
	Features     uint32        // 20
	WQFd         uint32        // 24
	Resv         [3]uint32     // 28
	SQOff        sqringOffsets // 40
	CQOff        cqringOffsets // 80
}

// getEventsArg mirrors struct io_uring_getevents_arg (24 bytes), passed with
// IORING_ENTER_EXT_ARG.
type getEventsArg struct {
	Sigmask   uint64 // 0
	SigmaskSz uint32 // 8
	MinWaitUs uint32 // 12: min_wait_usec (was pad)
	Ts        uint64 // 16: pointer to struct __kernel_timespec
}

// kernelTimespec mirrors struct __kernel_timespec (16 bytes).
type kernelTimespec struct {
	Sec  int64
	Nsec int64
}

// probeOp mirrors struct io_uring_probe_op (8 bytes).
type probeOp struct {
	Op    uint8  // 0
	Resv  uint8  // 1
	Flags uint16 // 2: IO_URING_OP_SUPPORTED
	Resv2 uint32 // 4
}

// probeHdr mirrors struct io_uring_probe without its flexible ops[] (16 bytes).
type probeHdr struct {
	LastOp uint8     // 0
	OpsLen uint8     // 1
	Resv   uint16    // 2
	Resv2  [3]uint32 // 4
}

// probeBuf is the buffer io_uring_register(PROBE) fills: header plus 256 ops.
type probeBuf struct {
	hdr probeHdr
	ops [256]probeOp
}

// Compile-time size asserts in both directions: each line fails to compile
// (constant underflow) if a size is larger or smaller than the C one.
var (
	_ [unsafe.Sizeof(SQE{}) - 64]byte
	_ [64 - unsafe.Sizeof(SQE{})]byte
	_ [unsafe.Sizeof(rawCQE{}) - 16]byte
	_ [16 - unsafe.Sizeof(rawCQE{})]byte
	_ [unsafe.Sizeof(rawCQE32{}) - 32]byte
	_ [32 - unsafe.Sizeof(rawCQE32{})]byte
	_ [unsafe.Sizeof(sqringOffsets{}) - 40]byte
	_ [40 - unsafe.Sizeof(sqringOffsets{})]byte
	_ [unsafe.Sizeof(cqringOffsets{}) - 40]byte
	_ [40 - unsafe.Sizeof(cqringOffsets{})]byte
	_ [unsafe.Sizeof(params{}) - 120]byte
	_ [120 - unsafe.Sizeof(params{})]byte
	_ [unsafe.Sizeof(getEventsArg{}) - 24]byte
	_ [24 - unsafe.Sizeof(getEventsArg{})]byte
	_ [unsafe.Sizeof(kernelTimespec{}) - 16]byte
	_ [16 - unsafe.Sizeof(kernelTimespec{})]byte
	_ [unsafe.Sizeof(probeOp{}) - 8]byte
	_ [8 - unsafe.Sizeof(probeOp{})]byte
	_ [unsafe.Sizeof(probeHdr{}) - 16]byte
	_ [16 - unsafe.Sizeof(probeHdr{})]byte
)

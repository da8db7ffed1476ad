package uring

// Constants of the io_uring uapi. x/sys/unix has none of them, so they are
// defined here. Source: include/uapi/linux/io_uring.h (liburing's copy
// src/include/liburing/io_uring.h); kernel versions from the liburing man
// pages io_uring_setup(2), io_uring_enter(2) and io_uring_register(2).

// Opcodes (enum io_uring_op, include/uapi/linux/io_uring.h).
const (
	OpNop           uint8 = 0
	OpReadv         uint8 = 1
	OpWritev        uint8 = 2
	OpFsync         uint8 = 3
	OpReadFixed     uint8 = 4
	OpWriteFixed    uint8 = 5
	OpPollAdd       uint8 = 6
	OpPollRemove    uint8 = 7
	OpSyncFileRange uint8 = 8
	OpSendmsg       uint8 = 9
	OpRecvmsg       uint8 = 10
	OpTimeout       uint8 = 11
	OpTimeoutRemove uint8 = 12
	OpAccept        uint8 = 13
	OpAsyncCancel   uint8 = 14
	OpLinkTimeout   uint8 = 15
	OpConnect       uint8 = 16
	OpFallocate     uint8 = 17
	OpOpenat        uint8 = 18
	OpClose         uint8 = 19
	OpFilesUpdate   uint8 = 20
	OpStatx         uint8 = 21
	OpRead          uint8 = 22
	OpWrite         uint8 = 23
	OpFadvise       uint8 = 24
	OpMadvise       uint8 = 25
	OpSend          uint8 = 26
	OpRecv          uint8 = 27
	OpUringCmd      uint8 = 46 // IORING_OP_URING_CMD, since 5.19
	OpSendZC        uint8 = 47
	OpReadMultishot uint8 = 49
	OpFtruncate     uint8 = 55
	OpReadvFixed    uint8 = 60
	OpWritevFixed   uint8 = 61
)

// SQE flags (IOSQE_*, sqe->flags; include/uapi/linux/io_uring.h).
const (
	FlagFixedFile      uint8 = 1 << 0 // IOSQE_FIXED_FILE: Fd is an index into the registered files
	FlagIODrain        uint8 = 1 << 1 // IOSQE_IO_DRAIN
	FlagIOLink         uint8 = 1 << 2 // IOSQE_IO_LINK: the next SQE starts only after this one succeeds
	FlagIOHardlink     uint8 = 1 << 3 // IOSQE_IO_HARDLINK: like IO_LINK, but the chain continues on failure
	FlagAsync          uint8 = 1 << 4 // IOSQE_ASYNC: always punt to the io-wq worker pool
	FlagBufferSelect   uint8 = 1 << 5 // IOSQE_BUFFER_SELECT
	FlagCQESkipSuccess uint8 = 1 << 6 // IOSQE_CQE_SKIP_SUCCESS: no CQE when the request succeeds
)

// Setup flags (IORING_SETUP_*, io_uring_params.flags;
// include/uapi/linux/io_uring.h).
const (
	setupIOPoll       uint32 = 1 << 0
	setupSQPoll       uint32 = 1 << 1
	setupSQAff        uint32 = 1 << 2
	setupCQSize       uint32 = 1 << 3
	setupClamp        uint32 = 1 << 4
	setupAttachWQ     uint32 = 1 << 5
	setupRDisabled    uint32 = 1 << 6
	setupSubmitAll    uint32 = 1 << 7
	setupCoopTaskrun  uint32 = 1 << 8
	setupTaskrunFlag  uint32 = 1 << 9
	setupSQE128       uint32 = 1 << 10
	setupCQE32        uint32 = 1 << 11
	setupSingleIssuer uint32 = 1 << 12
	setupDeferTaskrun uint32 = 1 << 13
	setupNoMmap       uint32 = 1 << 14
	setupRegisteredFD uint32 = 1 << 15
	setupNoSQArray    uint32 = 1 << 16
)

// Exported copies of the setup flags, to compare with Ring.SetupFlags().
const (
	SetupSQPoll       = setupSQPoll
	SetupSQAff        = setupSQAff
	SetupCQSize       = setupCQSize
	SetupCoopTaskrun  = setupCoopTaskrun
	SetupTaskrunFlag  = setupTaskrunFlag
	SetupSQE128       = setupSQE128
	SetupCQE32        = setupCQE32
	SetupSingleIssuer = setupSingleIssuer
	SetupDeferTaskrun = setupDeferTaskrun
	SetupNoSQArray    = setupNoSQArray
)

// Features (io_uring_params.features, IORING_FEAT_*).
const (
	FeatSingleMmap     uint32 = 1 << 0
	FeatNoDrop         uint32 = 1 << 1
	FeatSubmitStable   uint32 = 1 << 2
	FeatRWCurPos       uint32 = 1 << 3
	FeatCurPersonality uint32 = 1 << 4
	FeatFastPoll       uint32 = 1 << 5
	FeatPoll32Bits     uint32 = 1 << 6
	FeatSQPollNonfixed uint32 = 1 << 7
	FeatExtArg         uint32 = 1 << 8
	FeatNativeWorkers  uint32 = 1 << 9
	FeatRsrcTags       uint32 = 1 << 10
	FeatCQESkip        uint32 = 1 << 11
	FeatLinkedFile     uint32 = 1 << 12
)

// io_uring_enter flags (IORING_ENTER_*, include/uapi/linux/io_uring.h).
const (
	enterGetEvents      uint32 = 1 << 0
	enterSQWakeup       uint32 = 1 << 1
	enterSQWait         uint32 = 1 << 2
	enterExtArg         uint32 = 1 << 3
	enterRegisteredRing uint32 = 1 << 4
)

// SQ ring flags (IORING_SQ_*, sq_off.flags; include/uapi/linux/io_uring.h).
const (
	sqNeedWakeup uint32 = 1 << 0 // IORING_SQ_NEED_WAKEUP: the SQPOLL thread sleeps
	sqCQOverflow uint32 = 1 << 1 // IORING_SQ_CQ_OVERFLOW: CQEs wait in the kernel's overflow list
	sqTaskrun    uint32 = 1 << 2 // IORING_SQ_TASKRUN: task work is pending, enter to run it
)

// mmap offsets (IORING_OFF_*).
const (
	offSQRing uint64 = 0
	offCQRing uint64 = 0x8000000
	offSQEs   uint64 = 0x10000000
)

// io_uring_register opcodes (enum io_uring_register_op,
// include/uapi/linux/io_uring.h).
const (
	registerBuffers   uint32 = 0
	unregisterBuffers uint32 = 1
	registerFiles     uint32 = 2
	unregisterFiles   uint32 = 3
	registerProbe     uint32 = 8
)

// Per-opcode flags.
const (
	FsyncDatasync    uint32 = 1      // IORING_FSYNC_DATASYNC (sqe->fsync_flags)
	TimeoutAbs       uint32 = 1      // IORING_TIMEOUT_ABS (sqe->timeout_flags)
	UringCmdFixed    uint32 = 1      // IORING_URING_CMD_FIXED (sqe->uring_cmd_flags): Addr is in registered buffer BufIndex
	probeOpSupported uint16 = 1      // IO_URING_OP_SUPPORTED (io_uring_probe_op.flags)
	nopInjectResult  uint32 = 1 << 0 // IORING_NOP_INJECT_RESULT: res = sqe->len
	nopCQE32         uint32 = 1 << 5 // IORING_NOP_CQE32 (6.18): big_cqe = {sqe->off, sqe->addr} (io_uring/nop.c)
	CancelAll        uint32 = 1 << 0 // IORING_ASYNC_CANCEL_ALL: cancel every match, not the first
	CancelAny        uint32 = 1 << 2 // IORING_ASYNC_CANCEL_ANY: match any request (6.0)
)

// uring_cmd command opcodes of drivers that exist on a stock kernel
// (enum io_uring_socket_op in include/uapi/linux/io_uring.h;
// BLOCK_URING_CMD_DISCARD in include/uapi/linux/fs.h).
const (
	SocketOpSIOCINQ  uint32 = 0      // SOCKET_URING_OP_SIOCINQ: res = unread bytes (since 6.7)
	SocketOpSIOCOUTQ uint32 = 1      // SOCKET_URING_OP_SIOCOUTQ: res = unsent bytes
	BlockCmdDiscard  uint32 = 0x1200 // BLOCK_URING_CMD_DISCARD = _IO(0x12, 0): Addr = byte offset, Addr3 = byte length (since 6.12)
)

// Limits from io_uring/io_uring.c.
const (
	maxEntries   = 32768 // IORING_MAX_ENTRIES
	maxCQEntries = 2 * maxEntries
)

// Package dev is the storage under an emulated KV namespace (nvmekv/emu):
// a Device prepares the namespace's asynchronous reads and writes as SQEs
// on the namespace's own io_uring rings, turns their completions into
// byte counts, may refuse a request before it is submitted, and offers
// synchronous read, write, sync and deallocate for the superblock, flushes
// and reclaimed regions. The namespace's log, index and command
// interpreter know nothing of which device it is.
//
// Four devices:
//
//   - File: a regular file or a block device, io_uring read/write with
//     O_DIRECT where the filesystem allows it, fdatasync.
//   - NVMe: an NVM namespace (CSI 0) through its generic char device
//     /dev/ngXnY: NVM Read (02h) and Write (01h) as IORING_OP_URING_CMD
//     with NVME_URING_CMD_IO on 128-byte SQEs and 32-byte CQEs, registered
//     buffers through IORING_URING_CMD_FIXED; Flush (00h) and Dataset
//     Management (09h, deallocate) through the NVME_IOCTL_IO_CMD ioctl.
//     Identify gives the command set (the descriptor list, CNS 03h),
//     the LBA format in use, its metadata, protection and the size
//     (Namespace, CNS 00h), MDTS, Dataset Management support and
//     extended LBA format support (Controller, CNS 01h), the format's
//     storage tag and guard (the NVM command set's namespace data, CNS
//     05h with CSI 00h) and the Dataset Management limits (its
//     controller data, CNS 06h with CSI 00h).
//   - Window: a byte range of another Device, a namespace of a volume
//     (nvmekv/emu/volume).
//   - Fault: wraps another Device and injects errors (EIO on reads,
//     writes or flushes, ENOSPC, short completions), for tests.
//
// # Invariants
//
//   - D1: File hands every transfer to the kernel as asked and reports
//     cqe.res unchanged; its Deallocate does nothing, so a reserved file
//     stays reserved (TestFileRoundTrip).
//   - D2: NVMe refuses, before anything is submitted, a request that is
//     not whole logical blocks, reaches past the namespace's end, or is
//     larger than its largest transfer, with ErrUnaligned, ErrOutOfRange
//     or ErrTooLarge naming the device (asynchronous requests complete
//     with -EINVAL or -ERANGE instead) (TestNVMeCheck; in the QEMU guest
//     TestNVMeRefusedBeforeSubmission counts that nothing reached the
//     device).
//   - D3: OpenNVMe refuses a path that is not a character device, a
//     namespace whose CSI is not 0 (NVM), whose LBA format carries
//     metadata (separate or extended), protection information or a
//     storage tag (CNS 05h ELBAF, read when the controller reports
//     extended LBA formats), whose format index is past the formats it
//     reports, whose blocks are not 512..4096 bytes, or that is write
//     protected, with an error naming the device and the reason
//     (TestCheckGeometry, TestOpenNVMeRefusesFiles; in the QEMU guest
//     TestNVMeOpenIdentify reads every structure from the real driver, and
//     TestNVMeRefusesMetadataNamespace is refused a namespace QEMU formats
//     with 8 metadata bytes of protection information per block).
//   - D4: an NVMe completion with an NVMe status becomes -EIO for the
//     namespace, and the status is counted and kept (LastStatus), never
//     taken for a byte count (TestNVMeDone).
//   - D5: the largest transfer is at most 2^MDTS × 4 KiB, the block
//     layer's max_hw_sectors_kb and max_segments pages, and 1 MiB, and at
//     least 4 KiB (TestMaxTransfer).
//   - D6: Fault fails exactly the requests its FaultFunc picks, and every
//     other request reaches the wrapped device unchanged (TestFault).
//   - D7: Deallocate covers exactly the blocks asked for, in order, in
//     Dataset Management commands of at most DMRL ranges (and 256), DMRSL
//     blocks a range and DMSL blocks a command, the limits of CNS 06h
//     (TestDSMCommands; in the guest TestNVMeFlushAndDeallocate).
//   - D8: a Window refuses, before submission, every transfer that is not
//     within its range (-ERANGE), and its synchronous calls fail with
//     ErrOutOfRange there; everything else reaches the device moved by
//     its base (nvmekv/emu/volume TestWindowStaysInside).
//
// # Caveats
//
//   - MDTS is in units of the controller's minimum page size (CAP.MPSMIN),
//     a register userspace cannot read; 4 KiB is assumed, as on every
//     controller seen (QEMU's included).
//   - The synchronous NVMe commands (superblock, Flush, Dataset
//     Management) go through an ioctl, not the ring: they are rare.
//   - A namespace opened through multipath (/dev/ngXnY of a nvmeXcYnZ
//     path) has no /sys/block/nvmeXnY: the block layer limits are then
//     taken as NVME_MAX_SEGS pages.
package dev

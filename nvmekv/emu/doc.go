// Package emu is the emulated NVMe KV namespace: an in-process controller
// that executes the same 64-byte KV commands as a KV SSD, with the same
// status codes, on a device of package dev: a regular file or a block
// device through io_uring read/write (O_DIRECT, 4096-byte aligned,
// registered buffers), or an ordinary NVMe namespace through NVM
// passthrough (Options.NVMe: NVM Read/Write as uring_cmd on /dev/ngXnY,
// Flush, Dataset Management for reclaimed regions). It is tiercache's
// default cold store.
//
// Parts: the command interpreter (exec.go: Do, Retrieve batches, the
// 64-byte encoding), the log (log.go, layout.go: regions, records,
// extents, reclaim, Strict evacuation), the read path (exec.go readWave,
// wave.go, slots.go, batchring.go: read slots, the three rings), the index
// (index.go), recovery (recover.go) and the device seam (device.go, package
// dev). Only the device seam knows which device it is.
//
// Design: the data area is a ring of fixed-size regions written
// sequentially (log-structured). Records (header + key + value, CRC32C) are
// appended to the open region's buffer in DRAM, growing forward from the
// region's start; a value whose 4096-aligned read alone is not larger than
// its inline record's 512-aligned read (4 KiB, 8000 B, 8 KiB...) goes in an
// extent instead: whole 4096-byte blocks taken from the region's end
// downward, with a 48-byte header record forward, so a 4 KiB value is read
// with one aligned 4096-byte read. A full region (forward end meets the
// extents) is written with one write; Flush writes the open region's
// unwritten forward blocks and new extents and fdatasyncs. The DRAM index
// is a Robin Hood table over non-pointer arrays: 16 bytes of device key + 8
// bytes packing region, key length, and offset and size (or extent block
// and value length), at up to 90% load (≈ 26.7 B per item at full load,
// 24/load in general). On Open the index comes from the checkpoint that Close wrote, or
// by scanning every region in sequence order, and appending resumes in the
// last region. When the ring is full, Cache mode reclaims the oldest region
// (FIFO, no copying) and reports each dropped key through OnReclaim. Strict
// mode never drops a live record: on entering a fresh region it copies the
// live records of the oldest region into it (so the oldest is always free
// when the log wraps), makes those copies durable before the oldest region
// is overwritten, and answers Capacity Exceeded (SC 0x81) when live data
// would exceed nRegions-2 regions.
//
// Durability: a Store or Delete is durable once a Flush (Namespace.Flush,
// KV.Sync) that started after it returned nil, or when Options.SyncWrites
// is set, once its Do returned nil. Concurrent Flushes are group-committed
// (one fdatasync covers every append before it). Close makes everything
// durable.
//
// # Invariants
//
//   - E1: every command goes through its 64-byte encoding: Do (and
//     Retrieve, Store and Delete, each a Do of one Op) encodes each Op with
//     nvmekv, executes the bytes, and decodes the completion with
//     nvmekv.DecodeResult (TestControllerStatus).
//
//   - E2: an inline record is served only if its magic, region sequence
//     number, key and CRC32C match; otherwise the read is retried (the
//     region was reclaimed meanwhile) or fails with Unrecovered Error (SC
//     0x88) (FuzzWalkRegion, TestConcurrent). An extent value is served
//     from a read of the extent alone: no header and no CRC are checked on
//     that path; it is served only if its region was not reclaimed between
//     the index lookup and the read's completion (a reclaim bumps a counter
//     before anything new is written into the region; a read that sees it
//     moved checks its region's sequence number), otherwise the Retrieve
//     runs again from the lookup (after 3 tries: SC 0x88)
//     (TestExtentReadRacesReclaim, TestConcurrentExtents). An extent's
//     CRC32C (header ‖ value) is checked wherever records are walked: the
//     scan at Open, Cache-mode reclaim and Strict-mode evacuation
//     (TestTornExtent, TestStrictEvacuatesExtents). nvmekv.KV checks its
//     own CRC32C over its header and value end to end, so a KV Get still
//     detects corruption.
//
//   - E3: a 4096-byte block that was part of a completed Flush is never
//     written again until its region is reclaimed (Flush pads the forward
//     end to a block end; extents are whole blocks below every earlier
//     extent; after a crash appending resumes after the last valid record
//     and below the lowest extent of any valid record) (TestTornExtent,
//     TestExtentRoundTrip).
//
//   - E4: after a crash, Open replays regions in sequence order and stops
//     each region at its first invalid record, so every value read back is a
//     value that was stored for that key, and everything flushed is present
//     (TestCrashRecovery: 50 SIGKILLed writers).
//
//   - E5: Open trusts the checkpoint only if the superblock says clean with
//     the same store id and generation; Open marks it dirty before writing
//     (TestStoreRetrieveReopen, TestCrashRecovery alternates clean and unclean).
//
//   - E6: in Cache mode every key dropped by reclaim is passed to OnReclaim
//     exactly once (TestCacheReclaim); in Strict mode a region with live
//     records is never reused, and a region whose records were copied out is
//     reused only after the copies are durable (TestStrictCompaction,
//     TestCrashRecovery/strict).
//
//   - E7: after a failed region write (EIO, ENOSPC) Store and Delete fail
//     with ErrReadOnly wrapping the errno, and reads of data written before
//     keep working, also after reopening (TestInjectedEIO, TestENOSPC).
//
//   - E8: the index holds no Go pointers and uses 24 bytes per slot at up to
//     90% load, extent or not (TestIndexModel, TestLocPacking; BenchmarkOpen
//     reports bytes per item). A table of 2 MiB or more is an anonymous
//     mapping off the Go heap, advised to transparent huge pages (a lookup
//     is one random access; with 4 KiB pages it also misses the TLB); a
//     table is unmapped once no index holds it (TestIndexOffHeapTable).
//
//   - E9: a Do with any number of ops completes, and so do any number of
//     concurrent Dos: disk reads go in waves of at most min(ReadSlots, the
//     ring's largest group), each wave takes its read slots all at once
//     (first come, first served) and returns them before the next, so no
//     caller holds slots while waiting for more; Limits().MaxBatch is 0
//     (unlimited) (TestGetManyLarge, TestDoManyRetrieves,
//     TestConcurrentBatches, TestSlotsAllOrNothing).
//
//   - E10: a Retrieve of a value in an extent is one disk read of the value
//     rounded up to the read alignment (4096 bytes for a 4 KiB value), or of
//     its prefix that the buffer takes; live-byte accounting counts an
//     extent record as 48 bytes plus its blocks (TestRetrieve4KOneRead,
//     TestCacheReclaimExtents).
//
//   - E11: a store written by an older on-disk format (superblock version
//     1) is refused with ErrFormat naming the file and what to do, and is
//     not modified (TestOldFormatRefused).
//
//   - E12: a Retrieve that succeeds (Namespace.Retrieve, or a Do of
//     Retrieves) allocates nothing once warm, whether it reads the file or a
//     write buffer; a batch of only Retrieves and Exists looks its keys up
//     under the namespace lock read-locked (concurrently with other
//     lookups), every other batch holds it exclusively (TestRetrieveAllocs;
//     TestConcurrent and TestExtentReadRacesReclaim under -race).
//
//   - E13: an extent read that fills the Retrieve's buffer exactly (the
//     value, or the part the buffer takes, is a whole number of 4096-byte
//     blocks) into a buffer aligned for O_DIRECT goes straight into that
//     buffer (no read slot, no copy); otherwise through a read slot. Either
//     way no byte of the buffer past the value is written
//     (TestDirectExtentRead; Stats.DirectReads counts them).
//
//   - E14: a store in a regular file has its blocks reserved (fallocate)
//     unless Options.Sparse: formatting a store larger than the
//     filesystem's free space fails Open with ENOSPC naming the path and
//     the free bytes, and nothing written later can meet ENOSPC on a
//     filesystem that overwrites in place (ext4, xfs, tmpfs; not btrfs).
//     An existing store that cannot be reserved opens with a warning
//     (TestReserve).
//
//   - E15: reads go to the main ring (SINGLE_ISSUER|DEFER_TASKRUN, its
//     owner locked to a thread) except a wave of at most 4 reads while no
//     read is in flight there, which takes a second, plain ring whose owner
//     runs on the submitter's thread (no thread hand-off: a lone Retrieve
//     costs about half as long). Both rings hold the same registered
//     buffers; writes, flushes and recovery use the main ring only
//     (TestQuickRing; Stats.QuickReads counts the quick ring's reads).
//
//   - E16: a wave of at least batchMin (32) reads, while no read is in
//     flight on the main ring, runs on a batch ring (one per namespace, the
//     same registered buffers) from its caller's own thread: each read is
//     submitted by an io_uring_enter of its own and the caller waits on the
//     ring itself (uring.Ring.RunEach), so neither the reads nor their
//     completions pass through the main ring's owner. A wave that finds the
//     batch ring busy, or the main ring reading, takes the main ring. The
//     read checks of E2 are the same on every ring, and so is the stall
//     report of Options.StallAfter (a warning, counted in
//     FrontStats().Stalled) (TestBatchRing, TestBatchReadRacesReclaim,
//     TestBatchRingRaces, TestLoopDevice,
//     uring TestRunEachStall; Stats.BatchReads counts them). One
//     goroutine doing Dos of 64 4 KiB Retrieves (a GetMany of 64 cold keys)
//     reached 0.90-0.94x fio at QD 64 against 0.62-0.67x on the main ring;
//     4 goroutines doing Dos of 16 at once ran at 0.61x fio on batch rings
//     of their own and 0.80x on the main ring, hence the rule.
//
//   - E20: Close succeeds when only the checkpoint could not be written
//     (a full filesystem): every write is durable by then, the superblock
//     stays dirty, a warning is logged, and the next Open scans the log
//     and finds every key (TestCloseOnFullFilesystem, on a full tmpfs).
//
//   - E17: every transfer goes through the device (dev.Device): prepared
//     by it, its completion turned into a byte count by it, and refused by
//     it before submission when it says so (the refusal is the I/O's
//     result); no transfer is larger than the device's largest transfer
//     (region writes and reads are split, a larger value read is read in
//     pieces synchronously), and every ring is set up with what the device
//     needs (SQE128|CQE32 for passthrough) (TestDeviceSplitsTransfers,
//     TestDeviceRingOptions; in the QEMU guest on /dev/ng1n1,
//     TestNVMeNamespace). A device error is a clear error naming the path:
//     a failed read fails that Retrieve (a short one with SC 0x88), a
//     failed write or sync makes the namespace read-only as E7 says
//     (TestDeviceFaults).
//
//   - E18: a reclaimed region is deallocated on the device (NVM Dataset
//     Management; nothing on a file, whose blocks stay reserved) before
//     anything new is written into it (guest TestNVMeNamespace: a
//     deallocated block reads back as zeros).
//
//   - E19: with Options.IOPoll every wave of disk reads runs on a polled
//     ring (IORING_SETUP_IOPOLL, one of two, from its caller's thread as
//     E16 says) while one is free, else on the main ring; writes stay on
//     the main ring (guest TestNVMeNamespace/iopoll; Stats.BatchReads
//     counts them).
//
//   - E21: a failed write puts back every index change (Store, Delete,
//     evacuation) made since the last completed Flush (undo.go): a Store
//     or Delete whose Flush failed is not seen by later reads, which return
//     what a restart would (TestFailedFlushUndoesIndex). The journal holds
//     at most 65,536 changes; a writer that never flushes overflows it, and
//     a failed write then leaves the index as it is (Stats.UndoDropped)
//     until a completed Flush has made durable every change made while it
//     was off (TestUndoStaysOffUntilGapDurable). A key whose journaled
//     record lies in a region the log writes again goes back to absent, as
//     a restart would find it (TestUndoForgetsReclaimedRegion).
//
//   - E22: a store formatted over an earlier one (a device whose superblock
//     was cleared, or a file rewritten in place) never serves the earlier
//     store's records: a region header names its store, and a fresh store's
//     seqs start at a base drawn from its id, so neither an old region nor
//     an old record past the written end of a new region is replayed by a
//     scan (TestReformatIgnoresEarlierStore).
//
//   - E23: a Do lets go of the namespace lock for a moment after each MiB
//     it stored, so one batch of big Stores (a big value's chunks) does
//     not hold up other callers' lookups and Stores for its whole length;
//     Link chains are kept (TestBigBatchLetsOthersIn).
//
// # Caveats
//
//   - A Retrieve that fails may leave any bytes in the part of its buffer
//     the value would have filled (a direct extent read that raced a
//     reclaim three times, or an I/O error mid-read).
//   - Strict mode copies live data forward (write amplification grows with
//     the live fraction). If a crash leaves the oldest region live and the
//     resumed region without room to absorb it, Strict mode stays full until
//     deletes free that region.
//   - Each namespace locks one OS thread for its main ring's owner
//     goroutine (SINGLE_ISSUER|DEFER_TASKRUN; see Options.ringOptions for
//     why and what it costs) and has a second, plain ring for lone reads
//     (E15); on a kernel without those flags it uses one plain ring. A
//     third, plain ring serves large batches of reads (E16): while a batch
//     runs there, its caller's thread waits in io_uring_enter.
//   - An off-heap index table (E8) is unmapped by a runtime cleanup after
//     the GC finds it unreachable, not at Close: its DRAM returns at the
//     next GC after the namespace is dropped. It is not counted in the Go
//     heap, so GOGC does not see it.
//   - Keys equal after zero padding but of different lengths ("a" and "a\x00")
//     share an index slot; a lookup with the other length misses.
//   - A Flush pads to a block boundary: frequent flushes of small records
//     cost up to 4 KiB each.
//   - The checkpoint is a side file (Path+".ckpt"); block devices and NVMe
//     namespaces have none by default and are scanned on every Open.
//   - Options.SQPoll gives the main ring an SQPOLL thread, which excludes
//     SINGLE_ISSUER|DEFER_TASKRUN and so the quick ring (E15).
//   - A Retrieve chained (Link) before other ops does not stop them if its
//     disk read fails: disk reads run after the rest of the batch.
//   - A Do's context is checked before each wave of disk reads; reads already
//     submitted are waited for, not cancelled (file reads complete promptly),
//     and the rest of the batch fails with the context's error.
//   - A value that does not qualify for an extent (e.g. 4150 bytes, or any
//     value under 3545 bytes) is read with its record rounded out to the
//     O_DIRECT alignment, header and CRC checked. Extent values are not
//     CRC-checked on the read path (E2); a raw Namespace user that needs
//     end-to-end checks must carry its own checksum (nvmekv.KV does).
//   - An extent wastes the rest of its last block (a 3545-byte value takes
//     4096 bytes plus a 48-byte header).
//   - The extent rule sees the device value: nvmekv.KV stores a 56-byte
//     header and the key before the user's value, so a 4 KiB user value
//     (≈ 4170 device bytes) stays inline (a 4608-byte read); user values of
//     about 3490..4040 bytes (device 3545..4096) get an extent.
package emu

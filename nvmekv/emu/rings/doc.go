// Package rings carries an emulated KV namespace's transfers (package
// nvmekv/emu) to its device (package nvmekv/emu/dev): the io_uring rings
// that submit them and the registered buffers they move. It knows
// nothing of records or keys; the log (nvmekv/emu/logstore) writes and
// reads regions through it, the read path (nvmekv/emu/readpath) runs its
// waves of reads on its Lanes.
//
// Rings: the main ring (IORING_SETUP_SINGLE_ISSUER|DEFER_TASKRUN, its
// owner goroutine locked to a thread) takes every write, every
// synchronous read, and waves of reads that no other ring takes; a quick
// ring (plain) takes lone reads (E15); a batch ring takes large waves of
// reads from their caller's own thread (E16); with Options.IOPoll two
// polled rings take every wave of reads (E19). The buffers of
// Options.Buffers are mapped off the Go heap and registered on every
// ring at the same indices.
//
// The invariant numbers are the namespace's (E, nvmekv/emu/doc.go lists
// every part's).
//
// # Invariants
//
//   - E15: reads go to the main ring except a wave of at most 4 reads
//     while no read is in flight there, which takes the quick ring, whose
//     owner runs on the submitter's thread (no thread hand-off: a lone
//     Retrieve costs about half as long). Every ring holds the same
//     registered buffers (TestLanes; through the namespace TestQuickRing,
//     whose Stats.QuickReads counts the quick ring's reads).
//   - E16: a wave of at least BatchMin (32) reads, while no read is in
//     flight on the main ring, runs on a batch ring from its caller's own
//     thread: each read is submitted by an io_uring_enter of its own and
//     the caller waits on the ring itself (uring.Ring.RunEach), so neither
//     the reads nor their completions pass through the main ring's owner.
//     A wave that finds the batch ring busy, or the main ring reading,
//     takes the main ring. A stalled read there is reported as on the
//     Fronts (a warning, counted in Stats().Stalled) (TestLanes; through
//     the namespace TestBatchRing, TestBatchRingRaces, TestLoopDevice;
//     uring TestRunEachStall). One goroutine doing Dos of 64 4 KiB
//     Retrieves (a GetMany of 64 cold keys) reached 0.90-0.94x fio at QD
//     64 against 0.62-0.67x on the main ring; 4 goroutines doing Dos of 16
//     at once ran at 0.61x fio on batch rings of their own and 0.80x on the
//     main ring, hence the rule.
//   - E17: every transfer goes through the device (dev.Device): prepared
//     by it, its completion turned into a byte count by it, and refused by
//     it before submission when it says so (the refusal is the transfer's
//     result); Chunks splits what is larger than the device's largest
//     transfer, and every ring is set up with what the device needs
//     (SQE128|CQE32 for passthrough) (TestChunks, refused pieces included;
//     through the namespace TestDeviceSplitsTransfers,
//     TestDeviceRingOptions; in the QEMU guest on /dev/ng1n1,
//     TestNVMeNamespace).
//   - E19: with Options.IOPoll every wave of reads runs on a polled ring
//     (IORING_SETUP_IOPOLL, one of two, from its caller's thread as E16
//     says) while one is free, else on the main ring; writes stay on the
//     main ring (TestLanes; in the guest TestNVMeNamespace/iopoll and
//     TestNVMeIOPollOnPollQueues, which sees no interrupt on the NVMe
//     driver's poll queue).
//   - E23: the registered buffers are used for transfers (Fixed) only
//     when the kernel takes a transfer that covers part of one: Open
//     reads a block into part of the last buffer through its registration
//     and falls back to plain addresses into the same buffers if that
//     fails, as Linux 6.1 does for NVMe passthrough into a huge-page
//     buffer (TestFixedProbe; in the guest TestNVMeNamespace checks Fixed
//     on Linux >= 6.2, nvmept TestFixedBufferPartialTransfer the kernel's
//     side).
//
// # Caveats
//
//   - The main ring's owner locks one OS thread (SINGLE_ISSUER|
//     DEFER_TASKRUN); on a kernel without those flags Open makes one plain
//     ring. Options.SQPoll gives it an SQPOLL thread instead, which
//     excludes those flags and so the quick ring.
//   - While a wave runs on a batch or polled ring its caller's thread
//     waits in io_uring_enter.
//   - The buffers are mapped whole and registered, so they are resident
//     for as long as the rings are open.
package rings

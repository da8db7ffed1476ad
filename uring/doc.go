// Package uring is io_uring from raw system calls: ring setup
// (io_uring_setup with SQE128/CQE32, SQPOLL, COOP_TASKRUN,
// SINGLE_ISSUER/DEFER_TASKRUN, NO_SQARRAY), the mmap'd SQ and CQ rings, SQE
// prep helpers (read/write, fixed buffers, readv/writev, fsync, uring_cmd
// with its 16- or 80-byte command area, link timeouts, cancel), links,
// registered buffers and files, and opcode probing.
//
// Ring is the raw ring, used by exactly one goroutine; its RunEach runs a
// batch of independent requests from the calling goroutine, fio's way.
// Front is what the rest
// of tiercache uses: one owner goroutine per ring (locked to its OS thread
// for SINGLE_ISSUER rings) does every ring operation, and any number of
// goroutines queue Requests with Submit (completion by Request.Done) or Do
// (waits and returns the Results). The owner takes the queued requests in
// one swap of a mutex-protected slice, prepares them in batches, submits and
// reaps with one io_uring_enter per round. With requests in flight it
// sleeps in the kernel and a submitter wakes it through an eventfd that the
// ring itself reads; when idle it sleeps on a channel.
//
// The ABI (offsets, flags, opcodes) is that of include/uapi/linux/io_uring.h
// (TestABIOffsets checks the layouts); constants cite it in consts.go.
//
// # Memory rule
//
// Any memory whose address goes into an SQE (I/O buffers, iovec arrays,
// timespecs, uring_cmd payloads) must stay valid and unmoved until that SQE's
// completion has been reaped. Either take it from mmap'd (off-heap) memory,
// or, through the Front, list Go memory in Request.Pin / Request.PinObjects:
// the Front pins it with runtime.Pinner before the SQE is prepared and unpins
// it after the completion. Go memory put into an SQE of a raw Ring must be
// pinned by the caller (runtime.Pinner) — a small non-escaping []byte can
// live on a goroutine stack, which moves when it grows. Registered buffers
// (RegisterBuffers) are pinned by the kernel and kept reachable by the Ring.
//
// # Invariants
//
//   - U1: every ABI struct (SQE 64 B, CQE 16 B, CQE32 32 B, io_uring_params
//     120 B, ring offsets 40 B, getevents arg 24 B, probe 16+8 B) has the
//     size and field offsets of its C struct (compile-time size asserts in
//     abi.go, offsets in TestABIOffsets).
//
//   - U2: NextSQE returns a fully zeroed SQE (64 or 128 bytes) or nil when
//     the SQ is full; it never hands out a slot the kernel has not consumed.
//
//   - U3: SetCmdOp writes only cmd_op (bytes 8..11); __pad1 (12..15) stays 0.
//
//   - U4: on a CQE32 ring Big returns big_cqe[0..1] of the same CQE; on
//     other rings it returns zeros.
//
//   - U5: a completion held back by the kernel (CQ overflow list, deferred
//     task work) is delivered by PeekCQE/ForEachCQE/WaitCQE without the
//     caller doing anything (they enter with GETEVENTS when
//     IORING_SQ_CQ_OVERFLOW or IORING_SQ_TASKRUN is set).
//
//   - U6: WaitCQE with a timeout returns a CQE or, once the timeout has
//     passed, an error wrapping ErrTimeout and ETIME; EINTR is retried.
//
//   - U7: every Request submitted to a Front has its Done called exactly
//     once (also when Do's context ends and it is cancelled), on the owner
//     goroutine, after the kernel is done with its memory.
//
//   - U8: the requests of one Submit land adjacently in the SQ in order and
//     are submitted in the same io_uring_enter, so a link chain inside a
//     group is intact; the last request's IO_LINK/IO_HARDLINK is cleared so a
//     chain never reaches into another group.
//
//   - U9: on a SINGLE_ISSUER ring the Front enters the kernel only from the
//     thread that created the ring, so the kernel never answers EEXIST.
//
//   - U10: the Front never has more requests in flight than the CQ has
//     entries (minus one for its eventfd read), so the CQ does not overflow.
//
//   - U11: Close of a Ring or Front is idempotent; Front.Close returns only
//     after every accepted request has completed (those still in flight
//     after FrontOptions.CloseGrace are cancelled first) and the ring, its
//     eventfd and the owner goroutine are gone.
//
//   - U12: when io_uring cannot be used (ENOSYS, EPERM from the sysctl
//     kernel.io_uring_disabled or seccomp) New returns an error wrapping
//     ErrUnavailable that says why in one sentence.
//
//   - U13: the Front sleeps in the kernel only when a completion or a
//     submitter will wake it: never while its next queued group fits, nor
//     while that group waits for SQ space (it submits, or on SQPOLL waits
//     with IORING_ENTER_SQ_WAIT and wakes the SQ thread: that thread posts
//     completions before it advances the SQ head). When idle it sleeps on a
//     channel. (TestFrontStress, TestFrontNOPsExactlyOnce on every ring kind.)
//
//   - U14: a request in flight longer than FrontOptions.StallAfter (default
//     30 s) is reported exactly once: a warning naming its opcode and fd,
//     and FrontStats.Stalled; it is not cancelled, and its completion, if
//     it comes, is logged too. FrontStats.OldestInFlight is the age of the
//     oldest request in flight, refreshed at least every
//     min(StallAfter/4, 1 s) while any is (TestFrontStall).
//
//   - U15: with GOMAXPROCS=1 (Go's choice under a one-core CPU limit) the
//     owner does not go to sleep in io_uring_enter, where it holds the only
//     P, before the goroutines its completions woke have run: after
//     delivering completions it yields (runtime.Gosched), as an owner not
//     locked to a thread always does. Their next requests then share one
//     enter instead of costing one enter and one eventfd wake-up each
//     (TestFrontOneP; 25-31k against 92-111k 4 KiB Retrieves/s at QD 64 on
//     the emulated namespace here, fio ~180k).
//
//   - U16: Ring.RunEach calls every Request's Done exactly once, on the
//     calling goroutine, and returns only after the kernel is done with
//     every request it submitted; each SQE is handed to the kernel by an
//     io_uring_enter of its own before the next is prepared, and at most
//     min(SQ entries, CQ entries) are in flight; with a RunWatch, a wait
//     of StallAfter without a completion is reported once, and nothing is
//     cancelled (TestRunEach, TestRunEachErrors, TestRunEachStall). One enter per SQE is fio's default
//     (iodepth_batch=1): the device starts on the first read while the
//     next are prepared. On this project's VM a raw ring at QD 64 reading
//     4 KiB reached 1.01x fio that way against 0.85x with one enter per
//     batch (5 interleaved rounds).
//
// # Caveats
//
//   - Ring is not safe for concurrent use; on a SingleIssuer ring every call
//     that enters the kernel must come from the creating OS thread.
//   - The *CQE returned by PeekCQE/WaitCQE/ForEachCQE points at a copy owned
//     by the Ring, overwritten by the next Peek/Wait/ForEach: copy the value
//     (*c) to keep it.
//   - Cmd80 is valid only on an SQE of an SQE128 ring.
//   - Front: Done runs on the owner goroutine and must not block, call Do,
//     Close or the Register/Probe methods (it may call Submit, which then
//     never waits). Multishot requests (IORING_CQE_F_MORE) are not supported.
//     Prep must not set UserData; FlagCQESkipSuccess is cleared.
//   - Submit waits (for queue room, not for the kernel) when MaxQueued
//     requests are already waiting for the owner.
//   - Close cancels requests still in flight after CloseGrace (default 5 s)
//     with IORING_OP_ASYNC_CANCEL (ANY|ALL); a request the kernel cannot
//     cancel (e.g. a regular-file read already running in io-wq) is still
//     waited for.
//   - WaitCQE with a timeout needs IORING_FEAT_EXT_ARG (Linux 5.11).
//   - Linux 6.18.44 (this project's machines) can strand work punted to
//     io-wq: with a ring just closed on the same thread, a new request was
//     queued to io-wq while its last worker exited, and no worker ever ran
//     it (ftrace: io_uring_queue_async_work, then the iou-wrk thread's
//     sched_process_exit 25 µs later; seen once in ~1,200 iterations of a
//     loop-device discard whose buffered pages forced the io-wq path). Such
//     a request never completes; U14 makes it visible instead of silent.
package uring

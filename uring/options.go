package uring

import (
	"errors"
	"fmt"
	"time"
)

// Options configure a Ring. The zero value is a 256-entry ring with 64-byte
// SQEs, 16-byte CQEs and no SQPOLL thread.
type Options struct {
	// Entries is the number of SQ entries; the kernel rounds it up to a power
	// of two. Default 256, at most 32768.
	Entries uint32
	// CQEntries is the number of CQ entries (IORING_SETUP_CQSIZE); 0 = the
	// kernel default of 2×Entries. At least Entries, at most 65536.
	CQEntries uint32
	// SQE128 makes 128-byte SQEs (IORING_SETUP_SQE128), needed for NVMe passthrough.
	SQE128 bool
	// CQE32 makes 32-byte CQEs (IORING_SETUP_CQE32), needed for NVMe passthrough.
	CQE32 bool
	// SQPoll starts a kernel thread that polls the SQ (IORING_SETUP_SQPOLL).
	SQPoll bool
	// IOPoll makes completions be polled for, not delivered by interrupts
	// (IORING_SETUP_IOPOLL): only O_DIRECT reads/writes and uring_cmd
	// passthrough are allowed on it, and waiting for completions (enter
	// with GETEVENTS) polls the device. Not for a Front, whose owner
	// waits on an eventfd read the ring carries.
	IOPoll bool
	// SQThreadCPU pins the SQPOLL thread to this CPU (IORING_SETUP_SQ_AFF);
	// -1 = no pinning. Only with SQPoll. Note 0 means CPU 0.
	SQThreadCPU int
	// SQThreadIdle is how long the SQPOLL thread spins before sleeping
	// (millisecond resolution); 0 = the kernel default (1 s). Only with SQPoll.
	SQThreadIdle time.Duration
	// CoopTaskrun: no IPI to interrupt the task for completions
	// (IORING_SETUP_COOP_TASKRUN, with IORING_SETUP_TASKRUN_FLAG).
	CoopTaskrun bool
	// SingleIssuer: only the creating thread submits (IORING_SETUP_SINGLE_ISSUER);
	// every enter from another OS thread fails with EEXIST.
	SingleIssuer bool
	// DeferTaskrun: completions are processed only when the issuer enters with
	// GETEVENTS (IORING_SETUP_DEFER_TASKRUN). Requires SingleIssuer, excludes SQPoll.
	DeferTaskrun bool
	// NoSQArray drops the SQ index array (IORING_SETUP_NO_SQARRAY, 6.6+); on a
	// kernel without it the ring is set up with the array instead.
	NoSQArray bool
	// SubmitAll keeps submitting the rest of a batch when one SQE fails
	// (IORING_SETUP_SUBMIT_ALL, 5.18); on a kernel without it the ring is
	// set up without. The Front sets it so a bad request never splits a batch.
	SubmitAll bool
}

// EnsureDefaults fills unset fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.Entries == 0 {
		o.Entries = 256
	}
}

// Validate reports every problem of o at once (errors.Join), each wrapping
// ErrBadOptions. Call EnsureDefaults first.
func (o *Options) Validate() error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrBadOptions}, a...)...))
	}
	if o.Entries == 0 || o.Entries > maxEntries {
		bad("Entries %d must be between 1 and %d", o.Entries, maxEntries)
	}
	if o.CQEntries != 0 && (o.CQEntries < o.Entries || o.CQEntries > maxCQEntries) {
		bad("CQEntries %d must be 0 or between Entries (%d) and %d", o.CQEntries, o.Entries, maxCQEntries)
	}
	if !o.SQPoll && o.SQThreadCPU > 0 {
		bad("SQThreadCPU %d is set but SQPoll is off", o.SQThreadCPU)
	}
	if o.SQThreadCPU < -1 {
		bad("SQThreadCPU %d must be -1 (none) or a CPU number", o.SQThreadCPU)
	}
	if !o.SQPoll && o.SQThreadIdle != 0 {
		bad("SQThreadIdle %v is set but SQPoll is off", o.SQThreadIdle)
	}
	if o.SQThreadIdle < 0 || o.SQThreadIdle > time.Duration(1<<32-1)*time.Millisecond {
		bad("SQThreadIdle %v is out of range", o.SQThreadIdle)
	}
	if o.DeferTaskrun && !o.SingleIssuer {
		bad("DeferTaskrun requires SingleIssuer")
	}
	if o.DeferTaskrun && o.SQPoll {
		bad("DeferTaskrun cannot be combined with SQPoll")
	}
	return errors.Join(errs...)
}

// params converts o into io_uring_params.
func (o *Options) params() params {
	var p params
	if o.CQEntries != 0 {
		p.Flags |= setupCQSize
		p.CQEntries = o.CQEntries
	}
	if o.SQE128 {
		p.Flags |= setupSQE128
	}
	if o.CQE32 {
		p.Flags |= setupCQE32
	}
	if o.IOPoll {
		p.Flags |= setupIOPoll
	}
	if o.SQPoll {
		p.Flags |= setupSQPoll
		if o.SQThreadCPU >= 0 {
			p.Flags |= setupSQAff
			p.SQThreadCPU = uint32(o.SQThreadCPU)
		}
		p.SQThreadIdle = uint32(o.SQThreadIdle / time.Millisecond)
	}
	if o.CoopTaskrun {
		p.Flags |= setupCoopTaskrun | setupTaskrunFlag
	}
	if o.SingleIssuer {
		p.Flags |= setupSingleIssuer
	}
	if o.DeferTaskrun {
		p.Flags |= setupDeferTaskrun | setupTaskrunFlag
	}
	if o.NoSQArray {
		p.Flags |= setupNoSQArray
	}
	if o.SubmitAll {
		p.Flags |= setupSubmitAll
	}
	return p
}

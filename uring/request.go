package uring

import "syscall"

// Request is one SQE submitted through a Front. Fill Prep, Pin and Done; the
// Front owns the Request from Submit until Done returns (do not change or
// resubmit it before), then it may be reused.
type Request struct {
	// Prep fills the SQE on the owner goroutine: opcode, fd, addresses,
	// flags (e.g. FlagIOLink to link to the next request of the group). Do
	// NOT set UserData (the Front owns it); FlagCQESkipSuccess is cleared
	// (the Front needs every completion), and so are FlagIOLink and
	// FlagIOHardlink on the last request of a group (a chain never crosses
	// groups).
	Prep func(s *SQE)
	// Pin lists Go memory the kernel reads or writes for this request (I/O
	// buffers, iovec arrays as bytes...). It is pinned with runtime.Pinner
	// from before the SQE is submitted until its completion. mmap'd memory
	// needs no pinning.
	Pin [][]byte
	// PinObjects are other Go pointers to pin the same way (e.g. a
	// *unix.Timespec for a link timeout, &iovs[0]).
	PinObjects []any
	// Done is called once with the result, on the owner goroutine. It must
	// not block and must not call Front.Do or the Front's Register/Probe
	// methods (hand off to a channel instead). It may call Front.Submit.
	Done func(Result)

	// Owner-goroutine state.
	groupLen  int32   // set on the first request of a group by Submit
	slot      int32   // its slot, valid while inFlight
	inFlight  bool    // its SQE has been prepared and its completion not reaped
	cancelled bool    // Do's context ended before the request was placed
	call      *doCall // the Do waiting for this request, if any
	callIdx   int32
}

// Result is a completion.
type Result struct {
	Res   int32     // cqe->res: >= 0 success (often a byte count), < 0 a negated errno
	Flags uint32    // cqe->flags
	Big   [2]uint64 // big_cqe[0..1] on a CQE32 ring, else zeros
}

// Err is nil if Res >= 0, else the syscall.Errno -Res (test it with
// errors.Is(err, syscall.ECANCELED) etc.).
func (r Result) Err() error {
	if r.Res >= 0 {
		return nil
	}
	return syscall.Errno(-r.Res)
}

// doCall collects the results of one Front.Do.
type doCall struct {
	results []Result
	left    int // requests not completed yet; owner goroutine only
	done    chan struct{}
}

package uring

// CQE is a completion: a copy of struct io_uring_cqe and, on a CQE32 ring,
// of its big_cqe[2] (the ring's own 16- or 32-byte entries are rawCQE and
// rawCQE32 in abi.go). Being a copy, it may be kept after CQESeen.
type CQE struct {
	UserData uint64    // user_data of the SQE
	Res      int32     // result: >= 0 success (often a byte count), < 0 a negated errno
	Flags    uint32    // IORING_CQE_F_*
	big      [2]uint64 // big_cqe[0..1]; zeros unless the ring is CQE32
}

// Big returns big_cqe[0..1] on a CQE32 ring (for NVMe passthrough big[0] is
// the 64-bit command result), zeros on other rings.
func (c *CQE) Big() [2]uint64 { return c.big }

// Err is nil if Res >= 0, else the syscall.Errno -Res.
func (c *CQE) Err() error { return Result{Res: c.Res}.Err() }

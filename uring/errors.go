package uring

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// Sentinel errors. Callers test them with errors.Is; they are wrapped with
// context (and usually the kernel's errno) where they are returned.
var (
	// ErrUnavailable: io_uring cannot be used in this process (kernel without
	// it, sysctl kernel.io_uring_disabled, or a seccomp filter).
	ErrUnavailable = errors.New("uring: io_uring is unavailable")
	// ErrTimeout: WaitCQE saw no completion before its timeout (wraps ETIME).
	ErrTimeout = errors.New("uring: timed out waiting for a completion")
	// ErrClosed: the Ring or Front is closed.
	ErrClosed = errors.New("uring: closed")
	// ErrTooLarge: a request group has more requests than the submission queue has entries.
	ErrTooLarge = errors.New("uring: request group larger than the submission queue")
	// ErrBusy: the kernel refused to take more SQEs for now (EBUSY/EAGAIN,
	// usually a completion backlog): reap completions, then retry.
	ErrBusy = errors.New("uring: kernel busy, reap completions and retry")
	// ErrSQFull: no free SQE in the submission queue.
	ErrSQFull = errors.New("uring: submission queue full")
	// ErrBadOptions: Options.Validate found a problem.
	ErrBadOptions = errors.New("uring: invalid options")
	// ErrNoProbe: the kernel has no IORING_REGISTER_PROBE.
	ErrNoProbe = errors.New("uring: the kernel cannot probe opcodes")
)

// disabledSysctl is the sysctl that turns io_uring off (Linux 6.6+):
// 0 = enabled, 1 = only members of kernel.io_uring_group, 2 = disabled.
const disabledSysctl = "/proc/sys/kernel/io_uring_disabled"

// setupError turns an io_uring_setup failure into an error. ENOSYS and EPERM
// mean io_uring is unavailable to this process; they become ErrUnavailable
// with one sentence saying why. Anything else is a setup error with the
// options that were asked for.
func setupError(err error, flags uint32) error {
	if errno, ok := err.(syscall.Errno); ok && (errno == syscall.ENOSYS || errno == syscall.EPERM) {
		sysctl, _ := os.ReadFile(disabledSysctl)
		return unavailableError(errno, strings.TrimSpace(string(sysctl)))
	}
	return fmt.Errorf("uring: io_uring_setup with flags %#x: %w", flags, err)
}

// unavailableError is the errno → sentence mapping of setupError, separate so
// it can be tested without a kernel that refuses io_uring. sysctl is the
// content of /proc/sys/kernel/io_uring_disabled ("" when it does not exist).
func unavailableError(errno syscall.Errno, sysctl string) error {
	var why string
	switch {
	case errno == syscall.ENOSYS:
		why = "the io_uring_setup system call does not exist (ENOSYS): the kernel is older than 5.1, built without CONFIG_IO_URING, or a seccomp filter hides it"
	case errno == syscall.EPERM && sysctl == "2":
		why = "io_uring_setup was refused (EPERM) because sysctl kernel.io_uring_disabled=2 disables io_uring for every process"
	case errno == syscall.EPERM && sysctl == "1":
		why = "io_uring_setup was refused (EPERM) because sysctl kernel.io_uring_disabled=1 allows io_uring only to root and members of kernel.io_uring_group"
	case errno == syscall.EPERM:
		why = "io_uring_setup was refused (EPERM), most likely by a seccomp filter such as a container runtime's default profile"
	default:
		why = "io_uring_setup failed (" + errno.Error() + ")"
	}
	return fmt.Errorf("%w: %s: %w", ErrUnavailable, why, errno)
}

// ErrBadRequest: a Request is nil or has no Prep.
var ErrBadRequest = errors.New("uring: bad request")

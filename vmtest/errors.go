package vmtest

import "errors"

// Sentinel errors; callers match them with errors.Is.
var (
	// ErrSkip means the host lacks QEMU or a guest kernel and cannot install
	// them (not root): the run is skipped unless Options.NoSkip is set.
	ErrSkip = errors.New("vmtest: QEMU guest cannot run here")
	// ErrTimeout means the guest did not power off within Options.Timeout.
	ErrTimeout = errors.New("vmtest: guest timed out")
	// ErrGuestFailed means at least one guest test binary failed, skipped
	// a test, or never reported.
	ErrGuestFailed = errors.New("vmtest: guest tests failed")
	// ErrModuleNotFound means a kernel module is missing from modules.dep.
	ErrModuleNotFound = errors.New("vmtest: kernel module not found")
	// ErrMissingHostProgram means a host program to pack (or a library it
	// needs) is not installed.
	ErrMissingHostProgram = errors.New("vmtest: host program missing")
	// ErrBadCPIO means a cpio entry cannot be encoded (name or size).
	ErrBadCPIO = errors.New("vmtest: bad cpio entry")
)

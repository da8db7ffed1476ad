package numa

import "errors"

// Sentinel errors; callers match them with errors.Is.
var (
	// ErrNoSuchNode: the requested node is not online on this machine.
	ErrNoSuchNode = errors.New("numa: no such node")
	// ErrNoMemory: the requested node exists but has no memory (e.g. a CPU-only node).
	ErrNoMemory = errors.New("numa: node has no memory")
	// ErrNotAllowed: the node is outside this process's cpuset (mems_allowed).
	ErrNotAllowed = errors.New("numa: node not allowed by cpuset")
	// ErrPermission: the kernel refused a memory-policy syscall with EPERM,
	// typically a container without CAP_SYS_NICE under the default seccomp profile.
	ErrPermission = errors.New("numa: memory policy not permitted (needs CAP_SYS_NICE in most containers)")
	// ErrPolicyUnsupported: this kernel does not know the policy mode (EINVAL).
	ErrPolicyUnsupported = errors.New("numa: memory policy not supported by this kernel")
	// ErrClosed: the arena was closed.
	ErrClosed = errors.New("numa: arena closed")
	// ErrInvalidOptions: ArenaOptions.Validate found a problem.
	ErrInvalidOptions = errors.New("numa: invalid options")
	// ErrTopology: sysfs could not be read or parsed.
	ErrTopology = errors.New("numa: reading topology")
)

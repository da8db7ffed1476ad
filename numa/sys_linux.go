package numa

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Raw NUMA policy syscalls. x/sys/unix has no Mbind, GetMempolicy or
// MovePages wrappers (only SetMemPolicy); numbers come from unix.SYS_*
// (amd64: mbind 237, set_mempolicy 238, get_mempolicy 239, move_pages 279). Every wrapper turns
// errno 0 into nil, so a bare zero Errno never escapes.

// Policy modes and flags from include/uapi/linux/mempolicy.h, via x/sys.
const (
	mpolDefault             = unix.MPOL_DEFAULT             // 0
	mpolPreferred           = unix.MPOL_PREFERRED           // 1
	mpolBind                = unix.MPOL_BIND                // 2
	mpolInterleave          = unix.MPOL_INTERLEAVE          // 3
	mpolLocal               = unix.MPOL_LOCAL               // 4
	mpolPreferredMany       = unix.MPOL_PREFERRED_MANY      // 5, Linux 5.15
	mpolWeightedInterleave  = unix.MPOL_WEIGHTED_INTERLEAVE // 6, Linux 6.9
	mpolFNode               = unix.MPOL_F_NODE              // get_mempolicy: return a node id
	mpolFAddr               = unix.MPOL_F_ADDR              // get_mempolicy: policy of the VMA at addr
	mpolFMemsAllowed        = unix.MPOL_F_MEMS_ALLOWED      // get_mempolicy: the cpuset's allowed nodes
	mpolMFStrict            = unix.MPOL_MF_STRICT           // mbind: fail if pages violate the policy
	mpolMFMove              = unix.MPOL_MF_MOVE             // mbind: migrate exclusive pages
	mpolModeFlags           = unix.MPOL_MODE_FLAGS          // high mode bits returned by get_mempolicy
	moveStatusSentinel      = int32(-1 << 30)               // pre-set move_pages status, never a kernel value
	maxGetMempolicyMaskBits = 1024                          // nodemask size used for get_mempolicy reads
)

// mbind(addr, len, mode, nodemask, maxnode, flags). It may migrate pages
// (MPOL_MF_MOVE), so it is issued with Syscall6, not RawSyscall6.
func mbind(addr, length uintptr, mode int, mask nodemask, flags int) error {
	p, maxnode := mask.ptr()
	_, _, e := unix.Syscall6(unix.SYS_MBIND, addr, length, uintptr(mode),
		uintptr(p), maxnode, uintptr(flags))
	if e != 0 {
		return e
	}
	return nil
}

// setMempolicy(mode, nodemask, maxnode) sets the calling thread's policy.
func setMempolicy(mode int, mask nodemask) error {
	p, maxnode := mask.ptr()
	_, _, e := unix.Syscall(unix.SYS_SET_MEMPOLICY, uintptr(mode), uintptr(p), maxnode)
	if e != 0 {
		return e
	}
	return nil
}

// getMempolicy(mode*, nodemask*, maxnode, addr, flags). mask may be nil.
func getMempolicy(mode *int32, mask nodemask, addr uintptr, flags int) error {
	p, maxnode := mask.ptr()
	_, _, e := unix.Syscall6(unix.SYS_GET_MEMPOLICY, uintptr(unsafe.Pointer(mode)),
		uintptr(p), maxnode, addr, uintptr(flags), 0)
	if e != 0 {
		return e
	}
	return nil
}

// movePagesQuery asks for the node of each page of the calling process
// without moving anything (move_pages with nodes == NULL, move_pages(2)).
// status[i] receives a node id or a negative errno.
func movePagesQuery(pages []uintptr, status []int32) error {
	if len(pages) == 0 {
		return nil
	}
	_, _, e := unix.Syscall6(unix.SYS_MOVE_PAGES, 0, uintptr(len(pages)),
		uintptr(unsafe.Pointer(&pages[0])), 0, uintptr(unsafe.Pointer(&status[0])), 0)
	if e != 0 {
		return e
	}
	return nil
}

// mmapAnon maps length bytes of private anonymous memory.
func mmapAnon(length int) ([]byte, error) {
	return unix.Mmap(-1, 0, length, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
}

func munmap(b []byte) error { return unix.Munmap(b) }

func madviseHuge(b []byte) error { return unix.Madvise(b, unix.MADV_HUGEPAGE) }

// madviseDontNeed frees the pages of b; a private anonymous mapping reads
// zeros there afterwards (madvise(2)).
func madviseDontNeed(b []byte) error { return unix.Madvise(b, unix.MADV_DONTNEED) }

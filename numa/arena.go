package numa

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"syscall"

	"go.uber.org/zap"
)

// Arena is an anonymous private mapping whose pages are placed on a NUMA
// node by a memory policy. It holds no Go pointers and is invisible to the GC.
type Arena struct {
	mem      []byte
	opts     ArenaOptions
	pageSize int

	mu          sync.Mutex
	closed      bool
	target      nodemask // nodes the pages should be on; nil when unbound by choice
	policy      Policy
	bound       bool  // a policy is in force as asked
	fallbackErr error // why the arena runs unbound (FallbackPreferred), nil otherwise
}

// NewArena maps, binds and (by default) pre-faults an arena. Node problems
// are checked against the topology before any syscall, and Fallback decides
// whether they are fatal.
func NewArena(opts ArenaOptions) (*Arena, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	ps := os.Getpagesize()
	size := (opts.Bytes + ps - 1) / ps * ps
	a := &Arena{opts: opts, pageSize: ps, policy: opts.Policy}
	log := opts.Logger

	nodes, bindErr := a.resolveNodes()
	if len(nodes) > 0 {
		a.target = maskOf(nodes...) // kept under a fallback: Placement measures against it
	}
	if bindErr == nil && len(nodes) > 0 {
		bindErr = checkAllowed(nodes)
	}
	if bindErr != nil {
		if err := a.fallback(bindErr); err != nil {
			return nil, err
		}
	}

	mem, err := mmapAnon(size)
	if err != nil {
		return nil, fmt.Errorf("numa: mmap %d bytes: %w", size, err)
	}
	a.mem = mem
	if opts.HugePages {
		if err := madviseHuge(mem); err != nil {
			log.Warn("numa: MADV_HUGEPAGE failed; continuing with small pages", zap.Error(err))
		}
	}

	bindNow := bindErr == nil && a.target != nil
	switch {
	case bindNow && opts.Mode == ModeThread:
		if numaBalancingOn() {
			// Seen in the QEMU guest: with automatic NUMA balancing a
			// thread-mode arena migrated from its node to the CPUs' node
			// within seconds; a range (mbind) policy keeps its pages.
			log.Warn("numa: automatic NUMA balancing is on (/proc/sys/kernel/numa_balancing); pages placed by the thread policy may migrate away from the target node: prefer mode range")
		}
		if err := a.threadFault(); err != nil {
			if ferr := a.fallback(err); ferr != nil {
				_ = munmap(mem)
				return nil, ferr
			}
			a.prefault() // the thread faulted nothing or only part: finish unbound
		}
	case bindNow:
		if err := a.mbind(a.policy, a.target, 0); err != nil {
			if ferr := a.fallback(err); ferr != nil {
				_ = munmap(mem)
				return nil, ferr
			}
		} else {
			a.bound = true
		}
		if !opts.NoPrefault {
			a.prefault()
		}
	default:
		// Unbound (by choice, AutoNode finding no memory-only node, or a
		// fallback): there is no placement to make, so pages come as they
		// are first written and the process's memory grows with use.
	}
	nodesKey := "nodes"
	if !a.bound {
		nodesKey = "requested_nodes" // the fallback ran it unbound
	}
	log.Info("numa: arena ready", zap.Int("bytes", size), zap.Ints(nodesKey, a.target.nodes()),
		zap.Stringer("policy", a.policy), zap.Stringer("mode", opts.Mode), zap.Bool("bound", a.bound))
	return a, nil
}

// resolveNodes turns Node/Nodes into the checked node set (nil = unbound).
func (a *Arena) resolveNodes() ([]int, error) {
	o := &a.opts
	if o.Node == Unbound && len(o.Nodes) == 0 {
		return nil, nil
	}
	topo, err := ReadTopologyFrom(o.SysfsRoot)
	if err != nil {
		return nil, err
	}
	var nodes []int
	switch {
	case len(o.Nodes) > 0:
		nodes = append(nodes, o.Nodes...)
	case o.Node == AutoNode:
		n, reason := topo.WarmNode()
		o.Logger.Info("numa: auto node", zap.Int("node", n), zap.String("reason", reason))
		if n == Unbound {
			return nil, nil
		}
		nodes = []int{n}
	default:
		nodes = []int{o.Node}
	}
	var errs []error
	for _, n := range nodes {
		errs = append(errs, topo.checkNode(n))
	}
	if err := errors.Join(errs...); err != nil {
		return nodes, err
	}
	return nodes, nil
}

// fallback applies opts.Fallback to a binding problem: nil means "continue
// unbound" (recorded), an error means refuse to start.
func (a *Arena) fallback(cause error) error {
	if a.opts.Fallback == FallbackStrict {
		return cause
	}
	a.fallbackErr = cause
	a.bound = false
	a.opts.Logger.Warn("numa: arena runs UNBOUND (fallback preferred)", zap.Error(cause))
	return nil
}

// checkAllowed verifies the nodes are in this process's cpuset mems_allowed.
func checkAllowed(nodes []int) error {
	var mode int32
	allowed := make(nodemask, maxGetMempolicyMaskBits/64)
	if err := getMempolicy(&mode, allowed, 0, mpolFMemsAllowed); err != nil {
		if errors.Is(err, syscall.EPERM) {
			return nil // unknown; the mbind/set_mempolicy that follows reports EPERM itself
		}
		return policyErr("get_mempolicy(MPOL_F_MEMS_ALLOWED)", PolicyBind, nodes, err)
	}
	for _, n := range nodes {
		if !allowed.has(n) {
			return fmt.Errorf("%w: node %d is not in this process's cpuset (mems_allowed: %s)",
				ErrNotAllowed, n, formatList(allowed.nodes()))
		}
	}
	return nil
}

// policyErr wraps a syscall error with the call, the nodes and a sentinel.
func policyErr(call string, p Policy, nodes []int, err error) error {
	switch {
	case errors.Is(err, syscall.EPERM):
		return fmt.Errorf("%w: %s to node(s) %s: %w (grant CAP_SYS_NICE or allow mbind/set_mempolicy/get_mempolicy/move_pages in the seccomp profile)",
			ErrPermission, call, formatList(nodes), err)
	case errors.Is(err, syscall.EINVAL) && (p == PolicyPreferredMany || p == PolicyWeightedInterleave):
		return fmt.Errorf("%w: %s with policy %s: %w (needs Linux 5.15+ for preferred-many, 6.9+ for weighted-interleave)",
			ErrPolicyUnsupported, call, p, err)
	}
	return fmt.Errorf("numa: %s policy %s to node(s) %s: %w", call, p, formatList(nodes), err)
}

func (a *Arena) mbind(p Policy, mask nodemask, flags int) error {
	err := mbind(baseAddr(a.mem), uintptr(len(a.mem)), p.kernelMode(), mask, flags)
	if err != nil {
		return policyErr(fmt.Sprintf("mbind %d bytes", len(a.mem)), p, mask.nodes(), err)
	}
	return nil
}

// threadFault applies the policy to one locked OS thread, faults every page
// from it and restores MPOL_DEFAULT. If the restore fails the thread is left
// locked, so the runtime destroys it when the goroutine exits.
func (a *Arena) threadFault() error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := setMempolicy(a.policy.kernelMode(), a.target); err != nil {
			runtime.UnlockOSThread()
			done <- policyErr("set_mempolicy", a.policy, a.target.nodes(), err)
			return
		}
		a.prefault()
		if err := restoreDefaultPolicy(); err != nil {
			a.opts.Logger.Warn("numa: restoring MPOL_DEFAULT failed; retiring the thread", zap.Error(err))
			done <- nil // leave locked: the thread exits with the goroutine
			return
		}
		runtime.UnlockOSThread()
		done <- nil
	}()
	if err := <-done; err != nil {
		return err
	}
	a.bound = true
	return nil
}

// restoreDefaultPolicy sets MPOL_DEFAULT on the calling thread and reads
// it back with get_mempolicy(flags 0), which returns the thread policy.
func restoreDefaultPolicy() error {
	if err := setMempolicy(mpolDefault, nil); err != nil {
		return err
	}
	var mode int32 = -1
	if err := getMempolicy(&mode, nil, 0, 0); err != nil {
		return err
	}
	if int(mode)&^mpolModeFlags != mpolDefault {
		return fmt.Errorf("numa: thread policy is still mode %d after restoring MPOL_DEFAULT", mode)
	}
	return nil
}

// prefault writes one byte per page so each page is really allocated; an
// untouched page maps the shared zero page and reports a meaningless node.
func (a *Arena) prefault() {
	for i := 0; i < len(a.mem); i += a.pageSize {
		a.mem[i] = 0
	}
}

// Bytes is the arena memory. It is valid until Close; never store Go
// pointers in it.
func (a *Arena) Bytes() []byte { return a.mem }

// Len is the mapped size in bytes (a multiple of the page size).
func (a *Arena) Len() int { return len(a.mem) }

// Release gives the pages wholly inside [off, off+n) back to the kernel
// (madvise MADV_DONTNEED): they take no memory until written again, and
// read as zeros then; their memory policy stays (N13). It reports the
// bytes released.
func (a *Arena) Release(off, n int) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed || off < 0 || n <= 0 || off+n > len(a.mem) {
		return 0, nil
	}
	lo := (off + a.pageSize - 1) / a.pageSize * a.pageSize
	hi := (off + n) / a.pageSize * a.pageSize
	if hi <= lo {
		return 0, nil
	}
	if err := madviseDontNeed(a.mem[lo:hi]); err != nil {
		return 0, fmt.Errorf("numa: madvise(MADV_DONTNEED) %d bytes: %w", hi-lo, err)
	}
	return hi - lo, nil
}

// Bound reports the first node the arena is bound to and whether a policy
// is in force as configured.
func (a *Arena) Bound() (node int, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ns := a.target.nodes()
	if !a.bound || len(ns) == 0 {
		return Unbound, false
	}
	return ns[0], true
}

// Target is the intended node set (the configured one even when a
// fallback left the arena unbound); nil when unbound by configuration.
func (a *Arena) Target() []int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.target.nodes()
}

// FallbackErr is why the arena runs unbound under FallbackPreferred, or nil.
func (a *Arena) FallbackErr() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.fallbackErr
}

// Rebind changes the range policy to p over nodes and migrates the pages
// already faulted (MPOL_MF_MOVE|MPOL_MF_STRICT: EIO if some could not move).
func (a *Arena) Rebind(p Policy, nodes ...int) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return ErrClosed
	}
	if len(nodes) == 0 {
		return fmt.Errorf("%w: Rebind needs at least one node", ErrInvalidOptions)
	}
	topo, err := ReadTopologyFrom(a.opts.SysfsRoot)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		if err := topo.checkNode(n); err != nil {
			return err
		}
	}
	if err := checkAllowed(nodes); err != nil {
		return err
	}
	mask := maskOf(nodes...)
	if err := a.mbind(p, mask, mpolMFStrict|mpolMFMove); err != nil {
		return err
	}
	a.target, a.policy, a.bound, a.fallbackErr = mask, p, true, nil
	return nil
}

// RangePolicy reads back the VMA policy of the arena's first page with
// get_mempolicy(MPOL_F_ADDR): the kernel mode (MPOL_*) and its node set.
func (a *Arena) RangePolicy() (mode int, nodes []int, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return 0, nil, ErrClosed
	}
	var m int32
	mask := make(nodemask, maxGetMempolicyMaskBits/64)
	if err := getMempolicy(&m, mask, baseAddr(a.mem), mpolFAddr); err != nil {
		return 0, nil, policyErr("get_mempolicy(MPOL_F_ADDR)", a.policy, a.target.nodes(), err)
	}
	return int(m) &^ mpolModeFlags, mask.nodes(), nil
}

// Close unmaps the arena. It is idempotent.
func (a *Arena) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil
	}
	a.closed = true
	mem := a.mem
	a.mem = nil
	if err := munmap(mem); err != nil {
		return fmt.Errorf("numa: munmap %d bytes: %w", len(mem), err)
	}
	return nil
}

// numaBalancingOn reports whether the kernel's automatic NUMA balancing is
// enabled (a missing file means a kernel without it).
func numaBalancingOn() bool {
	b, err := os.ReadFile("/proc/sys/kernel/numa_balancing")
	return err == nil && len(b) > 0 && b[0] != '0'
}

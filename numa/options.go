package numa

import (
	"errors"
	"fmt"
	"strings"

	"go.uber.org/zap"
)

// Special values of ArenaOptions.Node.
const (
	// Unbound leaves the arena without a memory policy (first touch decides).
	Unbound = -1
	// AutoNode picks Topology.WarmNode(): the best CXL candidate, else Unbound.
	AutoNode = -2
)

// Policy is the mbind/set_mempolicy mode applied to the arena.
type Policy int

const (
	PolicyBind               Policy = iota // MPOL_BIND: pages only from the node set (default)
	PolicyPreferred                        // MPOL_PREFERRED: the first node, falling back by distance
	PolicyPreferredMany                    // MPOL_PREFERRED_MANY: preferred over a set (Linux 5.15+)
	PolicyWeightedInterleave               // MPOL_WEIGHTED_INTERLEAVE: by sysfs weights (Linux 6.9+)
)

func (p Policy) kernelMode() int {
	switch p {
	case PolicyPreferred:
		return mpolPreferred
	case PolicyPreferredMany:
		return mpolPreferredMany
	case PolicyWeightedInterleave:
		return mpolWeightedInterleave
	}
	return mpolBind
}

func (p Policy) String() string {
	switch p {
	case PolicyBind:
		return "bind"
	case PolicyPreferred:
		return "preferred"
	case PolicyPreferredMany:
		return "preferred-many"
	case PolicyWeightedInterleave:
		return "weighted-interleave"
	}
	return fmt.Sprintf("Policy(%d)", int(p))
}

// ParsePolicy maps a config word (bind, preferred, preferred-many,
// weighted-interleave) to a Policy.
func ParsePolicy(s string) (Policy, error) {
	for p := PolicyBind; p <= PolicyWeightedInterleave; p++ {
		if strings.EqualFold(s, p.String()) {
			return p, nil
		}
	}
	return 0, fmt.Errorf("%w: unknown memory policy %q (want bind, preferred, preferred-many or weighted-interleave)", ErrInvalidOptions, s)
}

// Mode is how the policy is applied.
type Mode int

const (
	// ModeRange binds the address range with mbind (a VMA policy shared by
	// all threads). Default: goroutines move between OS threads.
	ModeRange Mode = iota
	// ModeThread sets the policy with set_mempolicy on one locked OS thread,
	// pre-faults the whole arena from it, then restores MPOL_DEFAULT there.
	ModeThread
)

func (m Mode) String() string {
	switch m {
	case ModeRange:
		return "range"
	case ModeThread:
		return "thread"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode maps "range" or "thread" to a Mode.
func ParseMode(s string) (Mode, error) {
	for m := ModeRange; m <= ModeThread; m++ {
		if strings.EqualFold(s, m.String()) {
			return m, nil
		}
	}
	return 0, fmt.Errorf("%w: unknown policy mode %q (want range or thread)", ErrInvalidOptions, s)
}

// Fallback decides what NewArena does when the node cannot be used
// (missing, no memory, not allowed, EPERM, unsupported policy).
type Fallback int

const (
	// FallbackStrict refuses to start: NewArena returns the error (default).
	FallbackStrict Fallback = iota
	// FallbackPreferred starts unbound, logs a warning and records the reason
	// (Arena.FallbackErr, Arena.Bound() == false) for metrics.
	FallbackPreferred
)

func (f Fallback) String() string {
	switch f {
	case FallbackStrict:
		return "strict"
	case FallbackPreferred:
		return "preferred"
	}
	return fmt.Sprintf("Fallback(%d)", int(f))
}

// ParseFallback maps "strict" or "preferred" to a Fallback.
func ParseFallback(s string) (Fallback, error) {
	for f := FallbackStrict; f <= FallbackPreferred; f++ {
		if strings.EqualFold(s, f.String()) {
			return f, nil
		}
	}
	return 0, fmt.Errorf("%w: unknown fallback %q (want strict or preferred)", ErrInvalidOptions, s)
}

// ArenaOptions configures NewArena. The zero value (plus Bytes) binds to
// node 0 with MPOL_BIND over the range and refuses to start if it cannot.
type ArenaOptions struct {
	// Bytes is the arena size in bytes, rounded up to the page size. Required.
	Bytes int
	// Node is the node to bind to, or Unbound (-1), or AutoNode (-2).
	Node int
	// Nodes, when set, is the node set for PolicyPreferredMany and
	// PolicyWeightedInterleave (and the set for PolicyBind); default {Node}.
	Nodes []int
	// Policy is the memory policy; default PolicyBind.
	Policy Policy
	// Mode is ModeRange (mbind, default) or ModeThread (set_mempolicy).
	Mode Mode
	// HugePages asks for transparent huge pages with MADV_HUGEPAGE.
	HugePages bool
	// Fallback is FallbackStrict (default) or FallbackPreferred.
	Fallback Fallback
	// NoPrefault skips writing every page at start (ModeRange only; an
	// unbound arena is never pre-faulted: it has no placement to make). Pages are
	// then placed at first touch and Placement sees only touched pages.
	NoPrefault bool
	// SysfsRoot is where the topology is read; default "/sys".
	SysfsRoot string
	// Logger defaults to zap.NewNop().
	Logger *zap.Logger
}

// EnsureDefaults fills zero fields with their defaults.
func (o *ArenaOptions) EnsureDefaults() {
	if o.SysfsRoot == "" {
		o.SysfsRoot = DefaultSysfsRoot
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
}

// Validate reports every problem at once.
func (o *ArenaOptions) Validate() error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidOptions}, a...)...))
	}
	if o.Bytes <= 0 {
		bad("arena Bytes must be positive, got %d", o.Bytes)
	}
	if o.Node < AutoNode {
		bad("node %d is invalid (want a node id, -1 unbound or -2 auto)", o.Node)
	}
	for _, n := range o.Nodes {
		if n < 0 || n >= maxGetMempolicyMaskBits {
			bad("node %d in Nodes is out of range 0..%d", n, maxGetMempolicyMaskBits-1)
		}
	}
	if o.Node >= maxGetMempolicyMaskBits {
		bad("node %d is out of range 0..%d", o.Node, maxGetMempolicyMaskBits-1)
	}
	if o.Policy < PolicyBind || o.Policy > PolicyWeightedInterleave {
		bad("unknown policy %d", int(o.Policy))
	}
	if o.Policy == PolicyPreferred && len(o.Nodes) > 1 {
		bad("policy preferred takes one node, got %d in Nodes (use preferred-many)", len(o.Nodes))
	}
	if o.Mode < ModeRange || o.Mode > ModeThread {
		bad("unknown mode %d", int(o.Mode))
	}
	if o.Fallback < FallbackStrict || o.Fallback > FallbackPreferred {
		bad("unknown fallback %d", int(o.Fallback))
	}
	return errors.Join(errs...)
}

// Package numa reads the machine's NUMA topology from sysfs and provides
// Arena, an anonymous mmap'd region whose pages are placed on a chosen node
// (typically a CPU-less CXL memory node) by a memory policy, with the
// placement verified page by page.
//
// Topology: ReadTopology/ReadTopologyFrom(root) parse node/online,
// has_cpu, has_memory, has_normal_memory, nodeN/{cpulist,meminfo,distance}
// and memory_tiering/memory_tierN/{nodelist|nodes}. CXLCandidates ranks
// memory nodes without CPUs by tier, then distance; WarmNode picks the first;
// WarmNodeFor resolves a configured node (id, Unbound, AutoNode) the way
// NewArena would; WriteTo / Print(w, configuredNode) print what
// `tiercache numa` shows.
//
// Arena: mmap(MAP_PRIVATE|MAP_ANONYMOUS), optional MADV_HUGEPAGE, then
// either mbind over the range (ModeRange, default: a VMA policy that holds
// for every thread) or set_mempolicy on one locked OS thread that pre-faults
// every page and restores MPOL_DEFAULT (ModeThread). Binder binds memory its
// caller mapped (the emulated cold store's index tables) to one node with
// mbind. Placement samples pages
// with move_pages(nodes=NULL) and cross-checks with
// get_mempolicy(MPOL_F_NODE|MPOL_F_ADDR).
//
// # Invariants
//
// N1: a node that is not online or has no memory is rejected before any
// memory-policy syscall, with an error naming the node and listing the online
// nodes and the nodes with memory (ErrNoSuchNode, ErrNoMemory).
// N2: nodemasks are passed with maxnode = 64*words+1, because the kernel
// reads maxnode-1 bits.
// N3: with pre-faulting (the default), every page of the arena has been
// written before NewArena returns, so no page maps the shared zero page.
// N4: an arena bound with PolicyBind to node n reports Placement == 1.0 on n.
// N5: Placement fails (ErrPlacementMismatch) when move_pages and
// get_mempolicy disagree about a sampled page.
// N6: with FallbackStrict any binding problem (N1, ErrNotAllowed,
// ErrPermission, ErrPolicyUnsupported) makes NewArena fail; with
// FallbackPreferred the arena starts unbound, Bound() reports false and
// FallbackErr() the reason.
// N7: ModeThread leaves the faulting thread with MPOL_DEFAULT, or retires it.
// N8: Rebind uses MPOL_MF_MOVE|MPOL_MF_STRICT, so already-faulted pages move
// or the call fails.
// N9: Close unmaps exactly what mmap returned and is idempotent.
// N10: Validate reports every option problem at once.
// N11: CXLCandidates lists exactly the online nodes with memory and no
// CPUs, ordered by memory tier (unknown last), then by distance from the
// nearest CPU node (unknown last), then by id.
// N12: Binder.Bind puts MPOL_BIND (with MPOL_MF_MOVE) on a page-aligned
// range its caller mapped, so every page of it touched afterwards, and
// every page touched before, is on the Binder's node; Binder.Placement
// counts untouched pages as Missing and measures Resident over the rest
// (TestBinderPlacesCallersMapping; NewBinder checks the node as N1 says,
// TestBinderMissingNode).
// N13: Arena.Release frees the whole pages of a range: the process's
// resident memory drops by them and they read as zeros until written
// again (TestArenaReleaseFreesPages).
//
// # Caveats
//
// Arena.Bytes is valid until Close; it must never hold Go pointers (the GC
// does not scan it). In ModeThread the range has no VMA policy: pages the
// kernel later reallocates (swap-in, khugepaged collapse, compaction) follow
// the default policy, and with automatic NUMA balancing on (Debian's default
// on multi-node machines) they were seen to migrate to the CPUs' node within
// seconds in the QEMU guest; NewArena logs a warning then. With NoPrefault, Placement only sees touched pages.
// An unbound arena is not pre-faulted: its pages are allocated as they are
// first written, so it takes memory as it fills.
// Automatic NUMA balancing may migrate unbound pages between a sample's
// move_pages and get_mempolicy reads. EPERM usually means a container
// without CAP_SYS_NICE under the default seccomp profile. Topology is a
// snapshot; memory hotplug (daxctl online) after it is read is not seen.
package numa

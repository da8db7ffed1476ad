package numa

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// DefaultSysfsRoot is where sysfs is mounted; tests pass a fake tree instead.
const DefaultSysfsRoot = "/sys"

// Node is one NUMA node as sysfs describes it.
type Node struct {
	ID              int
	HasCPU          bool   // listed in node/has_cpu
	HasMemory       bool   // listed in node/has_memory
	HasNormalMemory bool   // listed in node/has_normal_memory (ZONE_NORMAL, usable by the kernel)
	CPUs            []int  // from nodeN/cpulist
	MemTotal        uint64 // bytes, from nodeN/meminfo
	MemFree         uint64 // bytes, from nodeN/meminfo
	Tier            int    // memory tier id (memory_tierN; DRAM is 4, smaller is faster), -1 if unknown
	Distances       []int  // SLIT row from nodeN/distance, indexed like Topology.Nodes
}

// CPULess reports whether the node has memory and no CPUs, the way CXL
// type-3 memory appears (Linux Documentation/driver-api/cxl/).
func (n Node) CPULess() bool { return n.HasMemory && !n.HasCPU }

// Topology is a snapshot of the machine's NUMA layout.
type Topology struct {
	Root  string // sysfs root it was read from
	Nodes []Node // online nodes, ascending ID
	index map[int]int
}

// ReadTopology reads the topology from /sys.
func ReadTopology() (*Topology, error) { return ReadTopologyFrom(DefaultSysfsRoot) }

// ReadTopologyFrom reads the topology from a sysfs tree rooted at root
// (root/devices/system/node, root/devices/virtual/memory_tiering).
func ReadTopologyFrom(root string) (*Topology, error) {
	if root == "" {
		root = DefaultSysfsRoot
	}
	nodeDir := filepath.Join(root, "devices", "system", "node")
	online, err := readList(filepath.Join(nodeDir, "online"))
	if errors.Is(err, fs.ErrNotExist) {
		// Kernels without CONFIG_NUMA have no node directory: one node 0.
		if _, serr := os.Stat(nodeDir); serr != nil {
			online, err = []int{0}, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTopology, err)
	}
	hasCPU := optionalSet(filepath.Join(nodeDir, "has_cpu"))
	hasMem := optionalSet(filepath.Join(nodeDir, "has_memory"))
	hasNormal := optionalSet(filepath.Join(nodeDir, "has_normal_memory"))
	tiers, err := readTiers(filepath.Join(root, "devices", "virtual", "memory_tiering"))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTopology, err)
	}

	t := &Topology{Root: root, index: make(map[int]int, len(online))}
	for i, id := range online {
		dir := filepath.Join(nodeDir, "node"+strconv.Itoa(id))
		n := Node{ID: id, Tier: -1}
		if tier, ok := tiers[id]; ok {
			n.Tier = tier
		}
		if n.CPUs, err = readList(filepath.Join(dir, "cpulist")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: node %d cpulist: %v", ErrTopology, id, err)
		}
		if n.MemTotal, n.MemFree, err = readMeminfo(filepath.Join(dir, "meminfo")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: node %d meminfo: %v", ErrTopology, id, err)
		}
		n.HasCPU = setOr(hasCPU, id, len(n.CPUs) > 0)
		n.HasMemory = setOr(hasMem, id, n.MemTotal > 0)
		n.HasNormalMemory = setOr(hasNormal, id, n.HasMemory)
		if n.Distances, err = readInts(filepath.Join(dir, "distance")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: node %d distance: %v", ErrTopology, id, err)
		}
		t.Nodes = append(t.Nodes, n)
		t.index[id] = i
	}
	return t, nil
}

// Node returns the node with the given id.
func (t *Topology) Node(id int) (Node, bool) {
	i, ok := t.index[id]
	if !ok {
		return Node{}, false
	}
	return t.Nodes[i], true
}

// IDs lists the online node ids.
func (t *Topology) IDs() []int {
	ids := make([]int, len(t.Nodes))
	for i, n := range t.Nodes {
		ids[i] = n.ID
	}
	return ids
}

// MemoryIDs lists the nodes that have memory.
func (t *Topology) MemoryIDs() []int {
	var ids []int
	for _, n := range t.Nodes {
		if n.HasMemory {
			ids = append(ids, n.ID)
		}
	}
	return ids
}

// Distance returns the SLIT distance from node a to node b (10 = local),
// or -1 when either node or the entry is unknown. The kernel's distance
// file lists one entry per online node, in ascending node order.
func (t *Topology) Distance(a, b int) int {
	ia, oka := t.index[a]
	ib, okb := t.index[b]
	if !oka || !okb || ib >= len(t.Nodes[ia].Distances) {
		return -1
	}
	return t.Nodes[ia].Distances[ib]
}

// nearestCPUDistance is the smallest distance from any node with CPUs to id.
func (t *Topology) nearestCPUDistance(id int) int {
	best := -1
	for _, n := range t.Nodes {
		if !n.HasCPU {
			continue
		}
		if d := t.Distance(n.ID, id); d >= 0 && (best < 0 || d < best) {
			best = d
		}
	}
	return best
}

// CXLCandidates lists memory nodes without CPUs, best first: by memory tier
// (smaller is faster; unknown tiers last), then by the distance from the
// nearest CPU node (unknown last), then by id.
func (t *Topology) CXLCandidates() []int {
	type cand struct{ id, tier, dist int }
	var cs []cand
	for _, n := range t.Nodes {
		if n.CPULess() {
			cs = append(cs, cand{n.ID, n.Tier, t.nearestCPUDistance(n.ID)})
		}
	}
	unknownLast := func(v int) int {
		if v < 0 {
			return int(^uint(0) >> 1)
		}
		return v
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if c := unknownLast(a.tier) - unknownLast(b.tier); c != 0 {
			return sign(c)
		}
		if c := unknownLast(a.dist) - unknownLast(b.dist); c != 0 {
			return sign(c)
		}
		return a.id - b.id
	})
	ids := make([]int, len(cs))
	for i, c := range cs {
		ids[i] = c.id
	}
	return ids
}

func sign(v int) int {
	switch {
	case v < 0:
		return -1
	case v > 0:
		return 1
	}
	return 0
}

// WarmNode is the node the warm tier uses when configured with AutoNode:
// the first CXL candidate, else Unbound (-1). reason says why, in words.
func (t *Topology) WarmNode() (node int, reason string) {
	c := t.CXLCandidates()
	if len(c) == 0 {
		return Unbound, "no CPU-less memory node (no CXL memory found): the warm arena runs unbound"
	}
	n, _ := t.Node(c[0])
	tier := "unknown tier"
	if n.Tier >= 0 {
		tier = fmt.Sprintf("memory tier %d", n.Tier)
	}
	return c[0], fmt.Sprintf("first CXL candidate: CPU-less memory node, %s, distance %d from the nearest CPU node",
		tier, t.nearestCPUDistance(c[0]))
}

// WarmNodeFor resolves a configured warm-tier node (a node id, Unbound or
// AutoNode) to the node an arena would bind to, with the reason, or the
// error NewArena would report for it (before any syscall).
func (t *Topology) WarmNodeFor(node int) (int, string, error) {
	switch {
	case node == AutoNode:
		n, reason := t.WarmNode()
		return n, "auto: " + reason, nil
	case node == Unbound:
		return Unbound, "configured unbound", nil
	}
	if err := t.checkNode(node); err != nil {
		return Unbound, "", err
	}
	n, _ := t.Node(node)
	kind := "a node with CPUs, not CXL memory"
	if n.CPULess() {
		kind = "a CPU-less memory node"
	}
	return node, "configured; " + kind, nil
}

// checkNode returns nil when id is an online node with memory, else an error
// naming the node and listing what exists.
func (t *Topology) checkNode(id int) error {
	n, ok := t.Node(id)
	if !ok {
		return fmt.Errorf("%w: node %d does not exist; online nodes: %s, nodes with memory: %s",
			ErrNoSuchNode, id, formatList(t.IDs()), formatList(t.MemoryIDs()))
	}
	if !n.HasMemory {
		return fmt.Errorf("%w: node %d has no memory; nodes with memory: %s",
			ErrNoMemory, id, formatList(t.MemoryIDs()))
	}
	return nil
}

func readList(path string) ([]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseList(string(b))
}

// optionalSet reads a node list file; nil when absent (older kernels lack
// has_memory/has_cpu), in which case callers infer from per-node files.
func optionalSet(path string) map[int]bool {
	ids, err := readList(path)
	if err != nil {
		return nil
	}
	m := make(map[int]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

func setOr(set map[int]bool, id int, fallback bool) bool {
	if set == nil {
		return fallback
	}
	return set[id]
}

func readInts(path string) ([]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		v, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("bad integer %q", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// readMeminfo parses "Node 0 MemTotal:  3892984 kB" lines.
func readMeminfo(path string) (total, free uint64, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || f[0] != "Node" {
			continue
		}
		var dst *uint64
		switch f[2] {
		case "MemTotal:":
			dst = &total
		case "MemFree:":
			dst = &free
		default:
			continue
		}
		v, perr := strconv.ParseUint(f[3], 10, 64)
		if perr != nil {
			return 0, 0, fmt.Errorf("bad %s value %q", f[2], f[3])
		}
		mult := uint64(1)
		if len(f) >= 5 && strings.EqualFold(f[4], "kB") {
			mult = 1024
		}
		*dst = v * mult
	}
	return total, free, sc.Err()
}

// readTiers maps node id -> tier id from memory_tierN/nodelist (or the
// older "nodes" attribute: mm/memory-tiers.c,
// Documentation/ABI/testing/sysfs-kernel-mm-memory-tiers). A missing
// directory means the kernel has no memory tiering: an empty map.
func readTiers(dir string) (map[int]int, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return map[int]int{}, nil
	}
	if err != nil {
		return nil, err
	}
	tiers := map[int]int{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "memory_tier") {
			continue
		}
		tier, err := strconv.Atoi(strings.TrimPrefix(name, "memory_tier"))
		if err != nil {
			continue
		}
		ids, err := readList(filepath.Join(dir, name, "nodelist"))
		if errors.Is(err, fs.ErrNotExist) {
			ids, err = readList(filepath.Join(dir, name, "nodes"))
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		for _, id := range ids {
			tiers[id] = tier
		}
	}
	return tiers, nil
}

package tcptarget

import (
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/tiercache/tiercache/nvmekv"
)

// NamespaceStore creates, opens and removes the storage behind managed
// namespaces (what `tiercache kvtarget -dir` keeps in one emulated
// namespace file each).
type NamespaceStore interface {
	// Create makes a new, empty namespace of size bytes for nsid,
	// replacing whatever an earlier namespace of that NSID left.
	Create(nsid uint32, size int64) (nvmekv.Namespace, error)
	// Open opens the existing namespace of nsid (created with size).
	Open(nsid uint32, size int64) (nvmekv.Namespace, error)
	// Remove deletes the storage of nsid (closed already).
	Remove(nsid uint32) error
}

// NamespaceOptions turn Namespace Management and Attachment on: the
// target starts with the namespaces recorded in StatePath and hosts
// create, attach, detach and delete them with the admin commands.
type NamespaceOptions struct {
	// Store holds the namespaces' data; required.
	Store NamespaceStore
	// StatePath is the file the namespace table is kept in (created when
	// missing, rewritten atomically before a change is acknowledged);
	// required.
	StatePath string
	// Capacity is the NVM subsystem's capacity in bytes (Identify
	// Controller TNVMCAP); the namespaces' sizes add up to at most this.
	// Required.
	Capacity int64
	// Granularity rounds every namespace size up (the store's allocation
	// unit); default 1 MiB.
	Granularity int64
	// MinBytes is the smallest namespace; default 4 × Granularity.
	MinBytes int64
	// MaxNamespaces is Identify Controller NN, the largest NSID; default
	// 32, at most 1024.
	MaxNamespaces int
}

func (o *NamespaceOptions) ensureDefaults() {
	if o.Granularity == 0 {
		o.Granularity = 1 << 20
	}
	if o.MinBytes == 0 {
		o.MinBytes = 4 * o.Granularity
	}
	if o.MaxNamespaces == 0 {
		o.MaxNamespaces = 32
	}
}

func (o *NamespaceOptions) validate(bad func(string, ...any)) {
	if o.Store == nil || o.StatePath == "" {
		bad("Namespaces.Store and Namespaces.StatePath are required")
	}
	if o.Granularity < 4096 || o.MinBytes < o.Granularity || o.Capacity < o.MinBytes {
		bad("Namespaces: Capacity %d, Granularity %d and MinBytes %d must satisfy 4096 <= Granularity <= MinBytes <= Capacity", o.Capacity, o.Granularity, o.MinBytes)
	}
	if o.MaxNamespaces < 1 || o.MaxNamespaces > 1024 {
		bad("Namespaces.MaxNamespaces %d must be 1..1024", o.MaxNamespaces)
	}
}

// nsEntry is one allocated namespace.
type nsEntry struct {
	rec nsRecord
	// use is held shared by every command running on the namespace and
	// exclusively by its deletion, which closes ns once nothing runs.
	use     sync.RWMutex
	ns      nvmekv.Namespace
	gone    bool // deleted (under use)
	pending bool // being created: its NSID and capacity are taken, nobody sees it yet
}

// attachedTo reports whether hostNQN's controllers see the namespace.
func (e *nsEntry) attachedTo(hostNQN string) bool {
	return !e.pending && (e.rec.AllHosts || slices.Contains(e.rec.Hosts, hostNQN))
}

// nsTable is the subsystem's namespaces: one fixed namespace (NSID 1, the
// Options.Namespace of a target without Namespace Management, attached to
// every host) or the managed ones.
type nsTable struct {
	managed *NamespaceOptions // nil: the fixed namespace only
	nqn     string

	mu      sync.Mutex
	entries map[uint32]*nsEntry
}

func newFixedTable(nqn string, ns nvmekv.Namespace) *nsTable {
	e := &nsEntry{ns: ns, rec: nsRecord{NSID: nsidKV, Size: int64(ns.Limits().Capacity), UUID: nsUUID(nqn, nsidKV), AllHosts: true}}
	return &nsTable{nqn: nqn, entries: map[uint32]*nsEntry{nsidKV: e}}
}

// openManagedTable reads the state file and opens every namespace in it.
func openManagedTable(nqn string, o *NamespaceOptions) (*nsTable, error) {
	st, err := loadState(o.StatePath)
	if err != nil {
		return nil, err
	}
	if st.NQN != "" && st.NQN != nqn {
		return nil, fmt.Errorf("%w: %s belongs to subsystem %s, this target serves %s", ErrState, o.StatePath, st.NQN, nqn)
	}
	var used int64
	seen := map[uint32]bool{}
	for _, r := range st.Namespaces {
		used += r.Size
		if r.NSID == 0 || int(r.NSID) > o.MaxNamespaces || seen[r.NSID] {
			return nil, fmt.Errorf("%w: %s lists NSID %d, outside 1..%d or twice", ErrState, o.StatePath, r.NSID, o.MaxNamespaces)
		}
		seen[r.NSID] = true
	}
	if used > o.Capacity {
		return nil, fmt.Errorf("%w: the namespaces of %s hold %d bytes, more than the capacity %d; nothing was changed", ErrState, o.StatePath, used, o.Capacity)
	}
	t := &nsTable{managed: o, nqn: nqn, entries: map[uint32]*nsEntry{}}
	for _, r := range st.Namespaces {
		ns, err := o.Store.Open(r.NSID, r.Size)
		if err != nil {
			t.close()
			return nil, fmt.Errorf("tcptarget: open namespace %d: %w", r.NSID, err)
		}
		t.entries[r.NSID] = &nsEntry{rec: r, ns: ns}
	}
	return t, nil
}

// close closes every namespace the table opened (managed ones only: the
// fixed namespace is the caller's).
func (t *nsTable) close() error {
	if t.managed == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var errs []error
	for _, e := range t.entries {
		e.use.Lock()
		if !e.gone && e.ns != nil {
			e.gone = true
			errs = append(errs, e.ns.Close())
		}
		e.use.Unlock()
	}
	return errors.Join(errs...)
}

// acquire returns the namespace nsid if hostNQN's controllers see it (or
// anyHost: for its Identify data), held until release; nil if it is not
// active for them.
func (t *nsTable) acquire(nsid uint32, hostNQN string, anyHost bool) (e *nsEntry, release func()) {
	t.mu.Lock()
	e = t.entries[nsid]
	if e == nil || e.pending || !anyHost && !e.attachedTo(hostNQN) {
		t.mu.Unlock()
		return nil, nil
	}
	e.use.RLock()
	t.mu.Unlock()
	if e.gone {
		e.use.RUnlock()
		return nil, nil
	}
	return e, e.use.RUnlock
}

// active reports whether namespace nsid is attached to hostNQN.
func (t *nsTable) active(nsid uint32, hostNQN string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.entries[nsid]
	return e != nil && e.attachedTo(hostNQN)
}

// lookup returns the allocated namespace nsid's record.
func (t *nsTable) lookup(nsid uint32) (nsRecord, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.entries[nsid]; e != nil && !e.pending {
		return e.rec.clone(), true
	}
	return nsRecord{}, false
}

// maxNSID is Identify Controller NN.
func (t *nsTable) maxNSID() uint32 {
	if t.managed == nil {
		return nsidKV
	}
	return uint32(t.managed.MaxNamespaces)
}

// list returns the NSIDs greater than after, ascending: every allocated
// one, or (hostNQN != "") those active for hostNQN.
func (t *nsTable) list(after uint32, hostNQN string, allocated bool) []uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	var ids []uint32
	for id, e := range t.entries {
		if id > after && !e.pending && (allocated || e.attachedTo(hostNQN)) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// capacity is TNVMCAP and UNVMCAP in bytes (0, 0 without management).
func (t *nsTable) capacity() (total, unallocated int64) {
	if t.managed == nil {
		return 0, 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.managed.Capacity, t.managed.Capacity - t.usedLocked()
}

func (t *nsTable) usedLocked() int64 {
	var n int64
	for _, e := range t.entries {
		n += e.rec.Size
	}
	return n
}

// flushAll flushes every namespace (a controller's shutdown).
func (t *nsTable) flushAll(flush func(nvmekv.Namespace) error) error {
	t.mu.Lock()
	es := make([]*nsEntry, 0, len(t.entries))
	for _, e := range t.entries {
		if !e.pending {
			es = append(es, e)
		}
	}
	t.mu.Unlock()
	var errs []error
	for _, e := range es {
		e.use.RLock()
		if !e.gone {
			errs = append(errs, flush(e.ns))
		}
		e.use.RUnlock()
	}
	return errors.Join(errs...)
}

// saveLocked writes the table to the state file.
func (t *nsTable) saveLocked() error {
	st := state{Version: stateVersion, NQN: t.nqn, Capacity: t.managed.Capacity}
	for _, id := range slices.Sorted(maps.Keys(t.entries)) {
		if e := t.entries[id]; !e.pending {
			st.Namespaces = append(st.Namespaces, e.rec)
		}
	}
	return saveState(t.managed.StatePath, &st)
}

// create allocates a namespace of size bytes (rounded up to the
// granularity): the lowest free NSID, new random NGUID and UUID, attached
// to nobody. The state file is written before it returns.
func (t *nsTable) create(size int64) (uint32, uint16) {
	o := t.managed
	size = (size + o.Granularity - 1) / o.Granularity * o.Granularity
	if size < o.MinBytes {
		size = o.MinBytes
	}
	t.mu.Lock()
	if size > o.Capacity-t.usedLocked() {
		t.mu.Unlock()
		return 0, scNSInsufficientCap | scDNR
	}
	nsid := uint32(0)
	for id := uint32(1); id <= uint32(o.MaxNamespaces); id++ {
		if t.entries[id] == nil {
			nsid = id
			break
		}
	}
	if nsid == 0 {
		t.mu.Unlock()
		return 0, scNSIDUnavailable | scDNR
	}
	e := &nsEntry{rec: nsRecord{NSID: nsid, Size: size}, pending: true}
	rand.Read(e.rec.NGUID[:])
	rand.Read(e.rec.UUID[:])
	e.rec.UUID[6], e.rec.UUID[8] = e.rec.UUID[6]&0x0f|0x40, e.rec.UUID[8]&0x3f|0x80 // RFC 9562 version 4
	t.entries[nsid] = e                                                             // the NSID and the capacity are taken while the store is made
	t.mu.Unlock()
	ns, err := o.Store.Create(nsid, size)
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		delete(t.entries, nsid)
		return 0, scInternal
	}
	e.ns, e.pending = ns, false
	if err := t.saveLocked(); err != nil {
		delete(t.entries, nsid)
		ns.Close()
		o.Store.Remove(nsid)
		return 0, scInternal
	}
	return nsid, scSuccess
}

// remove deletes namespace nsid (every one for NSID FFFFFFFFh) once no
// command runs on it, and returns the hosts it was attached to.
func (t *nsTable) remove(nsid uint32) ([]string, uint16) {
	t.mu.Lock()
	var victims []*nsEntry
	for id, e := range t.entries {
		if !e.pending && (id == nsid || nsid == nsidAll) {
			victims = append(victims, e)
		}
	}
	if len(victims) == 0 {
		t.mu.Unlock()
		return nil, scInvalidNS | scDNR
	}
	for _, e := range victims {
		delete(t.entries, e.rec.NSID)
	}
	if err := t.saveLocked(); err != nil {
		for _, e := range victims {
			t.entries[e.rec.NSID] = e
		}
		t.mu.Unlock()
		return nil, scInternal
	}
	t.mu.Unlock()
	var hosts []string
	for _, e := range victims {
		e.use.Lock() // waits for the commands running on it
		e.gone = true
		e.ns.Close()
		e.use.Unlock()
		t.managed.Store.Remove(e.rec.NSID)
		hosts = append(hosts, e.rec.Hosts...)
	}
	return hosts, scSuccess
}

// attach makes namespace nsid visible to host (private namespaces: to one
// host at most); detach hides it again.
func (t *nsTable) attach(nsid uint32, host string, on bool) uint16 {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.entries[nsid]
	if e == nil || e.pending {
		return scInvalidField | scDNR
	}
	old := e.rec.Hosts
	switch attached := slices.Contains(old, host); {
	case on && attached:
		return scNSAlreadyAttached | scDNR
	case on && len(old) > 0:
		return scNSIsPrivate | scDNR
	case on:
		e.rec.Hosts = []string{host}
	case !attached:
		return scNSNotAttached | scDNR
	default:
		e.rec.Hosts = slices.DeleteFunc(slices.Clone(old), func(h string) bool { return h == host })
	}
	if err := t.saveLocked(); err != nil {
		e.rec.Hosts = old
		return scInternal
	}
	return scSuccess
}

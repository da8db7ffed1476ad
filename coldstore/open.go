package coldstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/numa"
	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu"
	"github.com/tiercache/tiercache/uring"
)

// Config configures the cold store. Zero values take the defaults.
type Config struct {
	// Mode is "emulated" (the nvmekv emulated namespace on a file or
	// block device), "nvme" (the emulated namespace's log on an ordinary
	// NVMe namespace at Device, through NVM passthrough) or "passthrough"
	// (a KV SSD at Device). Default "emulated".
	Mode string
	// DataDir holds the emulated store (Path defaults to DataDir/cold.kv).
	DataDir string
	// Path is the emulated store's file or block device.
	Path string
	// Device is the NVMe generic char device (/dev/ngXnY) of Mode nvme or
	// passthrough.
	Device string
	// IOPoll and SQPoll (Mode emulated or nvme): polled read rings
	// (IORING_SETUP_IOPOLL; the NVMe driver needs poll queues) and an
	// SQPOLL thread on the main ring (emu.Options.IOPoll, SQPoll).
	IOPoll, SQPoll bool
	// Capacity is the emulated store's size in bytes (0: the emulator's
	// default, 1 GiB for a new file, the existing size otherwise).
	Capacity int64
	// RegionBytes is the emulated log region size (0: emulator default).
	RegionBytes int
	// Strict makes a full emulated store fail writes (capacity exceeded,
	// like a KV SSD) instead of reclaiming its oldest region. Open also
	// runs Strict when Params.Strict asks for it (writethrough, tier T29).
	Strict bool
	// StallAfter is how long one device I/O may be in flight before it is
	// logged and counted as stalled (Stats.StalledIO). Default 30 s;
	// negative = off; otherwise at least uring.MinStallAfter.
	StallAfter time.Duration
	// Progress, if set, is called while Open rebuilds the emulated store's
	// index (Mode emulated or nvme): from the checkpoint or by scanning
	// every region, with the bytes read of how many, the keys found so far
	// and the time taken, and once more when done (emu Options.Progress,
	// logstore E27). Open waits for it: it must not block for long.
	Progress func(emu.Progress)
	// IndexNode is the NUMA node the emulated store's index tables that
	// live off the Go heap are bound to with mbind as each is mapped
	// (Mode emulated or nvme; a KV SSD keeps its own index): numa.AutoNode
	// (-2) for Params.WarmNode (unbound when that is -1), numa.Unbound
	// (-1), or a node id, which must exist and have memory or Open fails.
	// The zero value is node 0. A table that cannot be bound stays
	// unbound: logged once, counted (Stats.IndexBindErrors), never fatal
	// (CS2, logstore E28).
	IndexNode int
	// SysfsRoot is where IndexNode's node is looked up (default
	// numa.DefaultSysfsRoot; a test seam).
	SysfsRoot string

	// Tenants give tenants (backend.Params.Tenants, by name) cold
	// namespaces of their own (multi.go, docs/DESIGN.md §3.5): with any,
	// the emulated store is a volume (nvmekv/emu/volume) of named
	// namespaces on Path or Device, and a KV SSD's tenants get KV
	// namespaces of their own through Namespace Management (nsadmin).
	// A tenant not listed shares the default namespace.
	Tenants []TenantSpace
	// DefaultBytes is the default namespace's size in a new volume (0:
	// what the tenants' namespaces leave of Capacity; the volume then has
	// no free space for a tenant added later unless it grows: a file
	// volume grows with Capacity).
	DefaultBytes int64
	// DropRemoved deletes, at Open, the namespaces of tenants no longer
	// configured (by default they are kept, their keys still routed to
	// them, until DropTenant; CS8).
	DropRemoved bool
	// Controller is a KV SSD's controller, /dev/nvmeX, for its tenants'
	// namespaces (default: the controller of Device, /dev/ngXnY).
	Controller string
	// Registry records the namespaces this host created on a KV SSD
	// (nsadmin.Manager.RegistryPath; default DataDir/namespaces.json).
	Registry string
	// DeviceWait bounds the wait for a new KV namespace's /dev/ngXnY
	// (default 30 s).
	DeviceWait time.Duration
	// Cut lays out a large aggregate for the cold tier in pieces (the
	// sidecar's: the server's per-kind layouts), so a read of a few of its
	// items reads a few blocks (backend.Pieces, nvmekv K21, CS9); nil
	// stores every value whole.
	Cut backend.CutFunc
}

// TenantSpace is a tenant's cold namespace.
type TenantSpace struct {
	// Name is the tenant's (backend.Tenant.Name).
	Name string
	// Bytes is its quota of device capacity: the namespace is made this
	// size (an emulated namespace: rounded up to whole MiB, its log whole
	// regions of it) and never grows; an existing one of another size is
	// refused. 0 with Namespace: whatever size it has.
	Bytes int64
	// Namespace takes an existing namespace instead of the tenant's own
	// name: a volume namespace's name, or a KV SSD namespace's NSID
	// (claimed, never deleted, nsadmin NA2). Its tenant record must name
	// the tenant's prefix.
	Namespace string
}

func (c *Config) ensureDefaults() {
	if c.Mode == "" {
		c.Mode = "emulated"
	}
	if c.Mode == "emulated" && c.Path == "" && c.DataDir != "" {
		c.Path = filepath.Join(c.DataDir, "cold.kv")
	}
}

// Validate reports every invalid field at once.
func (c Config) Validate() error {
	c.ensureDefaults()
	var errs []error
	switch c.Mode {
	case "emulated":
		if c.Path == "" {
			errs = append(errs, fmt.Errorf("%w: Mode emulated needs DataDir or Path", ErrInvalidConfig))
		}
	case "passthrough", "nvme":
		if c.Device == "" {
			errs = append(errs, fmt.Errorf("%w: Mode %s needs Device", ErrInvalidConfig, c.Mode))
		}
	default:
		errs = append(errs, fmt.Errorf("%w: Mode %q is not emulated, nvme or passthrough", ErrInvalidConfig, c.Mode))
	}
	if (c.IOPoll || c.SQPoll) && c.Mode != "nvme" && c.Mode != "emulated" {
		errs = append(errs, fmt.Errorf("%w: IOPoll and SQPoll apply to Mode emulated or nvme, not %s", ErrInvalidConfig, c.Mode))
	}
	if c.Capacity < 0 {
		errs = append(errs, fmt.Errorf("%w: Capacity %d must not be negative", ErrInvalidConfig, c.Capacity))
	}
	if c.IndexNode < numa.AutoNode {
		errs = append(errs, fmt.Errorf("%w: IndexNode %d is not a node id, numa.Unbound (-1) or numa.AutoNode (-2)", ErrInvalidConfig, c.IndexNode))
	}
	errs = append(errs, c.validateTenants()...)
	errs = append(errs, c.validateSpace()...)
	if c.StallAfter > 0 && c.StallAfter < uring.MinStallAfter {
		errs = append(errs, fmt.Errorf("%w: StallAfter %v must be at least %v, or negative (off)", ErrInvalidConfig, c.StallAfter, uring.MinStallAfter))
	}
	return errors.Join(errs...)
}

// Open opens the cold store c describes, with nvmekv.KV on top, for a
// tier that asks p of it: a *Store, or a *Multi when tenants have
// namespaces of their own (Config.Tenants, or a volume or registry that
// holds tenant namespaces already).
func Open(c Config, p backend.Params) (backend.Store, error) {
	c.ensureDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if p.Logger == nil {
		p.Logger = zap.NewNop()
	}
	multi, err := c.tenantSpaces(p)
	switch {
	case err != nil:
		return nil, err
	case multi:
		return openMulti(c, p)
	}
	st, err := openOne(c, p)
	if err != nil {
		return nil, err // not a typed nil
	}
	if len(p.Tenants) > 0 {
		return single(st, p), nil // per-tenant figures on the one namespace
	}
	return st, nil
}

// openOne opens one namespace as the whole store.
func openOne(c Config, p backend.Params) (*Store, error) {
	var ns nvmekv.Namespace
	var name string
	var index *indexPlace
	switch c.Mode {
	case "emulated", "nvme":
		if c.DataDir != "" && c.Mode == "emulated" {
			if err := os.MkdirAll(c.DataDir, 0o755); err != nil {
				return nil, fmt.Errorf("coldstore: create data dir: %w", err)
			}
		}
		path, nvme := c.Path, c.Mode == "nvme"
		if nvme {
			path = c.Device
		}
		e, ip, err := c.openEmu(p, emu.Options{Path: path, NVMe: nvme, Capacity: c.Capacity})
		index = ip
		if nvme {
			if err != nil {
				return nil, fmt.Errorf("coldstore: open the emulated namespace on NVMe namespace %s: %w", path, err)
			}
			ns, name = e, "nvme:"+path
			break
		}
		if errors.Is(err, emu.ErrFormat) {
			return nil, fmt.Errorf("coldstore: open emulated namespace %s: %w (the cold tier is a cache: to start it empty, "+
				"move %s and %s.ckpt away or use another data directory)", c.Path, err, c.Path, c.Path)
		}
		if err != nil {
			return nil, fmt.Errorf("coldstore: open emulated namespace %s: %w", c.Path, err)
		}
		ns, name = e, "emulated:"+c.Path
	case "passthrough":
		pt, err := c.openPassthrough(p, c.Device)
		if err != nil {
			return nil, err
		}
		ns, name = pt, "passthrough:"+c.Device
	}
	return newStore(c, p, ns, name, index)
}

// openEmu opens an emulated namespace with the options c and p imply over
// o's place (Path, NVMe and Capacity, or Device and CheckpointPath).
func (c Config) openEmu(p backend.Params, o emu.Options) (*emu.Namespace, *indexPlace, error) {
	// A strict store copies live records forward instead of reclaiming
	// its oldest region, so no acknowledged write is dropped (T29).
	o.Mode = emu.Cache
	if c.Strict || p.Strict {
		o.Mode = emu.Strict
	}
	binder, err := c.indexBinder(p.WarmNode)
	if err != nil {
		return nil, nil, err
	}
	index := &indexPlace{binder: binder}
	if binder != nil {
		o.BindIndex = binder.Bind
	}
	o.RegionBytes, o.ReadSlots, o.RingEntries = c.RegionBytes, readSlots(p.Batch), ringEntries(p.Batch)
	o.IOPoll, o.SQPoll, o.StallAfter, o.Progress, o.Logger = c.IOPoll, c.SQPoll, c.StallAfter, c.Progress, p.Logger
	e, err := emu.Open(o)
	return e, index, err
}

// openPassthrough opens a KV SSD's namespace.
func (c Config) openPassthrough(p backend.Params, device string) (*nvmekv.Passthrough, error) {
	pt, err := nvmekv.OpenPassthrough(device, nvmekv.PassthroughOptions{RingEntries: ringEntries(p.Batch),
		StallAfter: c.StallAfter, Logger: p.Logger})
	if err != nil {
		return nil, fmt.Errorf("coldstore: open KV namespace %s: %w", device, err)
	}
	return pt, nil
}

// newStore puts nvmekv.KV on ns as a Store (it closes ns on failure).
func newStore(c Config, p backend.Params, ns nvmekv.Namespace, name string, index *indexPlace) (*Store, error) {
	strict := c.Strict || p.Strict
	total, err := earlierKeys(ns)
	if err != nil {
		_ = ns.Close()
		return nil, fmt.Errorf("coldstore: list %s: %w", name, err)
	}
	// The directory decides expiry (tier T17): a cold copy is served at the
	// entry's version whatever expiry it was written with.
	kv, err := nvmekv.NewKV(ns, nvmekv.KVOptions{MaxValueBytes: int64(p.MaxValue), KeepExpired: true, Logger: p.Logger})
	if err != nil {
		_ = ns.Close()
		return nil, fmt.Errorf("coldstore: KV over %s: %w", name, err)
	}
	// A KV SSD fails a write it has no room for (Capacity Exceeded): it
	// never drops a live record by itself.
	st := &Store{kv: kv, name: name, preExisting: total > 0, maxValue: p.MaxValue, index: index,
		strict: strict || c.Mode == "passthrough", cut: c.Cut}
	if c.Mode == "passthrough" {
		st.index = nil
	}
	return st, nil
}

// earlierKeys reports whether ns may hold keys of an earlier run (more
// than 0): any record but the flush floor's (floor.go) and the tenant
// record (tenantrec.go). An emulated namespace counts its records
// without reading them; a List there reads every region that holds a
// live inline record (its index keeps a tag of each key, logstore E8),
// which at 10M keys took 9 s of every Open. A KV SSD lists from its own
// index.
func earlierKeys(ns nvmekv.Namespace) (int, error) {
	if e, ok := ns.(interface{ Stats() emu.Stats }); ok && e.Stats().Items > 2 {
		return e.Stats().Items, nil
	}
	keys, total, err := ns.List(context.Background(), nil, 4096)
	if err != nil {
		return 0, err
	}
	if int(total) == len(keys) {
		for _, k := range keys {
			if bytes.Equal(k, floorKey) || bytes.Equal(k, tenantKey) {
				total--
			}
		}
	}
	return int(total), nil
}

// readSlots sizes the emulator's read slots (readpath.SlotBytes, 8 KiB
// each, registered, so resident while the store is open: 2 MiB for the
// default batch of 128):
// a batched lookup takes one slot per key of a wave, all or nothing, and
// waits in line while too few are free; twice the largest batch lets two
// concurrent GetManys read at once.
func readSlots(batch int) int { return max(128, 2*batch) }

// ringEntries sizes the emulator's ring: one submission must fit its SQ.
func ringEntries(batch int) uint32 {
	n := uint32(256)
	for n < uint32(2*batch) {
		n <<= 1
	}
	return n
}

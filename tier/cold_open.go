package tier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tiercache/tiercache/numa"
	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu"
	"github.com/tiercache/tiercache/uring"
)

// ColdConfig configures the built-in cold tier.
type ColdConfig struct {
	// ColdMode is "emulated" (the nvmekv emulated namespace on a file or
	// block device), "nvme" (the emulated namespace's log on an ordinary
	// NVMe namespace at ColdDevice, through NVM passthrough),
	// "passthrough" (a KV SSD at ColdDevice) or "none".
	// Default: "emulated" when DataDir or ColdPath is set, else "none".
	ColdMode string
	// DataDir holds the emulated store (ColdPath defaults to DataDir/cold.kv).
	DataDir string
	// ColdPath is the emulated store's file or block device.
	ColdPath string
	// ColdDevice is the passthrough char device (/dev/ngXnY).
	ColdDevice string
	// ColdIOPoll and ColdSQPoll (ColdMode "nvme"): polled read rings
	// (IORING_SETUP_IOPOLL; the NVMe driver needs poll queues) and an
	// SQPOLL thread on the main ring (emu.Options.IOPoll, SQPoll).
	ColdIOPoll, ColdSQPoll bool
	// ColdCapacity is the emulated store's size in bytes (0: the emulator's
	// default, 1 GiB for a new file, the existing size otherwise).
	ColdCapacity int64
	// ColdRegionBytes is the emulated log region size (0: emulator default).
	ColdRegionBytes int
	// ColdStrict makes a full emulated store fail writes (capacity exceeded,
	// like a KV SSD) instead of reclaiming its oldest region.
	ColdStrict bool
	// ColdStallAfter is how long one cold device I/O may be in flight
	// before it is logged and counted as stalled (Stats.ColdStalledIO).
	// Default 30 s; negative = off; otherwise at least uring.MinStallAfter.
	ColdStallAfter time.Duration
	// ColdProgress, if set, is called while Open rebuilds the emulated
	// store's index (ColdMode emulated or nvme): from the checkpoint or by
	// scanning every region, with the bytes read of how many, the keys
	// found so far and the time taken, and once more when done (emu
	// Options.Progress, logstore E27). Open waits for it: it must not
	// block for long.
	ColdProgress func(emu.Progress)
	// ColdIndexNode is the NUMA node the emulated store's index tables
	// that live off the Go heap (2 MiB and more, about 78,000 keys and
	// up) are bound to with mbind as each is mapped (ColdMode emulated or
	// nvme; a KV SSD keeps its own index): numa.AutoNode (-2) for the warm
	// arena's configured node (unbound without a warm tier or with warm
	// unbound), numa.Unbound (-1), or a node id, which must exist and
	// have memory or Open fails. The zero value is node 0, as WarmArena's
	// is; the sidecar's default (cold.index_node auto) is AutoNode. A
	// table that cannot be bound stays unbound: logged once, counted
	// (Stats.ColdIndexBindErrors), never fatal (T33, logstore E28).
	ColdIndexNode int
}

func (c *ColdConfig) ensureDefaults() {
	if c.ColdMode == "" {
		if c.DataDir != "" || c.ColdPath != "" {
			c.ColdMode = "emulated"
		} else {
			c.ColdMode = "none"
		}
	}
	if c.ColdMode == "emulated" && c.ColdPath == "" && c.DataDir != "" {
		c.ColdPath = filepath.Join(c.DataDir, "cold.kv")
	}
}

func (c *ColdConfig) enabled() bool {
	return c.ColdMode == "emulated" || c.ColdMode == "nvme" || c.ColdMode == "passthrough"
}

func (c *ColdConfig) validate() []error {
	var errs []error
	switch c.ColdMode {
	case "emulated":
		if c.ColdPath == "" {
			errs = append(errs, fmt.Errorf("%w: ColdMode emulated needs DataDir or ColdPath", ErrInvalidOptions))
		}
	case "passthrough", "nvme":
		if c.ColdDevice == "" {
			errs = append(errs, fmt.Errorf("%w: ColdMode %s needs ColdDevice", ErrInvalidOptions, c.ColdMode))
		}
	case "none":
	default:
		errs = append(errs, fmt.Errorf("%w: ColdMode %q is not emulated, nvme, passthrough or none", ErrInvalidOptions, c.ColdMode))
	}
	if (c.ColdIOPoll || c.ColdSQPoll) && c.ColdMode != "nvme" && c.ColdMode != "emulated" {
		errs = append(errs, fmt.Errorf("%w: ColdIOPoll and ColdSQPoll apply to ColdMode emulated or nvme, not %s", ErrInvalidOptions, c.ColdMode))
	}
	if c.ColdCapacity < 0 {
		errs = append(errs, fmt.Errorf("%w: ColdCapacity %d must not be negative", ErrInvalidOptions, c.ColdCapacity))
	}
	if c.ColdIndexNode < numa.AutoNode {
		errs = append(errs, fmt.Errorf("%w: ColdIndexNode %d is not a node id, numa.Unbound (-1) or numa.AutoNode (-2)", ErrInvalidOptions, c.ColdIndexNode))
	}
	if c.ColdStallAfter > 0 && c.ColdStallAfter < uring.MinStallAfter {
		errs = append(errs, fmt.Errorf("%w: ColdStallAfter %v must be at least %v, or negative (off)", ErrInvalidOptions, c.ColdStallAfter, uring.MinStallAfter))
	}
	return errs
}

// openCold opens the built-in cold tier: the emulated namespace (default)
// or a KV SSD through passthrough, with nvmekv.KV on top.
func (o *Options) openCold() (Cold, error) {
	var ns nvmekv.Namespace
	var backend string
	var index *coldIndex
	switch o.ColdMode {
	case "emulated", "nvme":
		if o.DataDir != "" && o.ColdMode == "emulated" {
			if err := os.MkdirAll(o.DataDir, 0o755); err != nil {
				return nil, fmt.Errorf("create data dir: %w", err)
			}
		}
		// Writethrough promises that an acknowledged write survives: the
		// store must not drop live records to make room (Cache mode
		// reclaims its oldest region), so it runs Strict, which copies them
		// forward instead (T29).
		mode := emu.Cache
		if o.ColdStrict || o.Durability == DurabilityWriteThrough {
			mode = emu.Strict
		}
		path, nvme := o.ColdPath, o.ColdMode == "nvme"
		if nvme {
			path = o.ColdDevice
		}
		binder, err := o.coldIndexBinder()
		if err != nil {
			return nil, err
		}
		index = &coldIndex{binder: binder}
		var bindIndex func([]byte) error
		if binder != nil {
			bindIndex = binder.Bind
		}
		e, err := emu.Open(emu.Options{Path: path, NVMe: nvme, Capacity: o.ColdCapacity, RegionBytes: o.ColdRegionBytes,
			Mode: mode, ReadSlots: readSlots(o.MGetColdBatch), RingEntries: ringEntries(o.MGetColdBatch),
			IOPoll: o.ColdIOPoll, SQPoll: o.ColdSQPoll, StallAfter: o.ColdStallAfter, Progress: o.ColdProgress,
			BindIndex: bindIndex, Logger: o.Logger})
		if nvme {
			if err != nil {
				return nil, fmt.Errorf("open the emulated namespace on NVMe namespace %s: %w", path, err)
			}
			ns, backend = e, "nvme:"+path
			break
		}
		if errors.Is(err, emu.ErrFormat) {
			return nil, fmt.Errorf("open emulated namespace %s: %w (the cold tier is a cache: to start it empty, "+
				"move %s and %s.ckpt away or use another data directory)", o.ColdPath, err, o.ColdPath, o.ColdPath)
		}
		if err != nil {
			return nil, fmt.Errorf("open emulated namespace %s: %w", o.ColdPath, err)
		}
		ns, backend = e, "emulated:"+o.ColdPath
	case "passthrough":
		p, err := nvmekv.OpenPassthrough(o.ColdDevice, nvmekv.PassthroughOptions{RingEntries: ringEntries(o.MGetColdBatch),
			StallAfter: o.ColdStallAfter, Logger: o.Logger})
		if err != nil {
			return nil, fmt.Errorf("open KV namespace %s: %w", o.ColdDevice, err)
		}
		ns, backend = p, "passthrough:"+o.ColdDevice
	default:
		return nil, fmt.Errorf("tier: cold mode %q has no built-in store", o.ColdMode)
	}
	total, err := earlierKeys(ns)
	if err != nil {
		_ = ns.Close()
		return nil, fmt.Errorf("list %s: %w", backend, err)
	}
	// The directory decides expiry (T17): a cold copy is served at the
	// entry's version whatever expiry it was written with.
	kv, err := nvmekv.NewKV(ns, nvmekv.KVOptions{MaxValueBytes: int64(o.MaxValue), KeepExpired: true, Logger: o.Logger})
	if err != nil {
		_ = ns.Close()
		return nil, fmt.Errorf("KV over %s: %w", backend, err)
	}
	return &coldKV{kv: kv, backend: backend, preExisting: total > 0, maxValue: o.MaxValue, index: index}, nil
}

// earlierKeys reports whether ns may hold keys of an earlier run (more
// than 0): any record but the flush floor's (floor.go). An emulated
// namespace counts its records without reading them; a List there reads
// every region that holds a live inline record (its index keeps a tag of
// each key, logstore E8), which at 10M keys took 9 s of every Open. A
// KV SSD lists from its own index.
func earlierKeys(ns nvmekv.Namespace) (int, error) {
	if e, ok := ns.(interface{ Stats() emu.Stats }); ok && e.Stats().Items != 1 {
		return e.Stats().Items, nil
	}
	keys, total, err := ns.List(context.Background(), nil, 4096)
	if err != nil {
		return 0, err
	}
	if total == 1 && len(keys) == 1 && bytes.Equal(keys[0], floorKey) {
		total = 0
	}
	return int(total), nil
}

// readSlots sizes the emulator's read slots (readpath.SlotBytes, 8 KiB
// each, registered, so resident while the store is open: 2 MiB for the
// default batch of 128):
// a batched lookup takes one slot per key of a wave, all or nothing, and
// waits in line while too few are free; twice the largest batch lets two
// concurrent MGets (Cache.coldMany) read at once.
func readSlots(batch int) int { return max(128, 2*batch) }

// ringEntries sizes the emulator's ring: one submission must fit its SQ.
func ringEntries(batch int) uint32 {
	n := uint32(256)
	for n < uint32(2*batch) {
		n <<= 1
	}
	return n
}

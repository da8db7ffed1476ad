package emu

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/nvmekv/emu/dev"
	"github.com/tiercache/tiercache/nvmekv/emu/logstore"
	"github.com/tiercache/tiercache/uring"
)

// Mode chooses what happens when the log is full.
type Mode = logstore.Mode

const (
	// Cache reclaims the oldest region (FIFO, no copying) and reports each
	// key it drops through OnReclaim.
	Cache = logstore.Cache
	// Strict returns Capacity Exceeded (SC 0x81) instead, as a KV SSD does;
	// only a region without live records is reused.
	Strict = logstore.Strict
)

// Progress is how far Open got rebuilding the index of an existing store
// (Options.Progress): from the checkpoint or by a scan of every region.
type Progress = logstore.Progress

// Options configure an emulated namespace.
type Options struct {
	// Path is a regular file (created if missing) or a block device.
	Path string
	// Capacity is the data area in bytes (rounded down to whole regions);
	// default: 1 GiB for a new file, the size of an existing file or
	// device minus the 4 KiB superblock.
	Capacity int64
	// RegionBytes is the log region size (a multiple of 4096, 64 KiB..64 MiB);
	// default 4 MiB. Must match an existing store.
	RegionBytes int
	// MaxValueBytes is the largest Store value (KVVML); default 1 MiB, at
	// most RegionBytes-4096 and 4 MiB-64.
	MaxValueBytes int
	// MaxKeys is reported as MNKS (0 = no maximum); it is not enforced.
	MaxKeys uint32
	// Mode is Cache (default) or Strict.
	Mode Mode
	// OnReclaim is called (Cache mode) for every key dropped by reclaiming
	// a region, after the namespace lock is released, on the goroutine
	// whose Store needed the space. It must not block for long.
	OnReclaim func(devKey [16]byte)
	// CheckpointPath is where Close writes the index so the next Open does
	// not scan; default Path+".ckpt" for a regular file, none ("") for a
	// block device (it is then always scanned). "-" disables checkpoints.
	CheckpointPath string
	// ExpectedItems sizes the DRAM index's tag index of inline records up
	// front (10 bytes a slot); default 4096 keys. It grows a segment at a
	// time, each by 1.1x at 92% load or split in two at 1 MiB (E35). The
	// table of extent records' keys starts at 1024 and grows by 1.5x at 90%
	// load, moving entries a few at a time (E25).
	ExpectedItems int
	// ReplayBatch is logstore's: 0 (the default) settles an Open by
	// scan's index changes by tag (E37); n > 0 replays them into a keyed
	// table n at a time (E36), the route BenchmarkOpen compares with.
	ReplayBatch int
	// SyncWrites makes every Do with a Store or Delete durable before it
	// returns (write-through); default false: call Flush.
	SyncWrites bool
	// ReadSlots is how many registered 8 KiB read slots serve Retrieves
	// (readpath.SlotBytes; a larger read takes a pooled heap buffer), and
	// the most reads one wave submits; default 128 (1 MiB).
	ReadSlots int
	// RingEntries is the size of the namespace's io_uring; default 256.
	RingEntries uint32
	// Sparse leaves a regular file's blocks unreserved (thin provisioning).
	// By default Open reserves them (fallocate) so that a filesystem too
	// small for Capacity fails Open with ENOSPC, not a later write; a
	// sparse store's writes fail with ENOSPC when the filesystem fills,
	// and the namespace is read-only until reopened.
	Sparse bool
	// Format allows formatting a device or file whose first 4 KiB are not
	// zero and hold no superblock (it would otherwise be refused, so a
	// mistyped path never destroys data). Default false.
	Format bool
	// NSID is the namespace id the commands carry; default 1.
	NSID uint32
	// Fault is a test seam: called before each region write or read is
	// submitted; a non-zero Errno makes that I/O fail with it (the device
	// is wrapped in a dev.Fault).
	Fault func(write bool, off int64, n int) syscall.Errno
	// Device is the storage to use instead of opening Path (a test seam:
	// a dev.Fault around another device). The namespace closes it.
	Device dev.Device
	// NVMe opens Path as an NVMe generic char device (/dev/ngXnY) of an
	// NVM namespace, driven by NVM passthrough (dev.OpenNVMe), instead of
	// as a file or block device.
	NVMe bool
	// IOPoll makes the rings that carry disk reads poll for completions
	// (IORING_SETUP_IOPOLL): needs O_DIRECT, and for NVMe the driver's
	// poll queues (nvme.poll_queues) to poll rather than take interrupts.
	// Writes stay on the interrupt-driven main ring.
	IOPoll bool
	// SQPoll gives the main ring a kernel submission thread
	// (IORING_SETUP_SQPOLL, which excludes SINGLE_ISSUER|DEFER_TASKRUN).
	SQPoll bool
	// StallAfter is how long one of the namespace's I/Os may be in flight
	// before it is logged and counted as stalled (uring.FrontOptions;
	// FrontStats().Stalled). Default 30 s; negative = off; otherwise at
	// least uring.MinStallAfter.
	StallAfter time.Duration
	// Progress, if set, is called on Open's goroutine while Open rebuilds
	// the index: after each region a scan replays, after each 4096
	// entries of a checkpoint, and once at the end with Finished set
	// (logstore E27). It must not block for long: Open waits for it.
	Progress func(Progress)
	// BindIndex, if set, places each index table that lives off the Go
	// heap (2 MiB and more) when it is mapped, before it is touched: tier
	// binds them to cold.index_node with mbind. A failure leaves that
	// table unbound, is logged once and counted (Stats.IndexBindErrors),
	// never fatal (logstore E28).
	BindIndex func(mem []byte) error
	// Logger defaults to zap.NewNop().
	Logger *zap.Logger
}

// Limits of the geometry.
const (
	blockBytes     = logstore.BlockBytes
	minRegionBytes = logstore.MinRegionBytes
	maxRegionBytes = logstore.MaxRegionBytes
)

// EnsureDefaults fills zero fields (Capacity is resolved at Open).
func (o *Options) EnsureDefaults() {
	if o.RegionBytes == 0 {
		o.RegionBytes = 4 << 20
	}
	if o.MaxValueBytes == 0 {
		o.MaxValueBytes = min(1<<20, o.RegionBytes-blockBytes)
	}
	if o.ReadSlots == 0 {
		o.ReadSlots = 128
	}
	if o.RingEntries == 0 {
		o.RingEntries = 256
	}
	if o.NSID == 0 {
		o.NSID = 1
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
}

// Validate reports every problem at once.
func (o *Options) Validate() error {
	var errs []error
	bad := func(f string, a ...any) {
		errs = append(errs, fmt.Errorf("%w: "+f, append([]any{ErrBadOptions}, a...)...))
	}
	if o.Path == "" && o.Device == nil {
		bad("Path is empty")
	}
	if o.Capacity < 0 {
		bad("Capacity %d is negative", o.Capacity)
	}
	if o.RegionBytes%blockBytes != 0 || o.RegionBytes < minRegionBytes || o.RegionBytes > maxRegionBytes {
		bad("RegionBytes %d must be a multiple of 4096 in %d..%d", o.RegionBytes, minRegionBytes, maxRegionBytes)
	}
	if o.MaxValueBytes < 1 || o.MaxValueBytes > o.RegionBytes-blockBytes || o.MaxValueBytes > logstore.MaxValueBytes {
		bad("MaxValueBytes %d must be in 1..min(RegionBytes-4096, %d)", o.MaxValueBytes, logstore.MaxValueBytes)
	}
	if o.Mode != Cache && o.Mode != Strict {
		bad("Mode %d is neither Cache nor Strict", o.Mode)
	}
	if o.ReadSlots < 1 {
		bad("ReadSlots %d must be at least 1", o.ReadSlots)
	}
	if o.ReplayBatch < 0 {
		bad("ReplayBatch %d is negative", o.ReplayBatch)
	}
	if o.ExpectedItems < 0 {
		bad("ExpectedItems %d is negative", o.ExpectedItems)
	}
	if o.StallAfter > 0 && o.StallAfter < uring.MinStallAfter {
		bad("StallAfter %v must be at least %v, or negative (off)", o.StallAfter, uring.MinStallAfter)
	}
	return errors.Join(errs...)
}

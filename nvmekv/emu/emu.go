package emu

import (
	"context"
	"errors"
	"sync"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu/dev"
	"github.com/tiercache/tiercache/nvmekv/emu/logstore"
	"github.com/tiercache/tiercache/nvmekv/emu/readpath"
	"github.com/tiercache/tiercache/nvmekv/emu/rings"
	"github.com/tiercache/tiercache/uring"
)

// Namespace is the emulated KV namespace: the command interpreter over the
// log (logstore), its read path (readpath), the rings (rings) and the
// device (dev). Safe for concurrent use.
type Namespace struct {
	nvmekv.Singles
	opts  Options
	log   *zap.Logger
	disk  dev.Device
	rg    *rings.Rings
	lg    *logstore.Log
	rd    *readpath.Reader
	calls sync.Pool // *call
}

// Stats are counters and gauges of a namespace: the log's (items, bytes,
// regions, the index's DRAM, reclaim, writes and syncs, Retrieves served
// from DRAM, recovery, the undo journal, why it is read-only), the read
// path's (device reads, where they ran, retries) and the I/O's.
type Stats struct {
	logstore.Stats
	readpath.Counters
	Direct bool // O_DIRECT in use
	Fixed  bool // registered buffers in use (fixed reads/writes, IORING_URING_CMD_FIXED)
	// BufferBytes is the DRAM the namespace's registered buffers hold while
	// it is open: the log's three region write buffers and the read slab.
	BufferBytes int
}

// Registered buffers of the namespace's rings, by index: the log's three
// region write buffers, then the read path's slab.
const (
	writeBuffers = 3
	slabBuffer   = writeBuffers
)

// Open opens (formatting if needed) the emulated namespace at opts.Path:
// the device, its rings with their registered buffers, the log on them
// (recovering the index) and the read path.
func Open(opts Options) (*Namespace, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	d, err := openDevice(&opts)
	if err != nil {
		return nil, err
	}
	if opts.Path == "" {
		opts.Path = d.Path()
	}
	e := &Namespace{opts: opts, log: opts.Logger, disk: d}
	e.Singles.D = e
	if !d.Direct() {
		e.log.Warn("emu: filesystem refuses O_DIRECT, using buffered I/O", zap.String("path", opts.Path))
	}
	bufs := make([]int, writeBuffers, writeBuffers+1)
	for i := range bufs {
		bufs[i] = opts.RegionBytes
	}
	bufs = append(bufs, opts.ReadSlots*readpath.SlotBytes)
	if e.rg, err = rings.Open(d, rings.Options{Entries: opts.RingEntries, WaveEntries: uint32(opts.ReadSlots), IOPoll: opts.IOPoll,
		SQPoll: opts.SQPoll, StallAfter: opts.StallAfter, Buffers: bufs, Logger: opts.Logger}); err != nil {
		return nil, errors.Join(err, d.Close())
	}
	wb := make([]uint16, writeBuffers)
	for i := range wb {
		wb[i] = uint16(i)
	}
	if e.lg, err = logstore.Open(e.rg, logstore.Options{Path: opts.Path, Capacity: opts.Capacity, RegionBytes: opts.RegionBytes,
		MaxValueBytes: opts.MaxValueBytes, Mode: opts.Mode, CheckpointPath: opts.CheckpointPath, ExpectedItems: opts.ExpectedItems, ReplayBatch: opts.ReplayBatch,
		Sparse: opts.Sparse, Format: opts.Format, WriteBuffers: wb, Progress: opts.Progress, BindIndex: opts.BindIndex, Logger: opts.Logger}); err != nil {
		return nil, errors.Join(err, e.release())
	}
	e.rd = readpath.New(e.lg, e.rg, readpath.Options{Slots: opts.ReadSlots, Slab: slabBuffer, Path: opts.Path})
	return e, nil
}

// release frees what Open acquired, without closing the log (after a
// failed Open, in Close, and in tests playing a crash): the read path,
// the rings and their buffers, the device.
func (e *Namespace) release() error {
	if e.rd != nil {
		e.rd.Close()
	}
	var errs []error
	if e.rg != nil {
		errs = append(errs, e.rg.Close())
	}
	if e.disk != nil {
		errs = append(errs, e.disk.Close())
		e.disk = nil
	}
	return errors.Join(errs...)
}

// FrontStats returns the counters of the rings the namespace's I/O goes
// through (stalled requests among them, the batch rings' included).
func (e *Namespace) FrontStats() uring.FrontStats { return e.rg.Stats() }

// Limits reports the namespace's KV format and usage.
func (e *Namespace) Limits() nvmekv.Limits {
	e.lg.Lock()
	capacity, used := e.lg.LimitsLocked()
	e.lg.Unlock()
	return nvmekv.Limits{MaxKeyLen: nvmekv.MaxKeyLen, MaxValueLen: e.opts.MaxValueBytes, MaxKeys: uint64(e.opts.MaxKeys),
		Capacity: capacity, Utilization: used}
}

// Stats returns a snapshot of the counters.
func (e *Namespace) Stats() Stats {
	return Stats{Stats: e.lg.Stats(), Counters: e.rd.Stats(), Direct: e.rg.Device().Direct(), Fixed: e.rg.Fixed(),
		BufferBytes: e.rg.BufferBytes()}
}

// EachIndexMapping calls fn with the whole mapping of each index table
// that lives off the Go heap, and whether BindIndex placed it, under the
// log's read lock (logstore E28); mem is valid only during the call.
func (e *Namespace) EachIndexMapping(fn func(mem []byte, bound bool)) { e.lg.EachIndexMapping(fn) }

// Close writes the open region, waits for every write, syncs, writes the
// checkpoint and marks the superblock clean (all skipped after a failed
// write: the next Open scans), then closes the read path, the rings and
// the device. Idempotent.
func (e *Namespace) Close() error {
	err := e.lg.Close()
	return errors.Join(err, e.release())
}

// Flush makes every Store and Delete completed so far durable
// (logstore.Log.Flush: group-committed).
func (e *Namespace) Flush(ctx context.Context) error { return e.lg.Flush(ctx) }

// Clear deletes every key stored before it, durably, at a cost that does
// not grow with the keys (logstore.Log.Clear, E34): nvmekv.KV.Clear uses
// it instead of listing and deleting (K10). It takes the log's lock, as a
// batch of commands does, and waits for a Flush in progress; it reports
// no key to OnReclaim.
func (e *Namespace) Clear(ctx context.Context) error { return e.lg.Clear(ctx) }

package emu

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu/dev"
	"github.com/tiercache/tiercache/uring"
)

// regionState is the DRAM state of one region.
type regionState struct {
	seq   uint64 // incarnation; 0 = free (never written or reclaimed)
	live  uint32 // live records
	liveB uint32 // bytes of live records
	moved bool   // live records were copied out (Strict): make the copies durable before reuse
}

// wbuf is a region write buffer: the open region, or a sealed one whose
// writes are in flight. A buffer is reused only after its writes completed.
type wbuf struct {
	mem     []byte // RegionBytes, mmap'd, registered as fixed buffer idx
	idx     uint16
	region  int // -1 = none
	seq     uint64
	fill    int // forward end: bytes of records appended from the region start
	written int // forward bytes submitted for writing, multiple of 4096
	low     int // lowest extent allocated (extents fill [low, RegionBytes)), multiple of 4096
	wlow    int // lowest extent submitted for writing (extents in [low, wlow) are not yet)
	pending []*ioWait
}

// ioWait is one in-flight write.
type ioWait struct {
	done chan struct{}
	res  int32
	want int32
	off  int64
	data []byte // the bytes being written (mmap'd region buffer)
	once sync.Once
	err  error // set once by checkWrite
}

func (w *ioWait) finished() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// Namespace is the emulated KV namespace. Safe for concurrent use.
type Namespace struct {
	nvmekv.Singles
	opts    Options
	log     *zap.Logger
	disk    dev.Device
	isBlock bool // disk.Fixed(): no resize, no side checkpoint by default
	rAlign  int  // read alignment (O_DIRECT offset alignment, or the LBA size, 512..4096)
	maxXfer int  // largest single transfer (disk.MaxTransfer(); 0 = no limit)
	fixed   bool // buffers registered
	front   *uring.Front
	// quick is a plain ring (its owner not locked to a thread) that a wave
	// of reads takes while nothing is read on the main ring and at most
	// quickReads reads are in flight on it (readFront); nil when the main
	// ring is plain itself or a second ring could not be made (setupQuick).
	quick      *uring.Front
	quickFixed bool         // buffers registered on quick
	quickBusy  atomic.Int32 // reads in flight on quick
	mainBusy   atomic.Int32 // reads in flight on front
	// batch holds the free batch rings: a wave of batchMin reads or more
	// takes one and runs on it from its caller's thread (E16); nil when
	// none could be made.
	batch   chan *batchRing
	sb      superblock
	nReg    int
	dataOff int64
	ckpt    string

	mu        sync.RWMutex // read-locked by lookups (Retrieve, Exist), locked by everything else
	idx       *index
	regs      []regionState
	bufs      []*wbuf
	act       *wbuf // nil until the first write
	cur       int   // last region taken; the next is (cur+1)%nReg
	curEnd    int   // recovered end of region cur, where appending resumes (0 = do not resume)
	curLow    int   // recovered lowest extent of region cur (RegionBytes = none)
	nextSeq   uint64
	liveBytes int64
	appended  uint64 // records appended so far
	// undo journals the index changes not yet durable (undo.go, E21);
	// undoOff: it overflowed and is off until the next completed Flush.
	undo     []undoRec
	undoOff  bool
	undoGap  uint64 // while undoOff: e.appended after the last change not journaled
	durable  uint64 // records made durable by a completed Flush
	failed   error
	closed   bool
	reclaimQ [][16]byte // keys dropped, reported after unlock
	st       Stats

	syncMu       sync.Mutex   // one Flush writes and fdatasyncs at a time
	ioMu         sync.RWMutex // Close takes it exclusively before unmapping
	readSlab     []byte
	slots        *slots
	wave         int       // most disk reads per submission: min(ReadSlots, the ring's largest group)
	waves        sync.Pool // *wave
	diskReads    atomic.Uint64
	readBytes    atomic.Uint64 // bytes read from the device by Retrieves
	reclaims     atomic.Uint64 // regions reclaimed so far (a disk read rechecks its region if this moved)
	readRetries  atomic.Uint64
	directReads  atomic.Uint64
	quickReads   atomic.Uint64
	batchReads   atomic.Uint64
	batchStalled atomic.Uint64 // reads on a batch ring reported stalled (in FrontStats().Stalled)
	bufferReads  atomic.Uint64 // Retrieves served from a write buffer (counted under the read lock)
	calls        sync.Pool     // *call
}

// Stats are counters and gauges of a namespace.
type Stats struct {
	Items         int   // live keys
	LiveBytes     int64 // bytes of live records (headers included)
	Regions       int   // regions in the log
	UsedRegions   int   // regions holding data
	IndexBytes    int   // DRAM of the index
	Reclaimed     uint64
	ReclaimedKeys uint64
	RegionWrites  uint64
	Syncs         uint64
	DiskReads     uint64 // Retrieves read from the device
	ReadBytes     uint64 // bytes those reads transferred (a 4 KiB value in an extent: 4096)
	DirectReads   uint64 // of DiskReads, read straight into the Retrieve's buffer (no copy)
	QuickReads    uint64 // of DiskReads, sent through the lone-read ring (E15)
	BatchReads    uint64 // of DiskReads, run by their caller on a batch ring (E16)
	BufferReads   uint64 // Retrieves served from a region still in DRAM
	ReadRetries   uint64 // disk reads done again: their region was reclaimed (or record replaced) meanwhile
	Evacuated     uint64 // regions whose live records Strict mode moved forward
	Recovered     string // "fresh", "checkpoint" or "scan"
	TornTails     int    // regions whose scan stopped before their end
	Direct        bool   // O_DIRECT in use
	Fixed         bool   // registered buffers in use (fixed reads/writes, IORING_URING_CMD_FIXED)
	// Undone counts index changes put back after a failed write (E21);
	// UndoDropped counts journals dropped for growing past undoMax.
	Undone, UndoDropped uint64
	// Failed is why the namespace is read-only (E7: a region write failed;
	// Store and Delete fail until it is reopened), nil while writable.
	Failed error
}

// Open opens (formatting if needed) the emulated namespace at opts.Path.
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
	if c, ok := d.(interface{ CheckIOPoll() error }); ok && opts.IOPoll {
		if err := c.CheckIOPoll(); err != nil {
			return nil, errors.Join(err, d.Close())
		}
	}
	isBlock, size, direct := d.Fixed(), d.Size(), d.Direct()
	e := &Namespace{opts: opts, log: opts.Logger, disk: d, isBlock: isBlock, dataOff: blockBytes, st: Stats{Direct: direct}}
	e.Singles.D = e
	e.rAlign, e.maxXfer = d.ReadAlign(), d.MaxTransfer()
	if !direct {
		e.log.Warn("emu: filesystem refuses O_DIRECT, using buffered I/O", zap.String("path", opts.Path))
	}
	e.ckpt = opts.CheckpointPath
	if e.ckpt == "" && !isBlock {
		e.ckpt = opts.Path + ".ckpt"
	}
	if e.ckpt == "-" {
		e.ckpt = ""
	}
	if err := e.openStore(size); err != nil {
		return nil, errors.Join(err, e.release())
	}
	return e, nil
}

func (e *Namespace) openStore(size int64) error {
	sbuf, err := mapBuf(blockBytes)
	if err != nil {
		return err
	}
	defer unmapBuf(sbuf)
	if err := e.disk.ReadAt(sbuf, 0); err != nil {
		return fmt.Errorf("emu: read superblock of %s: %w", e.opts.Path, err)
	}
	sb, formatted, err := parseSuperblock(sbuf)
	if err != nil {
		return fmt.Errorf("%s: %w", e.opts.Path, err)
	}
	R := int64(e.opts.RegionBytes)
	if formatted {
		if sb.regionBytes != uint64(R) {
			return fmt.Errorf("%w: %s was formatted with %d-byte regions, Options.RegionBytes is %d", ErrFormat, e.opts.Path, sb.regionBytes, R)
		}
		if e.opts.Capacity != 0 && uint64(e.opts.Capacity/R) != sb.regions {
			return fmt.Errorf("%w: %s was formatted with capacity %d (%d regions), Options.Capacity is %d", ErrFormat, e.opts.Path, sb.regions*uint64(R), sb.regions, e.opts.Capacity)
		}
		if e.isBlock && size < e.dataOff+int64(sb.regions)*R {
			return fmt.Errorf("%w: %s is %d bytes, smaller than its formatted size", ErrFormat, e.opts.Path, size)
		}
	} else {
		if !e.opts.Format && !isZero(sbuf) {
			return fmt.Errorf("%w: %s holds data that is not an emulated namespace; refusing to format it (set Options.Format to overwrite)", ErrFormat, e.opts.Path)
		}
		capacity := e.opts.Capacity
		if capacity == 0 {
			capacity = defaultCap
			if e.isBlock || size > blockBytes {
				capacity = size - blockBytes
			}
		}
		n := capacity / R
		if n < 4 || n > maxRegions {
			return fmt.Errorf("%w: capacity %d holds %d regions of %d bytes, need 4..%d", ErrBadOptions, capacity, n, R, maxRegions)
		}
		if e.isBlock && size < e.dataOff+n*R {
			return fmt.Errorf("%w: block device %s has %d bytes, capacity %d needs %d", ErrBadOptions, e.opts.Path, size, capacity, e.dataOff+n*R)
		}
		var id [8]byte
		rand.Read(id[:])
		sb = superblock{version: sbVersion, regionBytes: uint64(R), regions: uint64(n), storeID: binary.LittleEndian.Uint64(id[:]) | 1}
	}
	e.sb, e.nReg = sb, int(sb.regions)
	if !e.isBlock && size < e.dataOff+int64(e.nReg)*R {
		if err := e.disk.Resize(e.dataOff + int64(e.nReg)*R); err != nil {
			return fmt.Errorf("emu: size %s to %d bytes: %w", e.opts.Path, e.dataOff+int64(e.nReg)*R, err)
		}
	}
	if !e.isBlock && !e.opts.Sparse {
		if err := e.reserve(e.dataOff+int64(e.nReg)*R, formatted); err != nil {
			if t, ok := e.disk.(interface{ Truncate(int64) error }); ok && size == 0 {
				_ = t.Truncate(0) // leave the file as empty as it was
			}
			return err
		}
	}
	if err := e.setupIO(); err != nil {
		return err
	}
	if formatted {
		if err := e.recover(); err != nil {
			return err
		}
		e.resumeLocked()
		if nn := (e.cur + 1) % e.nReg; e.opts.Mode == Strict && e.act != nil && e.regs[nn].live > 0 &&
			e.act.fitsBytes(int(e.regs[nn].liveB)) {
			e.evacuateLocked(nn) // restore the Strict invariant after a crash
		}
	} else {
		e.fresh()
	}
	// Mark dirty before any write: a crash from now on forces a scan.
	e.sb.clean = false
	e.sb.maxValue = uint32(e.opts.MaxValueBytes)
	return e.writeSuperblock(sbuf)
}

// reserve allocates the file's n bytes (E14). A new store that does not fit
// fails with ENOSPC now; an existing one (data the caller wants back, maybe
// made sparse by an earlier version) opens anyway, with a warning. A
// filesystem without fallocate keeps the file sparse.
func (e *Namespace) reserve(n int64, formatted bool) error {
	err := e.disk.Reserve(n)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS):
		e.log.Info("emu: the filesystem cannot reserve blocks (no fallocate); the store stays sparse",
			zap.String("path", e.opts.Path), zap.Error(err))
		return nil
	}
	free := "unknown"
	if f, ferr := e.disk.FreeBytes(); ferr == nil {
		free = fmt.Sprintf("%d", f)
	}
	if formatted {
		e.log.Warn("emu: cannot reserve the store's blocks; writes will fail with ENOSPC when the filesystem fills",
			zap.String("path", e.opts.Path), zap.Int64("bytes", n), zap.String("fs_free_bytes", free), zap.Error(err))
		return nil
	}
	return fmt.Errorf("emu: reserve %d bytes for %s (the filesystem has %s bytes free; lower the capacity or free space): %w",
		n, e.opts.Path, free, err)
}

func (e *Namespace) fresh() {
	e.idx = newIndex(e.expected())
	e.regs = make([]regionState, e.nReg)
	e.cur, e.nextSeq = e.nReg-1, e.sb.firstSeq()
	e.curEnd, e.curLow = 0, e.opts.RegionBytes
	e.st.Recovered = "fresh"
}

func (e *Namespace) expected() int {
	if e.opts.ExpectedItems > 0 {
		return e.opts.ExpectedItems
	}
	return int(int64(e.nReg) * int64(e.opts.RegionBytes) / 2048)
}

func (e *Namespace) writeSuperblock(b []byte) error {
	e.sb.put(b)
	if err := e.disk.WriteAt(b, 0); err != nil {
		return fmt.Errorf("emu: write superblock of %s: %w", e.opts.Path, err)
	}
	if err := e.disk.Sync(); err != nil {
		return fmt.Errorf("emu: sync %s: %w", e.opts.Path, err)
	}
	return nil
}

// setupIO creates the ring, the write buffers and the read slab.
func (e *Namespace) setupIO() error {
	f, err := uring.NewFront(e.opts.ringOptions(e.disk, true))
	if errors.Is(err, syscall.EINVAL) && !e.opts.SQPoll {
		e.log.Info("emu: io_uring refuses SINGLE_ISSUER|DEFER_TASKRUN (Linux < 6.1?), using a plain ring", zap.Error(err))
		f, err = uring.NewFront(e.opts.ringOptions(e.disk, false))
	}
	if err != nil {
		return fmt.Errorf("emu: io_uring for %s: %w", e.opts.Path, err)
	}
	e.front = f
	var regs [][]byte
	for i := 0; i < 3; i++ {
		m, err := mapBuf(e.opts.RegionBytes)
		if err != nil {
			return err
		}
		e.bufs = append(e.bufs, &wbuf{mem: m, idx: uint16(i), region: -1, low: e.opts.RegionBytes, wlow: e.opts.RegionBytes})
		regs = append(regs, m)
	}
	if e.readSlab, err = mapBuf(e.opts.ReadSlots * readSlotBytes); err != nil {
		return err
	}
	e.slots = newSlots(e.opts.ReadSlots)
	e.waves.New = func() any { return newWave() }
	e.wave = max(1, min(e.opts.ReadSlots, f.MaxGroup()))
	regs = append(regs, e.readSlab)
	if err := f.RegisterBuffers(regs); err != nil {
		e.log.Warn("emu: cannot register buffers, using unregistered I/O", zap.Error(err))
	} else {
		e.fixed = e.fixedWorks()
	}
	if f.Options().Ring.DeferTaskrun && !e.opts.IOPoll {
		e.setupQuick(regs)
	}
	e.setupBatch(regs)
	return nil
}

// quickReads is how many reads may be in flight on the quick ring; more go
// to the main ring.
const quickReads = 4

// setupQuick adds the quick ring for reads while few are in flight. The
// main ring is SINGLE_ISSUER|DEFER_TASKRUN: its owner is locked to one
// thread, so a lone request costs two thread hand-offs (the submitter's
// thread to the owner's, and back for the completion), each tens of µs on
// a VM whose idle vCPUs halt. A plain ring's owner runs on whichever thread
// has its P, usually the submitter's, and hands nothing off. Measured on
// this project's 2-vCPU VM (BenchmarkRetrieve4KQD1, 3 interleaved rounds):
// 55-68 µs per lone 4 KiB Retrieve on the main ring, 33-42 µs on a plain
// one, fio at iodepth 1 ~26 µs; at QD 64 the plain ring gave 0.88x the main
// ring's throughput, which is why the main ring stays. The same buffers are
// registered on both, with the same indices. Without a quick ring (it could
// not be made) every read takes the main ring, as before.
func (e *Namespace) setupQuick(regs [][]byte) {
	q, err := uring.NewFront(e.opts.quickRingOptions(e.disk))
	if err != nil {
		e.log.Warn("emu: no second ring for lone reads; all reads share the main ring", zap.Error(err))
		return
	}
	if e.fixed {
		if err := q.RegisterBuffers(regs); err != nil {
			e.log.Warn("emu: cannot register buffers on the lone-read ring, using unregistered reads there", zap.Error(err))
		} else {
			e.quickFixed = true
		}
	}
	e.quick = q
}

// readFront picks the ring for a wave of n reads: it returns the ring,
// whether the read slab is registered on it, and whether it is the quick
// one, to hand to readDone when the wave completed.
//
// A wave takes the quick ring only while no read is in flight on the main
// ring: under load the two owners would compete for the Ps (an owner
// waiting in io_uring_enter holds its P until sysmon retakes it), and at QD
// 64 that cost more than half the throughput.
func (e *Namespace) readFront(n int) (f *uring.Front, fixed, quick bool) {
	if e.quick == nil {
		e.mainBusy.Add(int32(n))
		return e.front, e.fixed, false
	}
	if e.mainBusy.Load() == 0 {
		if int(e.quickBusy.Add(int32(n))) <= quickReads {
			return e.quick, e.quickFixed, true
		}
		e.quickBusy.Add(-int32(n))
	}
	e.mainBusy.Add(int32(n))
	return e.front, e.fixed, false
}

// readDone ends what readFront counted.
func (e *Namespace) readDone(quick bool, n int) {
	switch {
	case quick:
		e.quickBusy.Add(-int32(n))
	default:
		e.mainBusy.Add(-int32(n))
	}
}

// release frees what Open acquired (after a failed Open or in Close).
func (e *Namespace) release() error {
	errs := []error{e.closeBatch()}
	if e.quick != nil {
		errs = append(errs, e.quick.Close())
	}
	if e.front != nil {
		errs = append(errs, e.front.Close())
	}
	for _, b := range e.bufs {
		errs = append(errs, unmapBuf(b.mem))
	}
	e.bufs = nil
	errs = append(errs, unmapBuf(e.readSlab))
	e.readSlab = nil
	if e.disk != nil {
		errs = append(errs, e.disk.Close())
		e.disk = nil
	}
	return errors.Join(errs...)
}

// FrontStats returns the counters of the ring the namespace's I/O goes
// through (stalled requests among them, the batch rings' included).
func (e *Namespace) FrontStats() uring.FrontStats {
	s := e.front.Stats()
	s.Stalled += e.batchStalled.Load()
	if e.quick == nil {
		return s
	}
	q := e.quick.Stats()
	s.Submitted += q.Submitted
	s.Completed += q.Completed
	s.Enters += q.Enters
	s.Wakeups += q.Wakeups
	s.EnterErrors += q.EnterErrors
	s.Stalled += q.Stalled
	s.OldestInFlight = max(s.OldestInFlight, q.OldestInFlight)
	if q.LastError != nil {
		s.LastError = q.LastError
	}
	return s
}

// Limits reports the namespace's KV format and usage.
func (e *Namespace) Limits() nvmekv.Limits {
	e.mu.Lock()
	defer e.mu.Unlock()
	return nvmekv.Limits{
		MaxKeyLen: nvmekv.MaxKeyLen, MaxValueLen: e.opts.MaxValueBytes, MaxKeys: uint64(e.opts.MaxKeys),
		Capacity: uint64(e.nReg) * uint64(e.opts.RegionBytes), Utilization: uint64(e.liveBytes),
	}
}

// Stats returns a snapshot of the counters.
func (e *Namespace) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.st
	s.DiskReads, s.ReadBytes, s.ReadRetries = e.diskReads.Load(), e.readBytes.Load(), e.readRetries.Load()
	s.BufferReads, s.DirectReads, s.QuickReads = e.bufferReads.Load(), e.directReads.Load(), e.quickReads.Load()
	s.BatchReads = e.batchReads.Load()
	s.Items, s.LiveBytes, s.Regions, s.IndexBytes = e.idx.count, e.liveBytes, e.nReg, e.idx.bytes()
	s.Failed = e.failed
	s.Fixed = e.fixed
	for _, r := range e.regs {
		if r.seq != 0 {
			s.UsedRegions++
		}
	}
	return s
}

// Close writes the open region, waits for every write, fdatasyncs, writes
// the checkpoint and marks the superblock clean (all skipped after a failed
// write: the next Open scans). Idempotent.
func (e *Namespace) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	err := e.failed
	if err == nil {
		err = e.flushLocked()
	}
	e.mu.Unlock()
	var errs []error
	if err == nil {
		err = e.waitAll()
	}
	if err == nil {
		err = e.saveClean()
		if errors.Is(err, errCheckpoint) {
			// Every write is durable (waitAll synced them) and the
			// superblock is still dirty, so the next Open scans (E20).
			e.log.Warn("emu: checkpoint not written at close; the data is durable and the next open scans the log",
				zap.String("path", e.opts.Path), zap.Error(err))
			err = nil
		}
	}
	if err != nil && !errors.Is(err, ErrReadOnly) {
		errs = append(errs, err)
	}
	e.ioMu.Lock()
	errs = append(errs, e.release())
	e.ioMu.Unlock()
	return errors.Join(errs...)
}

// Flush makes every Store and Delete completed so far durable: it writes
// the open region up to the end of its last block (padding the rest of the
// block, which is never written again), waits for every region write, then
// fdatasyncs.
//
// Concurrent Flushes are group-committed: one caller at a time writes and
// fdatasyncs everything appended so far; a caller whose appends a finished
// Flush already covered returns without syncing again.
func (e *Namespace) Flush(ctx context.Context) error {
	e.mu.Lock()
	mine, err := e.appended, e.flushState()
	e.mu.Unlock()
	if err != nil {
		return err
	}
	e.syncMu.Lock()
	defer e.syncMu.Unlock()
	e.mu.Lock()
	if err := e.flushState(); err != nil {
		e.mu.Unlock()
		return err
	}
	if e.durable >= mine {
		e.mu.Unlock()
		return nil
	}
	mark := e.appended
	err = e.flushLocked()
	e.mu.Unlock()
	if err == nil {
		err = e.waitAll()
	}
	if err == nil {
		e.mu.Lock()
		e.durable = max(e.durable, mark)
		e.durableLocked(mark)
		e.mu.Unlock()
	}
	return err
}

// flushState is the error a Flush returns before doing anything.
func (e *Namespace) flushState() error {
	if e.closed {
		return ErrClosed
	}
	return e.failed
}

func isZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

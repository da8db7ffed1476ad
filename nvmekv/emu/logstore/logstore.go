package logstore

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/nvmekv/emu/dev"
	"github.com/tiercache/tiercache/nvmekv/emu/rings"
)

// Mode chooses what happens when the log is full.
type Mode int

const (
	// Cache reclaims the oldest region (FIFO, no copying) and reports each
	// key it drops (TakeReclaimedLocked).
	Cache Mode = iota
	// Strict returns Capacity Exceeded (SC 0x81) instead, as a KV SSD does;
	// only a region without live records is reused.
	Strict
)

func (m Mode) String() string {
	if m == Strict {
		return "strict"
	}
	return "cache"
}

// Geometry limits (nvmekv/emu's Options.Validate checks them).
const (
	BlockBytes      = blockBytes // the log's block: writes, extents and flush padding
	MinRegionBytes  = 64 << 10   // smallest region
	MaxRegionBytes  = 64 << 20   // largest region (Loc packs offsets below it)
	MaxRegions      = maxRegions // most regions (Loc packs the region number)
	MaxValueBytes   = maxRecordBytes - recHdrBytes
	DefaultCapacity = 1 << 30 // a new file's data area when Options.Capacity is 0
	maxRecordBytes  = 4<<20 - 16
)

// Options configure a log. nvmekv/emu validates them.
type Options struct {
	// Path names the device in errors and is the base of the default
	// checkpoint path.
	Path string
	// Capacity is the data area in bytes (whole regions); 0: DefaultCapacity
	// for a new file, the device's size minus the superblock otherwise.
	Capacity int64
	// RegionBytes is the region size (a multiple of 4096, MinRegionBytes..
	// MaxRegionBytes); it must match an existing store.
	RegionBytes int
	// MaxValueBytes is the largest value a record holds (the superblock
	// keeps it).
	MaxValueBytes int
	// Mode is Cache or Strict.
	Mode Mode
	// CheckpointPath is where Close writes the index: "" means Path+".ckpt"
	// for a regular file and none for a block device or NVMe namespace;
	// "-" means none.
	CheckpointPath string
	// ExpectedItems sizes the index's tag index (inline records) up front;
	// 0: it starts small and grows with the keys. The extent records'
	// table always starts at minExtExpected.
	ExpectedItems int
	// ReplayBatch, if positive, makes a scan replay into a keyed table,
	// that many index changes sorted and applied together (E36; 1
	// applies each as its record is read): the peers BenchmarkOpen
	// compares with. 0: the changes are bucketed by tag and settled once
	// the log is read (E37).
	ReplayBatch int
	// Sparse leaves a regular file's blocks unreserved (E14).
	Sparse bool
	// Format allows formatting a device whose first block is not zero and
	// holds no superblock.
	Format bool
	// WriteBuffers are the indices of the rings' registered buffers the
	// log writes regions from, each RegionBytes long (three or more).
	WriteBuffers []uint16
	// Progress, if set, is called on Open's goroutine while Open rebuilds
	// the index: after each region a scan replays, after each 4096 entries
	// of a checkpoint, and once at the end with Finished (E27). It must
	// not block for long: Open waits for it.
	Progress func(Progress)
	// BindIndex, if set, is called with the whole mapping of every index
	// table that lives off the Go heap (2 MiB and more, E8) when it is
	// mapped, before any of its pages is touched, under the log's lock:
	// the caller places it (tier binds it to a NUMA node with mbind). An
	// error leaves that table unbound and as usable; the first is logged,
	// every one counted (Stats.IndexBindErrors). Smaller tables live on
	// the Go heap and are never passed (E28).
	BindIndex func(mem []byte) error
	// Logger defaults to zap.NewNop().
	Logger *zap.Logger
}

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
	mem     []byte // RegionBytes, a registered buffer of the rings (idx)
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
	data []byte // the bytes being written (a region buffer)
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

// Log is the log-structured store under an emulated namespace: a ring of
// regions on a device, written through rings, and the index of the live
// records. Its state is guarded by its lock (Lock, RLock): every method
// named *Locked wants it held (locked; LookupLocked, ReadBufferedLocked,
// SeqLocked, EachLocked, LimitsLocked and ClosedLocked also read-locked);
// the other methods take it themselves.
type Log struct {
	o       Options
	log     *zap.Logger
	rg      *rings.Rings
	d       dev.Device
	isBlock bool // d.Fixed(): no resize, no side checkpoint by default
	sb      superblock
	nReg    int
	dataOff int64
	ckpt    string

	mu        sync.RWMutex
	idx       *keyIndex
	lay       slotLayout // how the index's tag slots pack (E8)
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
	undoMem  *offHeap // the mapping undo lives in (newJournal); nil: on the heap, or not made yet
	undoOff  bool
	undoGap  uint64 // while undoOff: lg.appended after the last change not journaled
	durable  uint64 // records made durable by a completed Flush
	failed   error
	closed   bool
	reclaimQ [][16]byte // keys dropped, reported by TakeReclaimedLocked
	// moves are the records Strict-mode evacuation moved during the
	// current Store or Delete's append (from, to), so that it finds its
	// key's entry where the evacuation put it.
	moves []locMove
	st    Stats
	prog  progress // reports Open's rebuilding of the index
	// bindIdx is Options.BindIndex wrapped to log its first error and
	// count them all (nil without a hook); bindErrs is that count.
	bindIdx  func(mem []byte) error
	bindErrs atomic.Uint64
	// touched is written by TouchLocked only when what it read sums to
	// one unlikely value (so that its loads are used and made).
	touched atomic.Uint64

	syncMu      sync.Mutex    // one Flush writes and syncs at a time
	reclaims    atomic.Uint64 // regions reclaimed so far (a disk read rechecks its region if this moved)
	bufferReads atomic.Uint64 // Retrieves served from a write buffer (counted under the read lock)
	// tagChecks, tagReads and tagCollisions count the checks of inline
	// candidates' keys (lookup.go; under the read lock too).
	tagChecks, tagReads, tagCollisions atomic.Uint64
}

// Stats are the log's counters and gauges.
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
	BufferReads   uint64 // Retrieves served from a region still in DRAM
	Evacuated     uint64 // regions whose live records Strict mode moved forward
	Recovered     string // "fresh", "checkpoint" or "scan"
	TornTails     int    // regions whose scan stopped before their end
	// IndexOffHeapBytes is the slot bytes of the index's off-heap tables
	// (E8; IndexBytes counts them too),
	// IndexBoundBytes those of them Options.BindIndex placed, and
	// IndexBindErrors how many tables it failed to place (E28).
	IndexOffHeapBytes, IndexBoundBytes int
	IndexBindErrors                    uint64
	// Undone counts index changes put back after a failed write (E21);
	// UndoDropped counts journals dropped for growing past undoMax.
	Undone, UndoDropped uint64
	// TagChecks counts record headers read to check the key of an inline
	// candidate found by its tag (E8): Exist, Store and Delete of a key
	// whose tag has an entry, and Retrieves whose tag has several; of
	// those, TagReads were read from the device (the others from a write
	// buffer), and TagCollisions named another key (a tag collision).
	TagChecks, TagReads, TagCollisions uint64
	// UnreportedKeys counts inline keys dropped by reclaiming a region
	// that could not be read back: their keys are unknown, so OnReclaim
	// was not told (E6).
	UnreportedKeys uint64
	// FullKeyItems counts the live keys whose device key is 16 bytes long
	// (of Items, both index tables; exact at every moment): the record
	// headers of nvmekv.KV, whose chunks have 15-byte keys (E31).
	FullKeyItems int
	// Clears counts the Clears that completed (E34).
	Clears uint64
	// Failed is why the log is read-only (E7), nil while writable.
	Failed error
}

// Open opens the log on rg's device (formatting it if it holds nothing),
// reserves a file's blocks (E14), rebuilds the index (from the checkpoint
// or by a scan: E4, E5) and marks the superblock dirty before anything
// else is written.
func Open(rg *rings.Rings, o Options) (*Log, error) {
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	d := rg.Device()
	lg := &Log{o: o, log: o.Logger, rg: rg, d: d, isBlock: d.Fixed(), dataOff: blockBytes}
	lg.bindIdx = lg.indexBinder()
	lg.ckpt = o.CheckpointPath
	if lg.ckpt == "" && !lg.isBlock {
		lg.ckpt = o.Path + ".ckpt"
	}
	if lg.ckpt == "-" {
		lg.ckpt = ""
	}
	if len(o.WriteBuffers) < 3 {
		return nil, fmt.Errorf("logstore: %d write buffers, need 3", len(o.WriteBuffers))
	}
	for _, i := range o.WriteBuffers {
		m := rg.Buffer(int(i))
		if len(m) != o.RegionBytes {
			return nil, fmt.Errorf("logstore: write buffer %d is %d bytes, not a region (%d)", i, len(m), o.RegionBytes)
		}
		lg.bufs = append(lg.bufs, &wbuf{mem: m, idx: i, region: -1, low: o.RegionBytes, wlow: o.RegionBytes})
	}
	if err := lg.open(d.Size()); err != nil {
		return nil, err
	}
	return lg, nil
}

func (lg *Log) open(size int64) error {
	sbuf, err := dev.MapBuffer(blockBytes)
	if err != nil {
		return err
	}
	defer dev.UnmapBuffer(sbuf)
	if err := lg.d.ReadAt(sbuf, 0); err != nil {
		return fmt.Errorf("logstore: read superblock of %s: %w", lg.o.Path, err)
	}
	sb, formatted, err := parseSuperblock(sbuf)
	if err != nil {
		return fmt.Errorf("%s: %w", lg.o.Path, err)
	}
	R := int64(lg.o.RegionBytes)
	if formatted {
		if sb.regionBytes != uint64(R) {
			return fmt.Errorf("%w: %s was formatted with %d-byte regions, Options.RegionBytes is %d", ErrFormat, lg.o.Path, sb.regionBytes, R)
		}
		if lg.o.Capacity != 0 && uint64(lg.o.Capacity/R) != sb.regions {
			return fmt.Errorf("%w: %s was formatted with capacity %d (%d regions), Options.Capacity is %d", ErrFormat, lg.o.Path, sb.regions*uint64(R), sb.regions, lg.o.Capacity)
		}
		if lg.isBlock && size < lg.dataOff+int64(sb.regions)*R {
			return fmt.Errorf("%w: %s is %d bytes, smaller than its formatted size", ErrFormat, lg.o.Path, size)
		}
	} else {
		if !lg.o.Format && !isZero(sbuf) {
			return fmt.Errorf("%w: %s holds data that is not an emulated namespace; refusing to format it (set Options.Format to overwrite)", ErrFormat, lg.o.Path)
		}
		capacity := lg.o.Capacity
		if capacity == 0 {
			capacity = DefaultCapacity
			if lg.isBlock || size > blockBytes {
				capacity = size - blockBytes
			}
		}
		n := capacity / R
		if n < 4 || n > maxRegions {
			return fmt.Errorf("%w: capacity %d holds %d regions of %d bytes, need 4..%d", ErrBadOptions, capacity, n, R, maxRegions)
		}
		if lg.isBlock && size < lg.dataOff+n*R {
			return fmt.Errorf("%w: block device %s has %d bytes, capacity %d needs %d", ErrBadOptions, lg.o.Path, size, capacity, lg.dataOff+n*R)
		}
		var id [8]byte
		rand.Read(id[:])
		sb = superblock{version: sbVersion, regionBytes: uint64(R), regions: uint64(n), storeID: binary.LittleEndian.Uint64(id[:]) | 1}
	}
	lg.sb, lg.nReg = sb, int(sb.regions)
	if lg.lay, err = newSlotLayout(lg.nReg, int(sb.regionBytes)); err != nil {
		return fmt.Errorf("logstore: %s: %w", lg.o.Path, err)
	}
	lg.prog = progress{f: lg.o.Progress, start: time.Now()}
	if !lg.isBlock && size < lg.dataOff+int64(lg.nReg)*R {
		if err := lg.d.Resize(lg.dataOff + int64(lg.nReg)*R); err != nil {
			return fmt.Errorf("logstore: size %s to %d bytes: %w", lg.o.Path, lg.dataOff+int64(lg.nReg)*R, err)
		}
	}
	if !lg.isBlock && !lg.o.Sparse {
		if err := lg.reserve(lg.dataOff+int64(lg.nReg)*R, formatted); err != nil {
			if t, ok := lg.d.(interface{ Truncate(int64) error }); ok && size == 0 {
				_ = t.Truncate(0) // leave the file as empty as it was
			}
			return err
		}
	}
	if formatted {
		if err := lg.recover(); err != nil {
			return err
		}
		lg.resumeLocked()
		if nn := (lg.cur + 1) % lg.nReg; lg.o.Mode == Strict && lg.act != nil && lg.regs[nn].live > 0 &&
			lg.act.fitsBytes(int(lg.regs[nn].liveB)) {
			lg.evacuateLocked(nn) // restore the Strict invariant after a crash
		}
	} else {
		lg.fresh()
	}
	// Mark dirty before any write: a crash from now on forces a scan.
	lg.sb.clean = false
	lg.sb.maxValue = uint32(lg.o.MaxValueBytes)
	if err := lg.writeSuperblock(sbuf); err != nil {
		return err
	}
	lg.prog.finish(lg.st.Recovered, lg.idx.len())
	return nil
}

// reserve allocates the file's n bytes (E14). A new store that does not fit
// fails with ENOSPC now; an existing one (data the caller wants back, maybe
// made sparse by an earlier version) opens anyway, with a warning. A
// filesystem without fallocate keeps the file sparse.
func (lg *Log) reserve(n int64, formatted bool) error {
	err := lg.d.Reserve(n)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS):
		lg.log.Info("logstore: the filesystem cannot reserve blocks (no fallocate); the store stays sparse",
			zap.String("path", lg.o.Path), zap.Error(err))
		return nil
	}
	free := "unknown"
	if f, ferr := lg.d.FreeBytes(); ferr == nil {
		free = fmt.Sprintf("%d", f)
	}
	if formatted {
		lg.log.Warn("logstore: cannot reserve the store's blocks; writes will fail with ENOSPC when the filesystem fills",
			zap.String("path", lg.o.Path), zap.Int64("bytes", n), zap.String("fs_free_bytes", free), zap.Error(err))
		return nil
	}
	return fmt.Errorf("logstore: reserve %d bytes for %s (the filesystem has %s bytes free; lower the capacity or free space): %w",
		n, lg.o.Path, free, err)
}

func (lg *Log) fresh() {
	lg.idx = newKeyIndex(lg.expected(), &lg.lay, lg.bindIdx)
	lg.regs = make([]regionState, lg.nReg)
	lg.cur, lg.nextSeq = lg.nReg-1, max(lg.sb.firstSeq(), lg.sb.clearSeq)
	lg.curEnd, lg.curLow = 0, lg.o.RegionBytes
	lg.st.Recovered = "fresh"
}

// indexBinder wraps Options.BindIndex (nil if unset): a failure leaves
// the table unbound, is counted, and the first is logged (E28).
func (lg *Log) indexBinder() func(mem []byte) error {
	bind := lg.o.BindIndex
	if bind == nil {
		return nil
	}
	return func(mem []byte) error {
		err := bind(mem)
		if err != nil && lg.bindErrs.Add(1) == 1 {
			lg.log.Warn("logstore: could not place an index table; it stays unbound (later failures are only counted: INFO cold_index_bind_errors)",
				zap.String("path", lg.o.Path), zap.Int("bytes", len(mem)), zap.Error(err))
		}
		return err
	}
}

// expected is how many keys the index is first sized for: ExpectedItems,
// else minExpected; it grows with the keys (E25).
func (lg *Log) expected() int { return max(lg.o.ExpectedItems, minExpected) }

func (lg *Log) writeSuperblock(b []byte) error {
	lg.sb.put(b)
	if err := lg.d.WriteAt(b, 0); err != nil {
		return fmt.Errorf("logstore: write superblock of %s: %w", lg.o.Path, err)
	}
	if err := lg.d.Sync(); err != nil {
		return fmt.Errorf("logstore: sync %s: %w", lg.o.Path, err)
	}
	return nil
}

func isZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// Close makes every write durable (the open region written, every write
// waited for, a sync), writes the checkpoint and marks the superblock
// clean; after a failed write it does none of that (the next Open scans)
// and returns nil. A checkpoint that cannot be written is a warning (E20).
// The rings and the device stay open. Idempotent.
func (lg *Log) Close() error {
	lg.mu.Lock()
	if lg.closed {
		lg.mu.Unlock()
		return nil
	}
	lg.closed = true
	err := lg.failed
	if err == nil {
		err = lg.flushLocked()
	}
	lg.mu.Unlock()
	if err == nil {
		err = lg.waitAll()
	}
	if err == nil {
		err = lg.saveClean()
		if errors.Is(err, errCheckpoint) {
			// Every write is durable (waitAll synced them) and the
			// superblock is still dirty, so the next Open scans (E20).
			lg.log.Warn("logstore: checkpoint not written at close; the data is durable and the next open scans the log",
				zap.String("path", lg.o.Path), zap.Error(err))
			err = nil
		}
	}
	if errors.Is(err, ErrReadOnly) {
		return nil
	}
	return err
}

// Flush makes every Store and Delete completed so far durable: it writes
// the open region up to the end of its last block (padding the rest of the
// block, which is never written again), waits for every region write, then
// syncs the device.
//
// Concurrent Flushes are group-committed: one caller at a time writes and
// syncs everything appended so far; a caller whose appends a finished
// Flush already covered returns without syncing again.
func (lg *Log) Flush(ctx context.Context) error {
	lg.mu.Lock()
	mine, err := lg.appended, lg.flushState()
	lg.mu.Unlock()
	if err != nil {
		return err
	}
	lg.syncMu.Lock()
	defer lg.syncMu.Unlock()
	lg.mu.Lock()
	if err := lg.flushState(); err != nil {
		lg.mu.Unlock()
		return err
	}
	if lg.durable >= mine {
		lg.mu.Unlock()
		return nil
	}
	mark := lg.appended
	err = lg.flushLocked()
	lg.mu.Unlock()
	if err == nil {
		err = lg.waitAll()
	}
	if err == nil {
		lg.mu.Lock()
		lg.durable = max(lg.durable, mark)
		lg.durableLocked(mark)
		lg.mu.Unlock()
	}
	return err
}

// flushState is the error a Flush returns before doing anything.
func (lg *Log) flushState() error {
	if lg.closed {
		return ErrClosed
	}
	return lg.failed
}

// Stats returns a snapshot of the counters.
func (lg *Log) Stats() Stats {
	lg.mu.Lock()
	defer lg.mu.Unlock()
	s := lg.st
	s.BufferReads = lg.bufferReads.Load()
	s.TagChecks, s.TagReads, s.TagCollisions = lg.tagChecks.Load(), lg.tagReads.Load(), lg.tagCollisions.Load()
	s.Items, s.LiveBytes, s.Regions, s.IndexBytes = lg.idx.len(), lg.liveBytes, lg.nReg, lg.idx.bytes()
	s.FullKeyItems = lg.idx.full
	s.IndexOffHeapBytes, s.IndexBoundBytes = lg.idx.offHeap()
	s.IndexBindErrors = lg.bindErrs.Load()
	s.Failed = lg.failed
	for _, r := range lg.regs {
		if r.seq != 0 {
			s.UsedRegions++
		}
	}
	return s
}

package readpath

import (
	"sync"
	"sync/atomic"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu/dev"
	"github.com/tiercache/tiercache/nvmekv/emu/logstore"
	"github.com/tiercache/tiercache/nvmekv/emu/rings"
)

// Options configure a Reader.
type Options struct {
	// Slots is how many read slots of SlotBytes the slab holds.
	Slots int
	// Slab is the index of the rings' registered buffer that holds the
	// slots (Slots × SlotBytes bytes).
	Slab uint16
	// Path names the device in errors.
	Path string
}

// SlotBytes is the size of one read slot of the registered slab: a read
// of up to 8 KiB (a record of up to about 7.5 KB at 512-byte alignment,
// e.g. a 4 KiB value with nvmekv.KV's header and key) takes one; a larger
// read a heap buffer (heapbufs.go, E24).
const SlotBytes = 8 << 10

// Pending is a Retrieve that needs the device: the interpreter found its
// key's record at Loc, in incarnation Seq of its region, when the log had
// reclaimed Epoch regions.
type Pending struct {
	Op    *nvmekv.Op
	Key   [16]byte
	Klen  int
	Loc   logstore.Loc
	Seq   uint64
	Epoch uint64
}

// Reader reads Retrieves' records from the device (the read path of an
// emulated namespace): in waves on the rings' lanes, through read slots of
// a registered slab or straight into the caller's buffer, checking what
// it reads against the log (E2). Safe for concurrent use.
type Reader struct {
	lg    *logstore.Log
	rg    *rings.Rings
	d     dev.Device
	o     Options
	align int // read alignment (O_DIRECT offset alignment, or the LBA size, 512..4096)

	mu    sync.RWMutex // read-locked by Read, locked by Close
	slab  []byte
	slots *slots
	wave  int       // most reads per wave: min(Slots, rings.MaxWave)
	waves sync.Pool // *wave
	heap  heapBufs

	diskReads   atomic.Uint64
	readBytes   atomic.Uint64 // bytes read from the device
	readRetries atomic.Uint64
	directReads atomic.Uint64
	quickReads  atomic.Uint64
	batchReads  atomic.Uint64
	heapReads   atomic.Uint64
}

// Counters are the read path's counters.
type Counters struct {
	DiskReads   uint64 // Retrieves read from the device
	ReadBytes   uint64 // bytes those reads transferred (a 4 KiB value in an extent: 4096)
	DirectReads uint64 // of DiskReads, read straight into the Retrieve's buffer (no copy)
	QuickReads  uint64 // of DiskReads, sent through the lone-read ring (rings E15)
	BatchReads  uint64 // of DiskReads, run by their caller on a batch or polled ring (rings E16, E19)
	HeapReads   uint64 // of DiskReads, larger than a read slot: into a pooled heap buffer (E24)
	SlabBytes   int    // the registered read slab: Slots × SlotBytes
	ReadRetries uint64 // reads done again: their region was reclaimed (or record replaced) meanwhile
}

// New makes the read path of lg over rg.
func New(lg *logstore.Log, rg *rings.Rings, o Options) *Reader {
	r := &Reader{lg: lg, rg: rg, d: rg.Device(), o: o, align: rg.Device().ReadAlign(),
		slab: rg.Buffer(int(o.Slab)), slots: newSlots(o.Slots), wave: max(1, min(o.Slots, rg.MaxWave()))}
	r.waves.New = func() any { return newWave() }
	return r
}

// Stats returns a snapshot of the counters.
func (r *Reader) Stats() Counters {
	return Counters{DiskReads: r.diskReads.Load(), ReadBytes: r.readBytes.Load(), DirectReads: r.directReads.Load(),
		QuickReads: r.quickReads.Load(), BatchReads: r.batchReads.Load(), HeapReads: r.heapReads.Load(),
		ReadRetries: r.readRetries.Load(), SlabBytes: r.o.Slots * SlotBytes}
}

// Close waits for the reads in flight and fails every later Read with
// logstore.ErrClosed; then the rings may be closed. Idempotent.
func (r *Reader) Close() {
	r.mu.Lock()
	r.slab = nil
	r.mu.Unlock()
}

// Wave is how many reads one wave takes at most.
func (r *Reader) Wave() int { return r.wave }

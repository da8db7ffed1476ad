package rings

import (
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/nvmekv/emu/dev"
	"github.com/tiercache/tiercache/uring"
)

// Options configure the rings of one namespace.
type Options struct {
	// Entries is the main ring's size; default 256.
	Entries uint32
	// WaveEntries is the size of the batch (or polled) rings: the most
	// reads one wave takes (Rings.MaxWave is at most this and at most
	// what one submission of the main ring takes); default 64.
	WaveEntries uint32
	// IOPoll makes the rings that carry waves of reads poll for their
	// completions (IORING_SETUP_IOPOLL, E19); writes stay on the main ring.
	IOPoll bool
	// SQPoll gives the main ring a kernel submission thread
	// (IORING_SETUP_SQPOLL, which excludes SINGLE_ISSUER|DEFER_TASKRUN
	// and so the quick ring).
	SQPoll bool
	// StallAfter is passed to every ring (uring.FrontOptions.StallAfter;
	// RunWatch on the batch rings); 0 = uring's default, negative = off.
	StallAfter time.Duration
	// Buffers are the sizes in bytes of the buffers Open maps (off the Go
	// heap) and registers with every ring, in index order; Buffer(i)
	// returns them.
	Buffers []int
	// Logger defaults to zap.NewNop().
	Logger *zap.Logger
}

// Rings carries an emulated namespace's transfers to its device: the main
// ring (writes, synchronous reads, and waves of reads while nothing else
// serves them), the quick ring (lone reads, E15), the batch rings (large
// waves of reads run from their caller's thread, E16) or, with
// Options.IOPoll, polled rings (E19), and the registered buffers they all
// share at the same indices. Safe for concurrent use.
type Rings struct {
	d       dev.Device
	log     *zap.Logger
	maxXfer int
	iopoll  bool

	main  *uring.Front
	fixed bool // buffers registered on main, and the kernel takes partial transfers into them
	// quick is a plain ring (its owner not locked to a thread) that a
	// wave of reads takes while nothing is read on the main ring and at
	// most QuickReads reads are in flight on it (Lane); nil when the main
	// ring is plain itself or a second ring could not be made.
	quick      *uring.Front
	quickFixed bool         // buffers registered on quick
	quickBusy  atomic.Int32 // reads in flight on quick
	mainBusy   atomic.Int32 // reads in flight on main
	// batch holds the free batch (or polled) rings; nil when none could
	// be made.
	batch        chan *batchRing
	batchStalled atomic.Uint64 // reads on a batch ring reported stalled (in Stats().Stalled)
	maxWave      int

	bufs [][]byte
}

// Open makes the rings for d (with what d.Ring asks for), maps and
// registers Options.Buffers on each, and checks that the kernel takes a
// transfer into part of a registered buffer (Fixed). With IOPoll it
// first asks the device whether polled I/O can work on this kernel.
func Open(d dev.Device, o Options) (*Rings, error) {
	if o.Entries == 0 {
		o.Entries = 256
	}
	if o.WaveEntries == 0 {
		o.WaveEntries = 64
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if c, ok := d.(interface{ CheckIOPoll() error }); ok && o.IOPoll {
		if err := c.CheckIOPoll(); err != nil {
			return nil, err
		}
	}
	r := &Rings{d: d, log: o.Logger, maxXfer: d.MaxTransfer(), iopoll: o.IOPoll}
	if err := r.open(o); err != nil {
		return nil, errors.Join(err, r.Close())
	}
	return r, nil
}

func (r *Rings) open(o Options) error {
	f, err := uring.NewFront(mainOptions(o, r.d, true))
	if errors.Is(err, syscall.EINVAL) && !o.SQPoll {
		r.log.Info("rings: io_uring refuses SINGLE_ISSUER|DEFER_TASKRUN (Linux < 6.1?), using a plain ring", zap.Error(err))
		f, err = uring.NewFront(mainOptions(o, r.d, false))
	}
	if err != nil {
		return fmt.Errorf("rings: io_uring for %s: %w", r.d.Path(), err)
	}
	r.main = f
	r.maxWave = max(1, min(int(o.WaveEntries), f.MaxGroup()))
	for _, n := range o.Buffers {
		m, err := dev.MapBuffer(n)
		if err != nil {
			return err
		}
		r.bufs = append(r.bufs, m)
	}
	if err := f.RegisterBuffers(r.bufs); err != nil {
		r.log.Warn("rings: cannot register buffers, using unregistered I/O", zap.Error(err))
	} else {
		r.fixed = r.fixedWorks()
	}
	if f.Options().Ring.DeferTaskrun && !o.IOPoll {
		r.setupQuick(o)
	}
	r.setupBatch(o)
	return nil
}

// mainOptions: the owner goroutine is locked to one thread that alone
// submits (IORING_SETUP_SINGLE_ISSUER), and completions are processed only
// when it waits for them (DEFER_TASKRUN, Linux 6.1). Otherwise a read's
// completion work runs on whichever thread submitted it, the owner's
// earlier threads included, and contends with the owner for the ring's
// lock (perf: ~6% of Retrieve CPU in mutex_spin_on_owner). Measured on a
// fast disk (fio ~800 MB/s): Retrieve4K 1.14x (median of 10 interleaved
// rounds, all >= 1.11x); Store4K 0.9-0.98x. With fewer IOPS (a slower
// disk) an earlier session measured 3-8% less: a locked thread costs a
// thread handoff per wake-up. Open falls back to a plain ring on a
// kernel that refuses these flags. SQPoll excludes DEFER_TASKRUN.
func mainOptions(o Options, d dev.Device, deferTaskrun bool) uring.FrontOptions {
	deferTaskrun = deferTaskrun && !o.SQPoll
	ro := uring.Options{Entries: o.Entries, SingleIssuer: deferTaskrun, DeferTaskrun: deferTaskrun, SQPoll: o.SQPoll, SQThreadCPU: -1}
	d.Ring(&ro)
	return uring.FrontOptions{Ring: ro, StallAfter: o.StallAfter, Logger: o.Logger}
}

// Device is the device the rings carry transfers to.
func (r *Rings) Device() dev.Device { return r.d }

// Buffer is registered buffer i (Options.Buffers[i] bytes).
func (r *Rings) Buffer(i int) []byte { return r.bufs[i] }

// BufferBytes is the size of every registered buffer together: mapped
// and resident for as long as the rings are open.
func (r *Rings) BufferBytes() int {
	n := 0
	for _, b := range r.bufs {
		n += len(b)
	}
	return n
}

// Fixed reports that transfers use the registered buffers (fixed
// reads/writes; IORING_URING_CMD_FIXED on NVMe).
func (r *Rings) Fixed() bool { return r.fixed }

// MaxWave is the most reads one wave may hand to a Lane: what one
// submission of the main ring takes, and at most Options.WaveEntries.
func (r *Rings) MaxWave() int { return r.maxWave }

// Main is the main ring; Quick the lone-read ring (nil when there is
// none); BatchRings how many batch (or polled) rings are free now.
func (r *Rings) Main() *uring.Front  { return r.main }
func (r *Rings) Quick() *uring.Front { return r.quick }
func (r *Rings) BatchRings() int {
	if r.batch == nil {
		return 0
	}
	return len(r.batch)
}

// Stats returns the counters of the rings (stalled requests of the batch
// rings included).
func (r *Rings) Stats() uring.FrontStats {
	s := r.main.Stats()
	s.Stalled += r.batchStalled.Load()
	if r.quick == nil {
		return s
	}
	q := r.quick.Stats()
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

// Close closes every ring (waiting for what is in flight) and unmaps the
// buffers; the device stays open. The caller makes sure nothing uses the
// rings or buffers any more. Idempotent.
func (r *Rings) Close() error {
	errs := []error{r.closeBatch()}
	if r.quick != nil {
		errs = append(errs, r.quick.Close())
	}
	if r.main != nil {
		errs = append(errs, r.main.Close())
	}
	for _, b := range r.bufs {
		errs = append(errs, dev.UnmapBuffer(b))
	}
	r.bufs = nil
	return errors.Join(errs...)
}

package readpath

import (
	"sync/atomic"

	"github.com/tiercache/tiercache/nvmekv/emu/dev"

	"github.com/tiercache/tiercache/uring"
)

// wave is the reusable state of one submission of disk reads (readWave).
// Its reads' Requests have Prep and Done bound once, so a read allocates
// nothing; a wave goes back to the pool only after every Done ran.
type wave struct {
	rds   []*waveRead
	reqs  []*uring.Request
	slots []int
	left  atomic.Int32  // reads whose Done has not run
	done  chan struct{} // receives once when left reaches 0
}

// waveRead is one disk read of a wave.
type waveRead struct {
	req    uring.Request
	w      *wave
	mem    []byte // read slab slot, heap buffer, temporary mapping, or the caller's buffer (direct)
	slot   int    // -1: heap buffer, temporary mapping or direct
	heap   *[]byte
	class  int   // heap's size class
	direct bool  // mem is the Retrieve's own buffer: the value is read into place
	start  int64 // file offset, aligned
	n      int   // bytes read, aligned
	skip   int   // record offset within mem
	disk   dev.Device
	fixed  bool
	bufIdx uint16
	res    int32 // cqe.res
	err    error // the read could not be issued
}

func newWave() *wave { return &wave{done: make(chan struct{}, 1)} }

// grow makes room for n reads.
func (w *wave) grow(n int) {
	for len(w.rds) < n {
		r := &waveRead{w: w, slot: -1}
		r.req.Prep = r.prep
		r.req.Done = r.complete
		w.rds = append(w.rds, r)
	}
}

func (r *waveRead) prep(s *uring.SQE) { r.disk.PrepRead(s, r.mem, r.start, r.fixed, r.bufIdx) }

// complete runs on the Front's owner goroutine, or on the wave's caller on
// a batch ring (it must not block: done has room for the one send).
func (r *waveRead) complete(res uring.Result) {
	r.res = r.disk.Done(res.Res, r.n)
	if r.w.left.Add(-1) == 0 {
		r.w.done <- struct{}{}
	}
}

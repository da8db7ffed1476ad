package rings

import (
	"context"
	"errors"
	"sync/atomic"
	"syscall"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/uring"
)

var bgCtx = context.Background()

// Chunks calls fn for each piece of mem at off no larger than the
// device's largest transfer (one piece when it has no limit), in order.
func (r *Rings) Chunks(mem []byte, off int64, fn func(mem []byte, off int64)) {
	step := r.maxXfer
	if step <= 0 {
		step = len(mem)
	}
	for len(mem) > 0 {
		n := min(step, len(mem))
		fn(mem[:n], off)
		mem, off = mem[n:], off+int64(n)
	}
}

// Write writes mem (in registered buffer idx; at most the device's
// largest transfer: see Chunks) at off on the main ring, and calls done
// once with the bytes written or a -errno: at once when the device
// refuses the transfer before submission (E17) or it cannot be submitted,
// else from the main ring's owner goroutine.
func (r *Rings) Write(mem []byte, off int64, idx uint16, done func(res int32)) {
	if res, refused := r.d.Refuse(true, off, len(mem)); refused {
		done(res)
		return
	}
	d, fixed := r.d, r.fixed
	req := &uring.Request{
		Prep: func(s *uring.SQE) { d.PrepWrite(s, mem, off, fixed, idx) },
		Done: func(res uring.Result) { done(d.Done(res.Res, len(mem))) },
	}
	if err := r.main.Submit(req); err != nil {
		done(-int32(errnoOf(err)))
	}
}

// Read reads mem (in registered buffer idx) at off on the main ring, in
// pieces no larger than the device's largest transfer, submitted
// together, and calls done once with the bytes read up to the first short
// piece, or the first failed piece's -errno. A piece the device refuses
// before submission (E17) ends the read there with its result.
func (r *Rings) Read(mem []byte, off int64, idx uint16, done func(n int32)) {
	var reqs []*uring.Request
	var lens []int
	var refusedRes int32
	refused := false
	r.Chunks(mem, off, func(m []byte, o int64) {
		if refused {
			return
		}
		if res, no := r.d.Refuse(false, o, len(m)); no {
			refusedRes, refused = res, true
			return
		}
		lens = append(lens, len(m))
		d, fixed := r.d, r.fixed
		reqs = append(reqs, &uring.Request{Prep: func(s *uring.SQE) { d.PrepRead(s, m, o, fixed, idx) }})
	})
	res := make([]int32, len(reqs))
	finish := func() {
		var total int32
		for i, n := range res {
			if n < 0 {
				done(n)
				return
			}
			total += n
			if int(n) < lens[i] {
				done(total)
				return
			}
		}
		if refused && refusedRes < 0 {
			done(refusedRes)
			return
		}
		if refused {
			total += refusedRes
		}
		done(total)
	}
	if len(reqs) == 0 {
		finish()
		return
	}
	var left atomic.Int32
	left.Store(int32(len(reqs)))
	for i, q := range reqs {
		q.Done = func(cr uring.Result) {
			res[i] = r.d.Done(cr.Res, lens[i])
			if left.Add(-1) == 0 {
				finish()
			}
		}
	}
	if err := r.main.Submit(reqs...); err != nil {
		done(-int32(errnoOf(err)))
	}
}

// ReadAt is Read, waiting for its result.
func (r *Rings) ReadAt(mem []byte, off int64, idx uint16) int32 {
	ch := make(chan int32, 1)
	r.Read(mem, off, idx, func(n int32) { ch <- n })
	return <-ch
}

// fixedWorks reads the device's first block into part of the last
// registered buffer through the registration (a transfer that covers
// part of its buffer, as every read and write of the namespace does) and
// reports whether the kernel took it. io_uring registers a huge page of a
// buffer as one segment, and Linux 6.1's blk_rq_map_user_bvec
// (block/blk-map.c) refuses, with EINVAL, an NVMe passthrough transfer
// that ends inside a segment (fixed in later kernels: "block: fix sanity
// checks in blk_rq_map_user_bvec"); the rings then use plain addresses
// into the same mapped buffers. A short read (an empty file) counts as
// taken.
func (r *Rings) fixedWorks() bool {
	if len(r.bufs) == 0 {
		return false
	}
	b := r.bufs[len(r.bufs)-1]
	mem, d, idx := b[:min(len(b), 4096)], r.d, uint16(len(r.bufs)-1)
	res, err := r.main.Do(bgCtx, &uring.Request{Prep: func(s *uring.SQE) { d.PrepRead(s, mem, 0, true, idx) }})
	if err == nil && d.Done(res[0].Res, len(mem)) >= 0 {
		return true
	}
	var got int32
	if len(res) > 0 {
		got = res[0].Res
	}
	r.log.Info("rings: the kernel refuses a transfer into part of a registered buffer; using unregistered buffers",
		zap.String("path", r.d.Path()), zap.Int32("res", got), zap.Error(err))
	return false
}

// errnoOf finds the errno inside an error (EIO when there is none).
func errnoOf(err error) syscall.Errno {
	var en syscall.Errno
	if errors.As(err, &en) {
		return en
	}
	return syscall.EIO
}

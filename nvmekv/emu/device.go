package emu

import (
	"go.uber.org/zap"

	"github.com/tiercache/tiercache/nvmekv/emu/dev"
	"github.com/tiercache/tiercache/uring"
)

// openDevice opens the namespace's storage: Options.Device if set, else
// Path as an NVM namespace (Options.NVMe) or as a file or block device;
// wrapped in a dev.Fault when Options.Fault is set.
func openDevice(o *Options) (dev.Device, error) {
	var d dev.Device
	switch {
	case o.Device != nil:
		d = o.Device
	case o.NVMe:
		n, err := dev.OpenNVMe(o.Path, dev.NVMeOptions{Logger: o.Logger})
		if err != nil {
			return nil, err
		}
		d = n
	default:
		f, err := dev.OpenFile(o.Path)
		if err != nil {
			return nil, err
		}
		d = f
	}
	if fn := o.Fault; fn != nil {
		d = dev.NewFault(d, func(op dev.Op, off int64, n int) (int32, bool) {
			if op != dev.OpRead && op != dev.OpWrite {
				return 0, false
			}
			en := fn(op == dev.OpWrite, off, n)
			return -int32(en), en != 0
		})
	}
	return d, nil
}

// refuse asks the device whether an asynchronous transfer of n bytes at
// off may be submitted; if not, res is its result (-errno or short).
func (e *Namespace) refuse(write bool, off int64, n int) (res int32, refused bool) {
	return e.disk.Refuse(write, off, n)
}

// chunks calls fn for each piece of mem at off no larger than the
// device's largest transfer (one piece when it has no limit).
func (e *Namespace) chunks(mem []byte, off int64, fn func(mem []byte, off int64)) {
	step := e.maxXfer
	if step <= 0 {
		step = len(mem)
	}
	for len(mem) > 0 {
		n := min(step, len(mem))
		fn(mem[:n], off)
		mem, off = mem[n:], off+int64(n)
	}
}

// fixedWorks reads the superblock block into the read slab through its
// registered buffer (a transfer covering part of the buffer, as every read
// does) and reports whether the kernel took it. Linux 6.1's
// blk_rq_map_user_bvec (block/blk-map.c) refuses, with EINVAL, an NVMe
// passthrough transfer that ends before its registered buffer does
// (fixed in later kernels: "block: fix sanity checks in
// blk_rq_map_user_bvec"); the namespace then uses plain addresses into the
// same mmap'd buffers.
func (e *Namespace) fixedWorks() bool {
	mem, d, idx := e.readSlab[:blockBytes], e.disk, uint16(len(e.bufs))
	res, err := e.front.Do(bgCtx, &uring.Request{Prep: func(s *uring.SQE) { d.PrepRead(s, mem, 0, true, idx) }})
	if err == nil && d.Done(res[0].Res, len(mem)) == int32(len(mem)) {
		return true
	}
	var r int32
	if len(res) > 0 {
		r = res[0].Res
	}
	e.log.Info("emu: the kernel refuses a transfer into part of a registered buffer; using unregistered buffers",
		zap.String("path", e.opts.Path), zap.Int32("res", r), zap.Error(err))
	return false
}

package nvmept

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/uring"
)

// dev is an SQE128|CQE32 ring (through the uring Front, as the product
// uses it) plus the NVMe device files and the namespace geometry.
type dev struct {
	t     *testing.T
	front *uring.Front
	ctrl  *os.File // /dev/nvme0: admin uring_cmd
	ng    *os.File // /dev/ng0n1: I/O uring_cmd, admin ioctl
	blk   uint32   // logical block bytes
	nsze  uint64   // namespace size in blocks
}

func openDev(t *testing.T) *dev {
	t.Helper()
	f, err := uring.NewFront(uring.FrontOptions{Ring: uring.Options{Entries: 64, SQE128: true, CQE32: true}})
	if err != nil {
		t.Fatalf("SQE128|CQE32 ring: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	if !f.SQE128() || !f.CQE32() {
		t.Fatalf("front SQE128=%v CQE32=%v, want both", f.SQE128(), f.CQE32())
	}
	d := &dev{t: t, front: f}
	if d.ctrl, err = os.OpenFile(ctrlPath, os.O_RDWR, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.ctrl.Close() })
	if d.ng, err = os.OpenFile(ngPath, os.O_RDWR, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.ng.Close() })
	buf := mmapBuf(t, nvmekv.IdentifyBytes)
	if res := d.admin(nvmekv.EncodeIdentify(nsid, nvmekv.CNSNamespace, 0, 0), buf); res.Res != 0 {
		t.Fatalf("Identify Namespace: res %d", res.Res)
	}
	ns, err := nvmekv.ParseNVMNamespace(buf)
	if err != nil {
		t.Fatal(err)
	}
	if ns.BlockBytes == 0 || ns.NSZE == 0 {
		t.Fatalf("Identify Namespace = %+v: no size or block size", ns)
	}
	d.blk, d.nsze = ns.BlockBytes, ns.NSZE
	return d
}

func (d *dev) ctx() context.Context {
	ctx, cancel := context.WithTimeout(d.t.Context(), time.Minute)
	d.t.Cleanup(cancel)
	return ctx
}

// cmdReq is a uring_cmd request carrying c with data buf on fd.
func cmdReq(fd *os.File, op uint32, c nvmekv.Command, buf []byte) *uring.Request {
	var a uint64
	if len(buf) > 0 {
		a = addr(buf)
	}
	u := nvmekv.UringCmdFrom(&c, a, uint32(len(buf)))
	return &uring.Request{Prep: func(s *uring.SQE) {
		s.PrepUringCmd(int32(fd.Fd()), op)
		u.MarshalTo(s.Cmd80())
	}}
}

// fixedReq is cmdReq with the data in registered buffer idx.
func fixedReq(fd *os.File, c nvmekv.Command, buf []byte, idx uint16) *uring.Request {
	r := cmdReq(fd, nvmekv.NVMeURingCmdIO, c, buf)
	prep := r.Prep
	r.Prep = func(s *uring.SQE) {
		prep(s)
		s.OpFlags = uring.UringCmdFixed
		s.BufIndex = idx
	}
	return r
}

func (d *dev) do(reqs ...*uring.Request) []uring.Result {
	d.t.Helper()
	res, err := d.front.Do(d.ctx(), reqs...)
	if err != nil {
		d.t.Fatalf("Front.Do of %d requests: %v", len(reqs), err)
	}
	return res
}

// admin runs an admin command through uring_cmd on /dev/nvme0.
func (d *dev) admin(c nvmekv.Command, buf []byte) uring.Result {
	return d.do(cmdReq(d.ctrl, nvmekv.NVMeURingCmdAdmin, c, buf))[0]
}

// io runs one I/O command through uring_cmd on /dev/ng0n1.
func (d *dev) io(c nvmekv.Command, buf []byte) uring.Result {
	return d.do(cmdReq(d.ng, nvmekv.NVMeURingCmdIO, c, buf))[0]
}

// mustOK fails the test unless every result is 0, decoding NVMe statuses.
func (d *dev) mustOK(what string, res []uring.Result, op nvmekv.Opcode) {
	d.t.Helper()
	for i, r := range res {
		if r.Res != 0 {
			d.t.Fatalf("%s, command %d: %v", what, i, nvmekv.DecodeResult(op, r.Res))
		}
	}
}

// rw builds one NVM Read or Write of len(buf) bytes at lba.
func (d *dev) rw(write bool, lba uint64, buf []byte) *uring.Request {
	nlb := uint32(len(buf)) / d.blk
	c := nvmekv.EncodeNVMRead(nsid, lba, nlb)
	if write {
		c = nvmekv.EncodeNVMWrite(nsid, lba, nlb)
	}
	return cmdReq(d.ng, nvmekv.NVMeURingCmdIO, c, buf)
}

// checksumAll reads the whole namespace through passthrough (16 commands of
// chunk bytes in flight) and returns its XXH3-128 sum.
func (d *dev) checksumAll(chunk int) xxh3.Uint128 {
	d.t.Helper()
	const depth = 16
	buf := mmapBuf(d.t, chunk*depth)
	total := d.nsze * uint64(d.blk)
	per := uint64(chunk / int(d.blk))
	h := xxh3.New()
	for lba := uint64(0); lba < d.nsze; {
		var reqs []*uring.Request
		var sizes []int
		for i := 0; i < depth && lba < d.nsze; i++ {
			n := min(per, d.nsze-lba)
			b := buf[i*chunk : i*chunk+int(n)*int(d.blk)]
			reqs = append(reqs, d.rw(false, lba, b))
			sizes = append(sizes, len(b))
			lba += n
		}
		d.mustOK(fmt.Sprintf("checksum read of %d bytes", total), d.do(reqs...), nvmekv.Opcode(nvmekv.NVMOpRead))
		for i, n := range sizes {
			h.Write(buf[i*chunk : i*chunk+n])
		}
	}
	return h.Sum128()
}

package dev

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/uring"
)

// NVMe is an ordinary NVMe namespace (NVM command set, CSI 0) driven
// through its generic char device /dev/ngXnY: NVM Read (02h) and Write
// (01h) as IORING_OP_URING_CMD with cmd_op NVME_URING_CMD_IO on 128-byte
// SQEs (registered buffers: IORING_URING_CMD_FIXED), Flush (00h) and
// Dataset Management (09h) with the NVME_IOCTL_IO_CMD ioctl
// (include/uapi/linux/nvme_ioctl.h; drivers/nvme/host/ioctl.c).
type NVMe struct {
	path    string
	fd      int
	nsid    uint32
	lba     int   // logical block bytes (512..4096)
	size    int64 // NSZE × lba
	maxXfer int   // largest transfer, bytes, multiple of 4096
	dsm     bool  // the controller supports Dataset Management (ONCS bit 2)
	zeroes  bool  // a deallocated block reads as zeros (DLFEAT bits 2:0 = 001b)
	g       Geometry
	log     *zap.Logger

	refused  atomic.Uint64
	statuses atomic.Uint64
	last     atomic.Pointer[nvmekv.StatusError]

	once sync.Once
	err  error
}

// NVMeOptions configure OpenNVMe.
type NVMeOptions struct {
	// Logger defaults to zap.NewNop().
	Logger *zap.Logger
}

// OpenNVMe opens path, which must be an NVMe generic char device
// (/dev/ngXnY) of an NVM namespace without metadata, and reads its
// geometry (readGeometry) before anything else.
func OpenNVMe(path string, opts NVMeOptions) (*NVMe, error) {
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	fd, err := openChar(path)
	if err != nil {
		return nil, err
	}
	d := &NVMe{path: path, fd: fd, log: opts.Logger}
	if d.nsid, err = nvmekv.NamespaceID(fd); err != nil {
		closeFd(fd)
		return nil, fmt.Errorf("%w: %s is not an NVMe namespace (NVME_IOCTL_ID: %w)", ErrNotDevice, path, err)
	}
	g, dlfeat, oncs, err := readGeometry(fd, d.nsid, path)
	if err == nil {
		err = CheckGeometry(path, g)
	}
	if err != nil {
		closeFd(fd)
		return nil, err
	}
	d.zeroes = dlfeat&0x7 == 1
	hwKB, segs := queueLimits(path)
	d.g, d.lba, d.size = g, g.BlockBytes, int64(g.Blocks)*int64(g.BlockBytes)
	d.maxXfer = maxTransfer(g.MDTS, hwKB, segs)
	d.dsm = oncs&(1<<2) != 0
	d.log.Info("dev: NVM namespace", zap.String("path", path), zap.Uint32("nsid", d.nsid), zap.Int("block_bytes", d.lba),
		zap.Int("lbaf", g.LBAF), zap.Int64("bytes", d.size), zap.Uint8("mdts", g.MDTS), zap.Int("max_hw_sectors_kb", hwKB),
		zap.Int("max_segments", segs), zap.Int("max_transfer", d.maxXfer), zap.Bool("dsm", d.dsm),
		zap.Bool("elbaf", g.ELBAF), zap.Uint8("dmrl", g.DMRL), zap.Uint32("dmrsl", g.DMRSL), zap.Uint64("dmsl", g.DMSL))
	return d, nil
}

func (d *NVMe) Path() string     { return d.path }
func (d *NVMe) Size() int64      { return d.size }
func (d *NVMe) Fixed() bool      { return true }
func (d *NVMe) Direct() bool     { return true }
func (d *NVMe) ReadAlign() int   { return d.lba }
func (d *NVMe) MaxTransfer() int { return d.maxXfer }

// DeallocatedReadsZero reports that the namespace reads deallocated blocks
// as zeros (Identify Namespace DLFEAT), and Deallocate that it takes
// Dataset Management at all.
func (d *NVMe) DeallocatedReadsZero() bool { return d.dsm && d.zeroes }

// NSID is the namespace id; BlockBytes the logical block size.
func (d *NVMe) NSID() uint32    { return d.nsid }
func (d *NVMe) BlockBytes() int { return d.lba }

// CheckIOPoll refuses polled passthrough where it would hang: on Linux
// before 6.2 with the NVMe driver's poll queues on (nvme.poll_queues > 0),
// a polled command lands on a poll queue that nvme_ns_chr_uring_cmd_iopoll
// never polls (it polls only bios with a block device; a passthrough bio
// on the char device has none: drivers/nvme/host/ioctl.c, 6.1), so it
// never completes. Without poll queues the command completes by interrupt
// and the polled ring reaps it.
func (d *NVMe) CheckIOPoll() error {
	pq := readInt("/sys/module/nvme/parameters/poll_queues")
	major, minor := kernelVersion()
	if pq > 0 && (major < 6 || major == 6 && minor < 2) {
		return fmt.Errorf("dev: polled I/O on %s refused: Linux %d.%d never completes a polled passthrough command on the NVMe driver's poll queues (nvme.poll_queues=%d); load nvme without poll queues or turn polling off",
			d.path, major, minor, pq)
	}
	return nil
}

// Ring: passthrough needs 128-byte SQEs (the 72-byte nvme_uring_cmd at
// byte 48) and 32-byte CQEs (drivers/nvme/host/ioctl.c refuses others).
func (d *NVMe) Ring(o *uring.Options) { o.SQE128, o.CQE32 = true, true }

// Check refuses a request of n bytes at off that is not whole logical
// blocks, reaches past the namespace, or exceeds the largest transfer.
func (d *NVMe) Check(off int64, n int) error {
	switch {
	case n <= 0 || off < 0 || off%int64(d.lba) != 0 || n%d.lba != 0:
		return fmt.Errorf("%w: %d bytes at offset %d of %s: the namespace takes whole %d-byte blocks", ErrUnaligned, n, off, d.path, d.lba)
	case off+int64(n) > d.size || off+int64(n) < off:
		return fmt.Errorf("%w: %d bytes at offset %d of %s, which has %d bytes", ErrOutOfRange, n, off, d.path, d.size)
	case n > d.maxXfer:
		return fmt.Errorf("%w: %d bytes at offset %d of %s, the largest transfer is %d", ErrTooLarge, n, off, d.path, d.maxXfer)
	}
	return nil
}

// Refuse: a request Check refuses is never submitted; it completes with
// -EINVAL (unaligned or too large) or -ERANGE (past the end).
func (d *NVMe) Refuse(write bool, off int64, n int) (int32, bool) {
	err := d.Check(off, n)
	if err == nil {
		return 0, false
	}
	d.refused.Add(1)
	d.log.Error("dev: request refused before submission", zap.Bool("write", write), zap.Error(err))
	if errors.Is(err, ErrOutOfRange) {
		return -int32(syscall.ERANGE), true
	}
	return -int32(syscall.EINVAL), true
}

func (d *NVMe) cmd(op uint8, off int64, n int) nvmekv.Command {
	c := nvmekv.EncodeNVMRead(d.nsid, uint64(off)/uint64(d.lba), uint32(n/d.lba))
	c.Opcode = op
	return c
}

func (d *NVMe) PrepRead(s *uring.SQE, mem []byte, off int64, fixed bool, idx uint16) {
	c := d.cmd(nvmekv.NVMOpRead, off, len(mem))
	nvmekv.PrepCmd(s, int32(d.fd), nvmekv.NVMeURingCmdIO, &c, mem, false, fixed, idx)
}

func (d *NVMe) PrepWrite(s *uring.SQE, mem []byte, off int64, fixed bool, idx uint16) {
	c := d.cmd(nvmekv.NVMOpWrite, off, len(mem))
	nvmekv.PrepCmd(s, int32(d.fd), nvmekv.NVMeURingCmdIO, &c, mem, false, fixed, idx)
}

// Done: a passthrough completion's cqe.res is 0 (all n bytes moved), a
// negative errno, or the NVMe status (> 0), which becomes EIO, is counted
// and kept for LastStatus.
func (d *NVMe) Done(res int32, n int) int32 {
	switch {
	case res == 0:
		return int32(n)
	case res < 0:
		return res
	}
	se, _ := nvmekv.DecodeResult(nvmekv.OpFlush, res).(*nvmekv.StatusError)
	d.statuses.Add(1)
	d.last.Store(se)
	d.log.Error("dev: NVMe command failed", zap.String("path", d.path), zap.Error(se))
	return -int32(syscall.EIO)
}

// Stats: requests refused before submission, and completions with an
// NVMe error status.
func (d *NVMe) Stats() (refused, statuses uint64) { return d.refused.Load(), d.statuses.Load() }

// LastStatus is the last NVMe error status a completion carried (nil if none).
func (d *NVMe) LastStatus() *nvmekv.StatusError { return d.last.Load() }

// io runs a synchronous command over b in MaxTransfer chunks.
func (d *NVMe) io(op uint8, name string, b []byte, off int64) error {
	for len(b) > 0 {
		n := min(len(b), d.maxXfer)
		if err := d.Check(off, n); err != nil {
			d.refused.Add(1)
			return err
		}
		if err := nvmekv.IOCommand(d.fd, d.cmd(op, off, n), b[:n]); err != nil {
			return fmt.Errorf("dev: NVM %s of %d bytes at offset %d of %s: %w", name, n, off, d.path, err)
		}
		b, off = b[n:], off+int64(n)
	}
	return nil
}

func (d *NVMe) ReadAt(b []byte, off int64) error  { return d.io(nvmekv.NVMOpRead, "Read", b, off) }
func (d *NVMe) WriteAt(b []byte, off int64) error { return d.io(nvmekv.NVMOpWrite, "Write", b, off) }

// Sync sends NVM Flush: the controller makes completed writes durable.
func (d *NVMe) Sync() error {
	if err := nvmekv.IOCommand(d.fd, nvmekv.EncodeFlush(d.nsid), nil); err != nil {
		return fmt.Errorf("dev: NVM Flush of %s: %w", d.path, err)
	}
	return nil
}

func (d *NVMe) Resize(n int64) error {
	if n > d.size {
		return fmt.Errorf("%w: %s has %d bytes, %d needed", ErrOutOfRange, d.path, d.size, n)
	}
	return nil
}

func (d *NVMe) Reserve(n int64) error      { return nil }
func (d *NVMe) FreeBytes() (uint64, error) { return 0, nil }

func (d *NVMe) Close() error {
	d.once.Do(func() { d.err = closeFd(d.fd) })
	return d.err
}

var _ Device = (*NVMe)(nil)

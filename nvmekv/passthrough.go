package nvmekv

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/uring"
)

// PassthroughOptions configure OpenPassthrough.
type PassthroughOptions struct {
	// RingEntries is the SQE128|CQE32 ring size; default 256. It bounds one Do.
	RingEntries uint32
	// AllowNonKV opens a namespace whose CSI is not 1 anyway, for raw NVM
	// commands (Raw, the QEMU guest tests); KV ops are still refused with ErrNotKV.
	AllowNonKV bool
	// StallAfter is how long a command may be in flight before it is
	// logged and counted as stalled (uring.FrontOptions.StallAfter;
	// FrontStats().Stalled). Default 30 s; negative = off.
	StallAfter time.Duration
	// Logger defaults to zap.NewNop().
	Logger *zap.Logger
}

// Passthrough is a KV namespace on a real device: /dev/ngXnY through
// IORING_OP_URING_CMD with NVME_URING_CMD_IO. Safe for concurrent use.
type Passthrough struct {
	Singles
	path  string
	fd    int
	nsid  uint32
	csi   uint8
	kvns  KVNamespace
	lim   Limits
	front *uring.Front
	fixed map[*byte]uint16 // registered buffers by first byte

	closeOnce sync.Once
	closeErr  error
}

// ReadCSI returns the command set identifier of namespace nsid on an open
// NVMe device fd, from the Namespace Identification Descriptor list
// (Identify CNS 03h, through NVME_IOCTL_ADMIN_CMD, which /dev/ngXnY accepts).
func ReadCSI(fd int, nsid uint32) (uint8, error) {
	buf := make([]byte, IdentifyBytes)
	if err := AdminIdentify(fd, EncodeIdentify(nsid, CNSNSDescriptorList, 0, 0), buf); err != nil {
		return 0, err
	}
	ds, err := ParseNSDescriptors(buf)
	if err != nil {
		return 0, err
	}
	return CSIFromDescriptors(ds), nil
}

// AdminIdentify runs an Identify command c (see EncodeIdentify) with the
// NVME_IOCTL_ADMIN_CMD ioctl on fd (a /dev/ngXnY or /dev/nvmeX), filling
// buf (4096 bytes).
func AdminIdentify(fd int, c Command, buf []byte) error {
	if len(buf) < IdentifyBytes {
		return fmt.Errorf("%w: identify buffer is %d bytes, need %d", ErrShortBuffer, len(buf), IdentifyBytes)
	}
	if _, err := AdminPassthru(fd, c, buf[:IdentifyBytes]); err != nil {
		return fmt.Errorf("nvmekv: identify CNS %#x: %w", uint8(c.CDW10), err)
	}
	return nil
}

// AdminPassthru runs admin command c with the NVME_IOCTL_ADMIN_CMD ioctl
// on fd (a /dev/nvmeX, or a /dev/ngXnY: include/uapi/linux/nvme_ioctl.h;
// drivers/nvme/host/ioctl.c nvme_user_cmd): buf is the command's data,
// written to the controller when the opcode's bits 1:0 say so (01b) and
// read into otherwise. It returns the completion's DW0, or an errno, or a
// *StatusError (Admin set) for an NVMe status.
func AdminPassthru(fd int, c Command, buf []byte) (uint32, error) {
	pc := PassthruCmd(UringCmdFrom(&c, 0, 0))
	res, err := ioctlPassthru(fd, NVMeIoctlAdminCmd, &pc, buf)
	if err != nil {
		return 0, fmt.Errorf("nvmekv: admin command %#02x: %w", c.Opcode, err)
	}
	return pc.Rsvd2, AdminStatus(c.Opcode, res)
}

// NotKVError is the refusal to send KV opcodes to a namespace whose command
// set is not KV. errors.Is(err, ErrNotKV).
func NotKVError(path string, csi uint8) error {
	name := map[uint8]string{CSINVM: "NVM", CSIZNS: "ZNS"}[csi]
	if name == "" {
		name = "unknown"
	}
	return fmt.Errorf("%w: %s has command set identifier %d (%s), not 1 (KV); KV commands are refused because KV Store is NVM Write's opcode 0x01", ErrNotKV, path, csi, name)
}

// OpenPassthrough opens path (/dev/ngXnY), reads its namespace id and CSI,
// and refuses (ErrNotKV) unless CSI == 1 or opts.AllowNonKV. For a KV
// namespace it reads the KV format (Identify CNS 05h, CSI 1) into Limits.
func OpenPassthrough(path string, opts PassthroughOptions) (*Passthrough, error) {
	if opts.RingEntries == 0 {
		opts.RingEntries = 256
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	fd, err := openRW(path)
	if err != nil {
		return nil, fmt.Errorf("nvmekv: open %s: %w", path, err)
	}
	p := &Passthrough{path: path, fd: fd}
	p.Singles.D = p
	fail := func(err error) (*Passthrough, error) {
		closeFd(fd)
		return nil, err
	}
	if p.nsid, err = ioctlNVMeID(fd); err != nil {
		return fail(fmt.Errorf("nvmekv: %s is not an NVMe namespace (NVME_IOCTL_ID): %w", path, err))
	}
	if p.csi, err = ReadCSI(fd, p.nsid); err != nil {
		return fail(fmt.Errorf("nvmekv: read command set of %s: %w", path, err))
	}
	if p.csi != CSIKV && !opts.AllowNonKV {
		return fail(NotKVError(path, p.csi))
	}
	if p.csi == CSIKV {
		buf := make([]byte, IdentifyBytes)
		if err := AdminIdentify(fd, EncodeIdentify(p.nsid, CNSIOCSNamespace, 0, CSIKV), buf); err != nil {
			return fail(fmt.Errorf("nvmekv: KV identify of %s: %w", path, err))
		}
		if p.kvns, err = ParseKVNamespace(buf); err != nil {
			return fail(err)
		}
		f := p.kvns.Format()
		p.lim = Limits{MaxKeyLen: int(f.MaxKeyLen), MaxValueLen: int(f.MaxValueLen), MaxKeys: uint64(f.MaxKeys),
			Capacity: p.kvns.Size, Utilization: p.kvns.Utilization}
	}
	p.front, err = uring.NewFront(uring.FrontOptions{Ring: uring.Options{Entries: opts.RingEntries, SQE128: true, CQE32: true},
		StallAfter: opts.StallAfter, Logger: opts.Logger})
	if err != nil {
		return fail(fmt.Errorf("nvmekv: SQE128|CQE32 ring for %s: %w", path, err))
	}
	p.lim.MaxBatch = p.front.MaxGroup() // what one submission can take (SQ and CQ room)
	return p, nil
}

// NSID and CSI of the namespace.
func (p *Passthrough) NSID() uint32 { return p.nsid }
func (p *Passthrough) CSI() uint8   { return p.csi }

// Fd is the device's file descriptor (for AdminIdentify and tests).
func (p *Passthrough) Fd() int { return p.fd }

// Limits are from the KV Identify data (zero for a non-KV namespace).
func (p *Passthrough) Limits() Limits { return p.lim }

// RegisterBuffers registers bufs as fixed buffers; commands whose Buf
// starts at one of them use IORING_URING_CMD_FIXED.
func (p *Passthrough) RegisterBuffers(bufs [][]byte) error {
	if err := p.front.RegisterBuffers(bufs); err != nil {
		return err
	}
	p.fixed = map[*byte]uint16{}
	for i, b := range bufs {
		p.fixed[&b[0]] = uint16(i)
	}
	return nil
}

// PrepCmd fills a 128-byte SQE with a passthrough command: URING_CMD, cmd_op
// cmdOp, fd, nvme_uring_cmd at byte 48 with buf as data (fixed buffer
// bufIndex when fixed), IO_LINK when link.
func PrepCmd(s *uring.SQE, fd int32, cmdOp uint32, c *Command, buf []byte, link, fixed bool, bufIndex uint16) {
	s.PrepUringCmd(fd, cmdOp)
	if link {
		s.Flags |= uring.FlagIOLink
	}
	if fixed {
		s.OpFlags |= uring.UringCmdFixed
		s.BufIndex = bufIndex
	}
	u := UringCmdFrom(c, addrOf(buf), uint32(len(buf)))
	u.MarshalTo(s.Cmd80())
}

// Do sends ops (at most Limits().MaxBatch) keeping Link chains: one
// submission when no op is linked, else one per command of the longest
// chain (doChains).
func (p *Passthrough) Do(ctx context.Context, ops ...*Op) error {
	for _, op := range ops {
		if op.Code.IsKV() && p.csi != CSIKV {
			err := NotKVError(p.path, p.csi)
			for _, o := range ops {
				o.Err = err
			}
			return err
		}
	}
	if p.lim.MaxBatch > 0 && len(ops) > p.lim.MaxBatch {
		err := fmt.Errorf("nvmekv: a batch of %d commands exceeds the %d that one submission to %s takes (Limits.MaxBatch): %w",
			len(ops), p.lim.MaxBatch, p.path, uring.ErrTooLarge)
		for _, o := range ops {
			o.Err = err
		}
		return err
	}
	cmds := make([]Command, len(ops))
	for i, op := range ops {
		c, err := op.Encode(p.nsid)
		if err != nil {
			for _, o := range ops {
				o.Err = err
			}
			return err
		}
		cmds[i] = c
	}
	return p.doChains(ctx, ops, cmds)
}

// doChains runs ops (encoded as cmds) keeping their Link chains, in waves:
// wave k is one submission of the k-th command of every chain still
// running. A chain stops at its first failure and the rest of it completes
// with ErrCanceled. IOSQE_IO_LINK cannot do this: io_uring breaks a link
// chain only on a negative result, and a passthrough command that fails
// with an NVMe status completes with a positive cqe.res
// (io_uring/uring_cmd.c io_uring_cmd_done sets the failure only for ret <
// 0; drivers/nvme/host/ioctl.c passes the NVMe status as ret), so the next
// command of the chain would run — a KV Store of a record's header after
// its chunk failed with Capacity Exceeded, say. A batch without chains is
// one submission.
func (p *Passthrough) doChains(ctx context.Context, ops []*Op, cmds []Command) error {
	type chain struct{ next, last int }
	var chains []chain
	for i := 0; i < len(ops); {
		j := i
		for j < len(ops)-1 && ops[j].Link {
			j++
		}
		chains = append(chains, chain{i, j})
		i = j + 1
	}
	idx := make([]int, 0, len(chains))
	wave := make([]Command, 0, len(chains))
	for {
		idx, wave = idx[:0], wave[:0]
		for _, c := range chains {
			if c.next <= c.last {
				idx = append(idx, c.next)
				wave = append(wave, cmds[c.next])
			}
		}
		if len(idx) == 0 {
			return nil
		}
		res, err := p.submit(ctx, wave, func(k int) ([]byte, bool) { return ops[idx[k]].Buf, false })
		for k, i := range idx {
			if k < len(res) {
				ops[i].Complete(res[k].Res, res[k].Big[0])
			} else {
				ops[i].Err = err
			}
		}
		if err != nil {
			for _, c := range chains {
				for i := c.next + 1; i <= c.last; i++ {
					ops[i].Err = err
				}
			}
			return err
		}
		for ci := range chains {
			c := &chains[ci]
			if c.next > c.last {
				continue
			}
			if ops[c.next].Err != nil {
				for i := c.next + 1; i <= c.last; i++ {
					ops[i].Complete(-int32(syscall.ECANCELED), 0)
				}
				c.next = c.last + 1
				continue
			}
			c.next++
		}
	}
}

func (p *Passthrough) submit(ctx context.Context, cmds []Command, arg func(int) ([]byte, bool)) ([]uring.Result, error) {
	if p.front == nil {
		return nil, ErrClosed
	}
	reqs := make([]*uring.Request, len(cmds))
	for i := range cmds {
		c := &cmds[i]
		buf, link := arg(i)
		var idx uint16
		fixed := false
		if len(buf) > 0 && p.fixed != nil {
			idx, fixed = p.fixed[&buf[0]]
		}
		fd := int32(p.fd)
		reqs[i] = &uring.Request{Prep: func(s *uring.SQE) { PrepCmd(s, fd, NVMeURingCmdIO, c, buf, link, fixed, idx) }}
		if len(buf) > 0 && !fixed {
			reqs[i].Pin = [][]byte{buf}
		}
	}
	res, err := p.front.Do(ctx, reqs...)
	if err != nil && errors.Is(err, uring.ErrClosed) {
		err = fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return res, err
}

// RawCmd is a raw I/O command for Raw: any opcode (NVM Read/Write/Flush on
// a CSI 0 namespace), with its data buffer.
type RawCmd struct {
	Cmd  Command
	Buf  []byte
	Link bool
}

// Raw sends raw I/O commands (e.g. EncodeNVMRead/EncodeNVMWrite/EncodeFlush)
// as one submission, with no KV check: it is for the NVM namespace tests.
// Result.Res is cqe.res (decode with DecodeResult), Result.Big[0] the NVMe result.
func (p *Passthrough) Raw(ctx context.Context, cmds ...RawCmd) ([]uring.Result, error) {
	cs := make([]Command, len(cmds))
	for i := range cmds {
		cs[i] = cmds[i].Cmd
		cs[i].NSID = p.nsid
	}
	return p.submit(ctx, cs, func(i int) ([]byte, bool) { return cmds[i].Buf, cmds[i].Link })
}

// Flush sends an NVMe Flush (opcode 0): the device makes completed writes durable.
func (p *Passthrough) Flush(ctx context.Context) error {
	res, err := p.Raw(ctx, RawCmd{Cmd: EncodeFlush(p.nsid)})
	if err != nil {
		return err
	}
	return DecodeResult(OpFlush, res[0].Res)
}

// IdentifyController returns the controller's Identify data (CNS 01h).
func (p *Passthrough) IdentifyController() (Controller, error) {
	buf := make([]byte, IdentifyBytes)
	if err := AdminIdentify(p.fd, EncodeIdentify(0, CNSController, 0, 0), buf); err != nil {
		return Controller{}, err
	}
	return ParseController(buf)
}

// IdentifyNamespace returns the NVM Identify Namespace data (CNS 00h).
func (p *Passthrough) IdentifyNamespace() (NVMNamespace, error) {
	buf := make([]byte, IdentifyBytes)
	if err := AdminIdentify(p.fd, EncodeIdentify(p.nsid, CNSNamespace, 0, 0), buf); err != nil {
		return NVMNamespace{}, err
	}
	return ParseNVMNamespace(buf)
}

// FrontStats returns the counters of the ring the commands go through
// (stalled commands among them).
func (p *Passthrough) FrontStats() uring.FrontStats { return p.front.Stats() }

// KVIdentify returns the KV Identify Namespace data read at open.
func (p *Passthrough) KVIdentify() KVNamespace { return p.kvns }

// Close waits for in-flight commands and closes the ring and device. Idempotent.
func (p *Passthrough) Close() error {
	p.closeOnce.Do(func() {
		var errs []error
		if p.front != nil {
			errs = append(errs, p.front.Close())
		}
		errs = append(errs, closeFd(p.fd))
		p.closeErr = errors.Join(errs...)
	})
	return p.closeErr
}

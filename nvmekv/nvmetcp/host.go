package nvmetcp

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/dhchap"
)

// HostOptions configure Connect.
type HostOptions struct {
	// SubNQN is the subsystem to connect to and HostNQN who connects;
	// both required.
	SubNQN, HostNQN string
	// HostID is the host identifier (a UUID); default derived from HostNQN.
	HostID [16]byte
	// KATOMs is the keep-alive timeout announced in Connect; 0 (the
	// default) asks the controller for none.
	KATOMs uint32
	// Secret is the host's DH-HMAC-CHAP secret, used when the controller
	// asks for authentication; CtrlSecret, when set, makes the host
	// authenticate the controller too.
	Secret, CtrlSecret *dhchap.Secret
	// Hashes and Groups the host offers; default all.
	Hashes []dhchap.HashID
	Groups []dhchap.DHGroup
	// IOQueue connects one I/O queue as well.
	IOQueue bool
	// Timeout bounds the dial and each exchange; default 30 s.
	Timeout time.Duration
}

// Host is a controller a host connected to: its admin queue and, with
// HostOptions.IOQueue, one I/O queue. Not a keep-alive sender: announce
// no KATO, or send Keep Alive yourself.
type Host struct {
	AdminQ *Queue
	IOQ    *Queue // nil without HostOptions.IOQueue
	CNTLID uint16
	// Authenticated reports that the controller asked for DH-HMAC-CHAP
	// and every queue passed it.
	Authenticated bool

	opts HostOptions
	tid  uint16
}

// Connect connects to the subsystem at addr as the Linux host does
// (drivers/nvme/host/fabrics.c nvmf_connect_admin_queue, core.c
// nvme_enable_ctrl): Connect, DH-HMAC-CHAP when the Connect response has
// ATR set, enable with CC.EN until CSTS.RDY, and, with IOQueue, Number of
// Queues and an I/O queue Connect (authenticated likewise).
func Connect(addr string, o HostOptions) (*Host, error) {
	if o.SubNQN == "" || o.HostNQN == "" {
		return nil, fmt.Errorf("%w: SubNQN and HostNQN are required", ErrBadOptions)
	}
	if o.HostID == ([16]byte{}) {
		s := sha256.Sum256([]byte(o.HostNQN))
		copy(o.HostID[:], s[:16])
	}
	if o.Timeout == 0 {
		o.Timeout = 30 * time.Second
	}
	h := &Host{opts: o}
	ok := false
	defer func() {
		if !ok {
			h.Close()
		}
	}()
	var err error
	if h.AdminQ, err = h.connectQueue(addr, 0, 31, CntlidAny); err != nil {
		return nil, err
	}
	for _, step := range []struct {
		what string
		do   func() (Result, error)
	}{
		{"Property Set CC (disable)", func() (Result, error) { return h.AdminQ.PropSet(RegCC, CCDisabled) }},
		{"Property Set CC (enable)", func() (Result, error) { return h.AdminQ.PropSet(RegCC, CCEnable) }},
		{"Property Get CSTS", func() (Result, error) { return h.AdminQ.PropGet(RegCSTS, false) }},
	} {
		r, err := step.do()
		if err = resultErr(OpFabrics, r, err); err != nil {
			return nil, fmt.Errorf("nvmetcp: %s: %w", step.what, err)
		}
		if step.what == "Property Get CSTS" && r.DW0&CSTSReady == 0 {
			return nil, fmt.Errorf("%w: CSTS %#x is not ready after CC.EN", ErrProtocol, r.DW0)
		}
	}
	if o.IOQueue {
		id := make([]byte, nvmekv.IdentifyBytes)
		if _, err := h.Admin(context.Background(), nvmekv.EncodeIdentify(0, nvmekv.CNSController, 0, 0), id); err != nil {
			return nil, err
		}
		if _, err := h.Admin(context.Background(), nvmekv.Command{Opcode: 0x09, CDW10: 0x07}, nil); err != nil { // Set Features Number of Queues: one
			return nil, err
		}
		if h.IOQ, err = h.connectQueue(addr, 1, 127, h.CNTLID); err != nil {
			return nil, err
		}
		h.IOQ.SetInline(int(binary.LittleEndian.Uint32(id[1792:]))*16 - SQEBytes) // IOCCSZ
	}
	ok = true
	return h, nil
}

// connectQueue dials a queue, connects it and authenticates it when asked.
func (h *Host) connectQueue(addr string, qid, sqsize, cntlid uint16) (*Queue, error) {
	q, err := Dial(addr, h.opts.Timeout)
	if err != nil {
		return nil, err
	}
	r, err := q.Connect(ConnectParams{QID: qid, SQSize: sqsize, CNTLID: cntlid, KATOMs: h.opts.KATOMs, HostID: h.opts.HostID, SubNQN: h.opts.SubNQN, HostNQN: h.opts.HostNQN})
	if err = resultErr(OpFabrics, r, err); err != nil {
		q.Close()
		return nil, fmt.Errorf("nvmetcp: Connect queue %d to %s as %s: %w", qid, h.opts.SubNQN, h.opts.HostNQN, err)
	}
	if qid == 0 {
		h.CNTLID = uint16(r.DW0)
	}
	if r.DW0&ConnectAuthASCR != 0 {
		q.Close()
		return nil, fmt.Errorf("%w: the controller requires a secure channel (TLS), which this host does not speak", ErrAuth)
	}
	if r.DW0&ConnectAuthATR == 0 {
		return q, nil
	}
	if h.opts.Secret == nil {
		q.Close()
		return nil, fmt.Errorf("%w: the controller requires DH-HMAC-CHAP and no secret is configured for %s", ErrAuth, h.opts.HostNQN)
	}
	cfg := dhchap.Config{SubNQN: h.opts.SubNQN, HostNQN: h.opts.HostNQN, HostKey: *h.opts.Secret, CtrlKey: h.opts.CtrlSecret,
		Hashes: h.opts.Hashes, Groups: h.opts.Groups}
	h.tid++
	err = dhchap.Authenticate(cfg, h.tid, func(b []byte) error {
		r, err := q.Exec(AuthSQE(true, uint32(len(b))), b, 0)
		return resultErr(OpFabrics, r, err)
	}, func() ([]byte, error) {
		r, err := q.Exec(AuthSQE(false, authReceiveBytes), nil, authReceiveBytes)
		return r.Data, resultErr(OpFabrics, r, err)
	})
	if err != nil {
		q.Close()
		return nil, fmt.Errorf("%w: queue %d: %w", ErrAuth, qid, err)
	}
	h.Authenticated = true
	return q, nil
}

// authReceiveBytes is the Authentication Receive buffer, the Linux host's
// (drivers/nvme/host/auth.c CHAP_BUF_SIZE: enough for ffdhe8192).
const authReceiveBytes = 4096

// resultErr turns a transport error or an NVMe status into an error.
func resultErr(opcode uint8, r Result, err error) error {
	if err != nil {
		return err
	}
	return nvmekv.AdminStatus(opcode, int32(r.Status))
}

// Admin runs admin command c on the admin queue: buf is its data, sent to
// the controller when the opcode's bit 0 says so, read into otherwise. It
// returns DW0, or a *nvmekv.StatusError for an NVMe status. ctx bounds the
// wait (the connection is closed when it ends first).
func (h *Host) Admin(ctx context.Context, c nvmekv.Command, buf []byte) (uint32, error) {
	stop := context.AfterFunc(ctx, func() { h.AdminQ.Conn().Close() })
	defer stop()
	h.AdminQ.Conn().SetDeadline(time.Now().Add(h.opts.Timeout))
	r, err := h.AdminQ.ExecData(c.Bytes(), buf)
	if err != nil && ctx.Err() != nil {
		err = errors.Join(ctx.Err(), err)
	}
	if err = resultErr(c.Opcode, r, err); err != nil {
		return 0, err
	}
	return uint32(r.DW0), nil
}

// Close closes the queues (the controller goes away with its admin queue).
func (h *Host) Close() error {
	var errs []error
	for _, q := range []*Queue{h.IOQ, h.AdminQ} {
		if q != nil {
			errs = append(errs, q.Close())
		}
	}
	return errors.Join(errs...)
}

package tcptarget

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tiercache/tiercache/nvmekv/dhchap"
	"github.com/tiercache/tiercache/nvmekv/nvmetcp"
	"go.uber.org/zap"
)

// conn is one NVMe/TCP connection: one queue (admin or I/O) after its
// Connect.
type conn struct {
	t  *Target
	nc net.Conn
	r  *bufio.Reader

	wmu sync.Mutex
	w   *bufio.Writer

	// Set by Connect (reader goroutine only, read by workers after).
	ctrl   *controller
	qid    uint16
	depth  int  // sqsize+1: the most commands in flight
	noFlow bool // CATTR bit 2: SQ flow control disabled (sq_head 0xFFFF)
	sqHead uint16

	// DH-HMAC-CHAP of this queue (auth.go): set by Connect when the host
	// must authenticate.
	auth         *dhchap.Transaction
	authDeadline *time.Timer
	authed       atomic.Bool
	authFailed   bool

	mu       sync.Mutex
	inflight int
	pending  map[uint16]*command // awaiting H2CData, by TTAG
	nextTTag uint16
	wg       sync.WaitGroup // I/O workers
}

// command is a capsule being executed.
type command struct {
	sqe  [nvmetcp.SQEBytes]byte
	sgl  nvmetcp.SGL
	data []byte // write data (in capsule or H2CData) or read buffer
	got  int    // H2CData bytes received
}

func (c *command) opcode() uint8 { return c.sqe[0] }
func (c *command) cid() uint16   { return binary.LittleEndian.Uint16(c.sqe[2:]) }
func (c *command) nsid() uint32  { return binary.LittleEndian.Uint32(c.sqe[4:]) }
func (c *command) cdw(i int) uint32 {
	return binary.LittleEndian.Uint32(c.sqe[4*i:])
}

// isWrite is the data direction (NVMe Base Specification: opcode bits 1:0;
// Fabrics commands use FCTYPE; include/linux/nvme.h nvme_is_write).
func (c *command) isWrite() bool {
	if c.opcode() == nvmetcp.OpFabrics {
		return c.sqe[4]&1 != 0
	}
	return c.opcode()&1 != 0
}

// protoError ends a connection with a C2HTermReq.
type protoError struct {
	fes uint16
	fei uint32
	hdr []byte
	msg string
}

func (e *protoError) Error() string {
	return fmt.Sprintf("tcptarget: fatal transport error (FES %d, field at byte %d): %s", e.fes, e.fei, e.msg)
}
func (e *protoError) Unwrap() error { return ErrProtocol }

func protoErr(fes uint16, fei uint32, hdr []byte, f string, a ...any) error {
	return &protoError{fes: fes, fei: fei, hdr: append([]byte(nil), hdr...), msg: fmt.Sprintf(f, a...)}
}

func newConn(t *Target, nc net.Conn) *conn {
	return &conn{t: t, nc: nc, r: bufio.NewReaderSize(nc, 64<<10), w: bufio.NewWriterSize(nc, 64<<10),
		depth: nvmeAQDepth, pending: map[uint16]*command{}}
}

// nvmeAQDepth bounds the commands in flight before Connect says otherwise.
const nvmeAQDepth = 32

// serve runs the connection until EOF, an error or Close.
func (c *conn) serve() {
	err := c.loop()
	var pe *protoError
	if errors.As(err, &pe) {
		c.t.st.protoErrs.Add(1)
		c.t.log.Info("tcptarget: closing connection after a protocol error", zap.String("remote", c.nc.RemoteAddr().String()), zap.Error(err))
		c.send(nvmetcp.TermReq(pe.fes, pe.fei, pe.hdr))
	} else if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
		c.t.log.Debug("tcptarget: connection ended", zap.String("remote", c.nc.RemoteAddr().String()), zap.Error(err))
	}
	c.nc.Close()
	c.wg.Wait()
	c.endAuth()
	if c.ctrl != nil {
		if c.qid == 0 {
			c.t.dropController(c.ctrl)
		} else {
			c.ctrl.removeIOQueue(c.qid, c)
		}
	}
}

// send writes PDUs as one flush, serialized with other senders.
func (c *conn) send(pdus ...[]byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	for _, p := range pdus {
		if _, err := c.w.Write(p); err != nil {
			return err
		}
	}
	return c.w.Flush()
}

// respond completes a command: its read data as C2HData PDUs (LAST on the
// final one), then the CapsuleResp (TCP Transport Specification §3.6.2.8
// and §3.6.2.5; the Linux host reads data in order and ignores
// data_offset: nvme_tcp_recv_data).
func (c *conn) respond(cmd *command, status uint16, result uint64, data []byte) {
	c.wmu.Lock()
	var hdr [nvmetcp.DataHdrBytes]byte
	var err error
	chunk := c.t.opts.MaxH2CDataBytes
	for off := 0; off < len(data) && err == nil; off += chunk {
		n := min(chunk, len(data)-off)
		flags := uint8(0)
		if off+n == len(data) {
			flags = nvmetcp.FlagDataLast
		}
		nvmetcp.PutDataHdr(hdr[:], nvmetcp.PDUC2HData, flags, cmd.cid(), 0, uint32(off), uint32(n))
		if _, err = c.w.Write(hdr[:]); err == nil {
			_, err = c.w.Write(data[off : off+n])
		}
	}
	var resp [nvmetcp.RespBytes]byte
	nvmetcp.PutResp(resp[:], cmd.cid(), result, c.nextSQHead(), c.qid, status)
	if err == nil {
		if _, err = c.w.Write(resp[:]); err == nil {
			err = c.w.Flush()
		}
	}
	c.wmu.Unlock()
	c.mu.Lock()
	c.inflight--
	c.mu.Unlock()
	if err != nil {
		c.nc.Close()
	}
}

// nextSQHead is the SQ head pointer reported in a completion: a running
// count mod the queue size, or 0xFFFF with SQ flow control disabled (as
// nvmet_tcp does). Called with wmu held.
func (c *conn) nextSQHead() uint16 {
	if c.noFlow {
		return 0xffff
	}
	c.sqHead = (c.sqHead + 1) % uint16(c.depth)
	return c.sqHead
}

// loop reads PDUs and dispatches them.
func (c *conn) loop() error {
	c.nc.SetReadDeadline(time.Now().Add(c.t.opts.ICReqTimeout))
	if err := c.icReq(); err != nil {
		return err
	}
	c.nc.SetReadDeadline(time.Time{})
	maxCapsule := nvmetcp.CmdHdrBytes + max(fabricsInCapsuleBytes, c.t.opts.InCapsuleBytes)
	var ch [nvmetcp.CmdHdrBytes]byte
	for {
		if _, err := io.ReadFull(c.r, ch[:nvmetcp.CHBytes]); err != nil {
			return err
		}
		h := nvmetcp.ParseHeader(ch[:])
		want := hlenOf(h.Type)
		switch {
		case want == 0 || h.Type == nvmetcp.PDUICReq:
			return protoErr(nvmetcp.FESInvalidHeader, 0, ch[:nvmetcp.CHBytes], "PDU type %#x is not one a host sends after ICReq", h.Type)
		case int(h.HLen) != want:
			return protoErr(nvmetcp.FESInvalidHeader, 2, ch[:nvmetcp.CHBytes], "PDU type %#x has HLEN %d, want %d", h.Type, h.HLen, want)
		case h.Flags&(nvmetcp.FlagHDGST|nvmetcp.FlagDDGST) != 0:
			return protoErr(nvmetcp.FESInvalidHeader, 1, ch[:nvmetcp.CHBytes], "digest flags %#x set but no digests were negotiated", h.Flags)
		case h.PLen < uint32(want):
			return protoErr(nvmetcp.FESInvalidHeader, 4, ch[:nvmetcp.CHBytes], "PLEN %d is shorter than the %d-byte header", h.PLen, want)
		}
		hdr := ch[:want]
		if h.Type == nvmetcp.PDUH2CTermReq {
			return fmt.Errorf("tcptarget: host sent H2CTermReq")
		}
		if _, err := io.ReadFull(c.r, hdr[nvmetcp.CHBytes:]); err != nil {
			return err
		}
		dataLen := int(h.PLen) - want
		if dataLen > 0 && int(h.PDO) != want {
			return protoErr(nvmetcp.FESInvalidHeader, 3, hdr, "PDO %d, want %d (no header digest, no padding)", h.PDO, want)
		}
		switch h.Type {
		case nvmetcp.PDUCapsuleCmd:
			if int(h.PLen) > maxCapsule {
				return protoErr(nvmetcp.FESInvalidHeader, 4, hdr, "capsule of %d bytes exceeds the %d-byte limit", h.PLen, maxCapsule)
			}
			cmd := &command{}
			copy(cmd.sqe[:], hdr[nvmetcp.CHBytes:])
			if dataLen > 0 {
				cmd.data = make([]byte, dataLen)
				if _, err := io.ReadFull(c.r, cmd.data); err != nil {
					return err
				}
			}
			if err := c.capsule(cmd, hdr); err != nil {
				return err
			}
		case nvmetcp.PDUH2CData:
			if err := c.h2cData(h, hdr, dataLen); err != nil {
				return err
			}
		}
	}
}

// fabricsInCapsuleBytes is the in-capsule data limit of admin and Fabrics
// commands (drivers/nvme/host/tcp.c NVME_TCP_ADMIN_CCSZ).
const fabricsInCapsuleBytes = 8192

// icReq reads the ICReq and answers with ICResp (TCP Transport
// Specification §3.6.2.2; struct nvme_tcp_icreq_pdu: PFV at 8, HPDA at
// 10, digest at 11, MAXR2T at 12).
func (c *conn) icReq() error {
	var b [nvmetcp.ICBytes]byte
	if _, err := io.ReadFull(c.r, b[:nvmetcp.CHBytes]); err != nil {
		return err
	}
	h := nvmetcp.ParseHeader(b[:])
	switch {
	case h.Type != nvmetcp.PDUICReq:
		return protoErr(nvmetcp.FESPDUSequence, 0, b[:nvmetcp.CHBytes], "first PDU is type %#x, not ICReq", h.Type)
	case h.HLen != nvmetcp.ICBytes:
		return protoErr(nvmetcp.FESInvalidHeader, 2, b[:nvmetcp.CHBytes], "ICReq HLEN %d, want 128", h.HLen)
	case h.PLen != nvmetcp.ICBytes:
		return protoErr(nvmetcp.FESInvalidHeader, 4, b[:nvmetcp.CHBytes], "ICReq PLEN %d, want 128", h.PLen)
	}
	if _, err := io.ReadFull(c.r, b[nvmetcp.CHBytes:]); err != nil {
		return err
	}
	if pfv := binary.LittleEndian.Uint16(b[8:]); pfv != 0 {
		return protoErr(nvmetcp.FESUnsupportedParams, 8, b[:], "PDU format version %d, only 0 is supported", pfv)
	}
	if hpda := b[10]; hpda != 0 {
		return protoErr(nvmetcp.FESUnsupportedParams, 10, b[:], "host PDU data alignment %d is not supported", hpda)
	}
	// Digests asked for are refused by answering 0; the host then closes
	// (nvme_tcp_init_connection compares the bits).
	return c.send(nvmetcp.ICResp(uint32(c.t.opts.MaxH2CDataBytes)))
}

// capsule starts a command: it takes a slot, checks the data descriptor,
// then executes it now (in-capsule or no write data) or after R2T/H2CData.
func (c *conn) capsule(cmd *command, hdr []byte) error {
	c.mu.Lock()
	if c.inflight >= c.depth {
		c.mu.Unlock()
		return protoErr(nvmetcp.FESPDUSequence, 0, hdr, "more than %d commands in flight on queue %d", c.depth, c.qid)
	}
	c.inflight++
	c.mu.Unlock()
	c.t.st.cmds.Add(1)
	cmd.sgl = nvmetcp.ParseSGL(cmd.sqe[:])
	if st := c.checkData(cmd); st != scSuccess {
		c.respond(cmd, st, 0, nil)
		return nil
	}
	if c.ctrl != nil && c.authPending(cmd) {
		c.respond(cmd, scAuthRequired|scDNR, 0, nil) // nothing before DH-HMAC-CHAP but its own commands
		return nil
	}
	if cmd.isWrite() && cmd.sgl.Len > 0 && cmd.data == nil {
		if st := c.precheck(cmd); st != scSuccess {
			c.respond(cmd, st, 0, nil)
			return nil
		}
		return c.r2t(cmd)
	}
	c.dispatch(cmd)
	return nil
}

// checkData validates the command's SGL against the data that came with
// it: in-capsule data must be described by an offset descriptor of its
// exact length at offset 0 (ICDOFF 0); other data moves by a transport
// descriptor no longer than MaxTransferBytes.
func (c *conn) checkData(cmd *command) uint16 {
	s := cmd.sgl
	switch {
	case cmd.data != nil:
		if s.Type != nvmetcp.SGLInCapsule || s.Addr != 0 || int(s.Len) != len(cmd.data) || !cmd.isWrite() {
			return scSGLLengthInvalid | scDNR
		}
	case s.Len == 0:
	case s.Type != nvmetcp.SGLTransport:
		return scSGLTypeInvalid | scDNR
	case int(s.Len) > c.t.opts.MaxTransferBytes:
		return scSGLLengthInvalid | scDNR
	}
	return scSuccess
}

// r2t asks for a command's write data with one R2T for the whole transfer
// (the Linux host announces MAXR2T 0: one outstanding R2T per command).
func (c *conn) r2t(cmd *command) error {
	c.mu.Lock()
	ttag := c.nextTTag
	for c.pending[ttag] != nil {
		ttag++
	}
	c.nextTTag = ttag + 1
	cmd.data = make([]byte, cmd.sgl.Len)
	c.pending[ttag] = cmd
	c.mu.Unlock()
	var b [nvmetcp.DataHdrBytes]byte
	nvmetcp.PutDataHdr(b[:], nvmetcp.PDUR2T, 0, cmd.cid(), ttag, 0, cmd.sgl.Len)
	return c.send(b[:])
}

// h2cData takes one H2CData PDU (TCP Transport Specification §3.6.2.7;
// as nvmet_tcp_handle_h2c_data_pdu: known TTAG and CID, offset equal to
// the bytes received so far, no more than the R2T asked for, at most
// MAXH2CDATA).
func (c *conn) h2cData(h nvmetcp.Header, hdr []byte, n int) error {
	le := binary.LittleEndian
	cid, ttag, off, dl := le.Uint16(hdr[8:]), le.Uint16(hdr[10:]), le.Uint32(hdr[12:]), le.Uint32(hdr[16:])
	c.mu.Lock()
	cmd := c.pending[ttag]
	c.mu.Unlock()
	switch {
	case cmd == nil:
		return protoErr(nvmetcp.FESInvalidHeader, 10, hdr, "H2CData for unknown TTAG %d", ttag)
	case cmd.cid() != cid:
		return protoErr(nvmetcp.FESInvalidHeader, 8, hdr, "H2CData TTAG %d carries CID %d, the R2T was for %d", ttag, cid, cmd.cid())
	case int(dl) != n:
		return protoErr(nvmetcp.FESInvalidHeader, 16, hdr, "H2CData DATAL %d but the PDU holds %d bytes", dl, n)
	case n > c.t.opts.MaxH2CDataBytes:
		return protoErr(nvmetcp.FESInvalidHeader, 16, hdr, "H2CData of %d bytes exceeds MAXH2CDATA %d", n, c.t.opts.MaxH2CDataBytes)
	case int(off) != cmd.got || cmd.got+n > len(cmd.data):
		return protoErr(nvmetcp.FESDataOutOfRange, 12, hdr, "H2CData offset %d length %d, expected offset %d of %d", off, n, cmd.got, len(cmd.data))
	}
	if _, err := io.ReadFull(c.r, cmd.data[off:int(off)+n]); err != nil {
		return err
	}
	cmd.got += n
	last := h.Flags&nvmetcp.FlagDataLast != 0
	if last != (cmd.got == len(cmd.data)) {
		return protoErr(nvmetcp.FESPDUSequence, 1, hdr, "H2CData LAST flag %v at %d of %d bytes", last, cmd.got, len(cmd.data))
	}
	if last {
		c.mu.Lock()
		delete(c.pending, ttag)
		c.mu.Unlock()
		c.dispatch(cmd)
	}
	return nil
}

// dispatch executes a command whose data is complete: Fabrics and admin
// commands on the reader goroutine (they are short, and Connect must
// finish before the next capsule), I/O commands on a worker each.
func (c *conn) dispatch(cmd *command) {
	if cmd.opcode() == nvmetcp.OpFabrics {
		c.fabrics(cmd)
		return
	}
	switch {
	case c.ctrl == nil:
		c.respond(cmd, scCmdSeqError|scDNR, 0, nil) // nothing but Connect before Connect
	case c.qid == 0:
		c.admin(cmd)
	default:
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.io(cmd)
		}()
	}
}

// hlenOf is the header length a PDU type a host may send must carry (0
// for a type the host may not send).
func hlenOf(t uint8) int {
	switch t {
	case nvmetcp.PDUICReq:
		return nvmetcp.ICBytes
	case nvmetcp.PDUCapsuleCmd:
		return nvmetcp.CmdHdrBytes
	case nvmetcp.PDUH2CData, nvmetcp.PDUH2CTermReq:
		return nvmetcp.DataHdrBytes
	}
	return 0
}

package nvmetcp

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Queue is one NVMe/TCP host queue (one TCP connection): it speaks the
// PDU sequences the Linux host produces (drivers/nvme/host/tcp.c: ICReq,
// CapsuleCmd with in-capsule data up to its limit or R2T/H2CData beyond,
// C2HData then CapsuleResp), one command at a time. Safe for concurrent
// use (commands are serialized).
type Queue struct {
	nc     net.Conn
	r      *bufio.Reader
	maxH2C int
	inline int // in-capsule write limit

	mu         sync.Mutex
	cid        uint16
	r2ts       int
	lastSQHead uint16
}

// Result is a command's completion.
type Result struct {
	Status uint16 // status field without the phase bit (SC | SCT<<8 | CRD | M | DNR)
	DW0    uint64 // DW0 | DW1<<32
	Data   []byte // read data
}

// Dial connects to addr and exchanges ICReq/ICResp (checking the ICResp as
// the Linux host does). Every later read or write on the connection must
// finish within timeout of Dial or the last command's start.
func Dial(addr string, timeout time.Duration) (*Queue, error) {
	nc, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, fmt.Errorf("nvmetcp: dial %s: %w", addr, err)
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	q := NewQueue(nc)
	nc.SetDeadline(time.Now().Add(timeout))
	if _, err := nc.Write(ICReq()); err != nil {
		nc.Close()
		return nil, fmt.Errorf("nvmetcp: ICReq to %s: %w", addr, err)
	}
	resp := make([]byte, ICBytes)
	if _, err := io.ReadFull(q.r, resp); err != nil {
		nc.Close()
		return nil, fmt.Errorf("nvmetcp: ICResp from %s: %w", addr, err)
	}
	h := ParseHeader(resp)
	maxData := binary.LittleEndian.Uint32(resp[12:])
	if h.Type != PDUICResp || h.PLen != ICBytes || binary.LittleEndian.Uint16(resp[8:]) != 0 || resp[10] != 0 || resp[11] != 0 || maxData < 4096 || maxData%4 != 0 {
		nc.Close()
		return nil, fmt.Errorf("%w: ICResp %x from %s fails the Linux host's checks", ErrProtocol, resp[:16], addr)
	}
	q.maxH2C = int(maxData)
	return q, nil
}

// NewQueue wraps a connection that has not exchanged ICReq (tests send
// their own bytes on it).
func NewQueue(nc net.Conn) *Queue {
	return &Queue{nc: nc, r: bufio.NewReader(nc), inline: adminInCapsuleBytes}
}

// adminInCapsuleBytes is the in-capsule data limit of admin and Fabrics
// commands (drivers/nvme/host/tcp.c NVME_TCP_ADMIN_CCSZ).
const adminInCapsuleBytes = 8192

// Conn is the queue's connection.
func (q *Queue) Conn() net.Conn { return q.nc }

// Reader is the buffered reader of the connection (what Exec reads from).
func (q *Queue) Reader() *bufio.Reader { return q.r }

// SetInline sets the largest write sent in the capsule (an I/O queue's
// IOCCSZ·16−64; the default is the admin queue's 8 KiB).
func (q *Queue) SetInline(n int) { q.inline = n }

// R2Ts counts the R2Ts received so far.
func (q *Queue) R2Ts() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.r2ts
}

// LastSQHead is the SQ head pointer of the last completion.
func (q *Queue) LastSQHead() uint16 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.lastSQHead
}

// Close closes the connection.
func (q *Queue) Close() error { return q.nc.Close() }

// Lock and Unlock hold the queue between commands (a test writing its own
// PDUs in between).
func (q *Queue) Lock()   { q.mu.Lock() }
func (q *Queue) Unlock() { q.mu.Unlock() }

// Post sends a command, with write data w that fits in the capsule (or
// none), and returns its CID without waiting for its completion (an
// Asynchronous Event Request); Wait collects it. Other commands may run
// meanwhile only if they complete first.
func (q *Queue) Post(sqe [SQEBytes]byte, w []byte) (uint16, error) {
	if len(w) > q.inline {
		return 0, fmt.Errorf("%w: Post takes in-capsule data only (%d bytes, the limit is %d)", ErrBadOptions, len(w), q.inline)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	cid := q.send(&sqe, w)
	return cid, q.write(&sqe, w)
}

// Wait reads PDUs until the completion of a command Post sent.
func (q *Queue) Wait(cid uint16) (Result, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.await(cid, nil, 0)
}

// Exec sends one command with write data w (or a read buffer of readLen
// bytes) and waits for its completion. The CID, PSDT and data descriptor
// of sqe are Exec's.
func (q *Queue) Exec(sqe [SQEBytes]byte, w []byte, readLen int) (Result, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	cid := q.send(&sqe, w)
	n := readLen
	if len(w) > 0 {
		n = len(w)
	}
	binary.LittleEndian.PutUint32(sqe[SGLOffset+8:], uint32(n))
	if err := q.write(&sqe, w); err != nil {
		return Result{}, err
	}
	return q.await(cid, w, readLen)
}

// ExecData runs sqe with buf as its data: sent to the controller when the
// opcode's bit 0 says so (nvme_is_write), read into buf otherwise.
func (q *Queue) ExecData(sqe [SQEBytes]byte, buf []byte) (Result, error) {
	if sqe[0]&1 != 0 {
		return q.Exec(sqe, buf, 0)
	}
	r, err := q.Exec(sqe, nil, len(buf))
	copy(buf, r.Data)
	return r, err
}

// send assigns the next CID and the data descriptor (in the capsule or by
// the transport) to sqe; the caller holds mu.
func (q *Queue) send(sqe *[SQEBytes]byte, w []byte) uint16 {
	q.cid = (q.cid + 1) & 0x0fff
	le := binary.LittleEndian
	le.PutUint16(sqe[2:], q.cid)
	sqe[1] |= SQEFlagsSGL
	le.PutUint64(sqe[SGLOffset:], 0)
	le.PutUint32(sqe[SGLOffset+8:], uint32(len(w)))
	sqe[SGLOffset+15] = SGLTransport
	if q.inCapsule(w) {
		sqe[SGLOffset+15] = SGLInCapsule
	}
	return q.cid
}

func (q *Queue) inCapsule(w []byte) bool { return len(w) > 0 && len(w) <= q.inline }

// write sends the CapsuleCmd of sqe with w in it when it fits.
func (q *Queue) write(sqe *[SQEBytes]byte, w []byte) error {
	in := q.inCapsule(w)
	pdu := make([]byte, CmdHdrBytes, CmdHdrBytes+len(w))
	h := Header{Type: PDUCapsuleCmd, HLen: CmdHdrBytes, PLen: CmdHdrBytes}
	if in {
		h.PDO, h.PLen = CmdHdrBytes, uint32(CmdHdrBytes+len(w))
	}
	h.Put(pdu)
	copy(pdu[CHBytes:], sqe[:])
	if in {
		pdu = append(pdu, w...)
	}
	_, err := q.nc.Write(pdu)
	return err
}

// await reads PDUs until the completion of cid, answering R2Ts with w.
func (q *Queue) await(cid uint16, w []byte, readLen int) (Result, error) {
	le := binary.LittleEndian
	var res Result
	for {
		var hb [DataHdrBytes]byte
		if _, err := io.ReadFull(q.r, hb[:]); err != nil {
			return res, fmt.Errorf("nvmetcp: read PDU header: %w", err)
		}
		ph := ParseHeader(hb[:])
		if ph.HLen != DataHdrBytes {
			return res, fmt.Errorf("%w: PDU type %#x with HLEN %d", ErrProtocol, ph.Type, ph.HLen)
		}
		switch ph.Type {
		case PDUCapsuleResp:
			if got := le.Uint16(hb[20:]); got != cid {
				return res, fmt.Errorf("%w: CapsuleResp for CID %d, sent %d", ErrProtocol, got, cid)
			}
			res.DW0, res.Status = le.Uint64(hb[8:]), le.Uint16(hb[22:])>>1
			q.lastSQHead = le.Uint16(hb[16:])
			return res, nil
		case PDUC2HData:
			dl := int(le.Uint32(hb[16:]))
			if le.Uint16(hb[8:]) != cid || int(ph.PLen) != DataHdrBytes+dl || int(le.Uint32(hb[12:])) != len(res.Data) {
				return res, fmt.Errorf("%w: C2HData %x does not follow the data so far (%d bytes)", ErrProtocol, hb, len(res.Data))
			}
			if len(res.Data)+dl > readLen {
				return res, fmt.Errorf("%w: C2HData overruns the %d-byte buffer", ErrProtocol, readLen)
			}
			b := make([]byte, dl)
			if _, err := io.ReadFull(q.r, b); err != nil {
				return res, err
			}
			res.Data = append(res.Data, b...)
		case PDUR2T:
			q.r2ts++
			if err := q.h2cData(hb[:], cid, w); err != nil {
				return res, err
			}
		case PDUC2HTermReq:
			return res, fmt.Errorf("%w: C2HTermReq FES %d", ErrTerminated, le.Uint16(hb[8:]))
		default:
			return res, fmt.Errorf("%w: unexpected PDU type %#x", ErrProtocol, ph.Type)
		}
	}
}

// h2cData answers one R2T with H2CData PDUs of at most MAXH2CDATA bytes.
func (q *Queue) h2cData(r2t []byte, cid uint16, w []byte) error {
	le := binary.LittleEndian
	ttag, off, rl := le.Uint16(r2t[10:]), int(le.Uint32(r2t[12:])), int(le.Uint32(r2t[16:]))
	if le.Uint16(r2t[8:]) != cid || rl == 0 || off+rl > len(w) {
		return fmt.Errorf("%w: bad R2T %x for a %d-byte write", ErrProtocol, r2t, len(w))
	}
	for o := off; o < off+rl; o += q.maxH2C {
		m := min(q.maxH2C, off+rl-o)
		var dh [DataHdrBytes]byte
		flags := uint8(0)
		if o+m == off+rl {
			flags = FlagDataLast
		}
		PutDataHdr(dh[:], PDUH2CData, flags, cid, ttag, uint32(o), uint32(m))
		if _, err := q.nc.Write(append(dh[:], w[o:o+m]...)); err != nil {
			return err
		}
	}
	return nil
}

// Connect sends Connect (in-capsule, as the Linux host does).
func (q *Queue) Connect(p ConnectParams) (Result, error) {
	s, d := ConnectCommand(p)
	return q.Exec(s, d, 0)
}

// PropGet reads a controller property (ATTRIB bit 0: 8 bytes).
func (q *Queue) PropGet(off uint32, wide bool) (Result, error) {
	s := FabricsSQE(FCPropertyGet)
	if wide {
		s[40] = 1
	}
	binary.LittleEndian.PutUint32(s[44:], off)
	return q.Exec(s, nil, 0)
}

// PropSet writes a 4-byte controller property.
func (q *Queue) PropSet(off, v uint32) (Result, error) {
	s := FabricsSQE(FCPropertySet)
	binary.LittleEndian.PutUint32(s[44:], off)
	binary.LittleEndian.PutUint32(s[48:], v)
	return q.Exec(s, nil, 0)
}

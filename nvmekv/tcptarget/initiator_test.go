package tcptarget

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tiercache/tiercache/nvmekv"
)

// queue is a minimal NVMe/TCP host queue for the tests: it speaks the PDU
// sequences the Linux host produces (drivers/nvme/host/tcp.c: ICReq,
// CapsuleCmd with in-capsule data up to its limit or R2T/H2CData beyond,
// C2HData then CapsuleResp), one command at a time.
type queue struct {
	nc       net.Conn
	r        *bufio.Reader
	maxH2C   int
	inline   int // in-capsule write limit
	cid      uint16
	mu       sync.Mutex
	r2ts     int // R2Ts received (so a test can see a refused Store asked for no data)
	lastSQHd uint16
}

const hostNQN = "nqn.2014-08.org.nvmexpress:uuid:tiercache-test-host"

var hostID = [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

// dialQueue connects and exchanges ICReq/ICResp.
func dialQueue(t testing.TB, addr string) *queue {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(time.Minute))
	q := &queue{nc: nc, r: bufio.NewReader(nc), inline: fabricsInCapsuleBytes}
	ic := make([]byte, ICBytes)
	header{Type: PDUICReq, HLen: ICBytes, PLen: ICBytes}.put(ic)
	if _, err := nc.Write(ic); err != nil {
		t.Fatalf("ICReq: %v", err)
	}
	resp := make([]byte, ICBytes)
	if _, err := io.ReadFull(q.r, resp); err != nil {
		t.Fatalf("ICResp: %v", err)
	}
	h := parseHeader(resp)
	maxData := binary.LittleEndian.Uint32(resp[12:])
	if h.Type != PDUICResp || h.PLen != ICBytes || binary.LittleEndian.Uint16(resp[8:]) != 0 || resp[10] != 0 || resp[11] != 0 || maxData < 4096 || maxData%4 != 0 {
		t.Fatalf("ICResp %x fails the Linux host's checks", resp[:16])
	}
	q.maxH2C = int(maxData)
	return q
}

// result of one command.
type result struct {
	status uint16 // SF without the phase bit
	dw0    uint64
	data   []byte
}

// exec sends one command with write data w (or a read buffer of readLen
// bytes) and waits for its completion.
func (q *queue) exec(sqe [SQEBytes]byte, w []byte, readLen int) (result, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.cid = (q.cid + 1) & 0x0fff
	cid := q.cid
	le := binary.LittleEndian
	le.PutUint16(sqe[2:], cid)
	sqe[1] |= sqeFlagsSGL
	inCapsule := len(w) > 0 && len(w) <= q.inline
	n := readLen
	if len(w) > 0 {
		n = len(w)
	}
	le.PutUint64(sqe[24:], 0)
	le.PutUint32(sqe[32:], uint32(n))
	sqe[39] = sglTransport
	if inCapsule {
		sqe[39] = sglInCapsule
	}
	pdu := make([]byte, CmdHdrBytes)
	h := header{Type: PDUCapsuleCmd, HLen: CmdHdrBytes, PLen: CmdHdrBytes}
	if inCapsule {
		h.PDO, h.PLen = CmdHdrBytes, uint32(CmdHdrBytes+len(w))
	}
	h.put(pdu)
	copy(pdu[CHBytes:], sqe[:])
	if inCapsule {
		pdu = append(pdu, w...)
	}
	if _, err := q.nc.Write(pdu); err != nil {
		return result{}, err
	}
	var res result
	for {
		var hb [DataHdrBytes]byte
		if _, err := io.ReadFull(q.r, hb[:]); err != nil {
			return res, fmt.Errorf("read PDU header: %w", err)
		}
		ph := parseHeader(hb[:])
		if ph.HLen != DataHdrBytes {
			return res, fmt.Errorf("PDU type %#x with HLEN %d", ph.Type, ph.HLen)
		}
		switch ph.Type {
		case PDUCapsuleResp:
			if got := le.Uint16(hb[20:]); got != cid {
				return res, fmt.Errorf("CapsuleResp for CID %d, sent %d", got, cid)
			}
			res.dw0, res.status = le.Uint64(hb[8:]), le.Uint16(hb[22:])>>1
			q.lastSQHd = le.Uint16(hb[16:])
			return res, nil
		case PDUC2HData:
			dl := int(le.Uint32(hb[16:]))
			if le.Uint16(hb[8:]) != cid || int(ph.PLen) != DataHdrBytes+dl || int(le.Uint32(hb[12:])) != len(res.data) {
				return res, fmt.Errorf("C2HData %x does not follow the data so far (%d bytes)", hb, len(res.data))
			}
			if len(res.data)+dl > readLen {
				return res, fmt.Errorf("C2HData overruns the %d-byte buffer", readLen)
			}
			b := make([]byte, dl)
			if _, err := io.ReadFull(q.r, b); err != nil {
				return res, err
			}
			res.data = append(res.data, b...)
		case PDUR2T:
			q.r2ts++
			ttag, off, rl := le.Uint16(hb[10:]), int(le.Uint32(hb[12:])), int(le.Uint32(hb[16:]))
			if le.Uint16(hb[8:]) != cid || rl == 0 || off+rl > len(w) {
				return res, fmt.Errorf("bad R2T %x for a %d-byte write", hb, len(w))
			}
			for o := off; o < off+rl; o += q.maxH2C {
				m := min(q.maxH2C, off+rl-o)
				var dh [DataHdrBytes]byte
				flags := uint8(0)
				if o+m == off+rl {
					flags = FlagDataLast
				}
				putDataHdr(dh[:], PDUH2CData, flags, cid, ttag, uint32(o), uint32(m))
				if _, err := q.nc.Write(append(dh[:], w[o:o+m]...)); err != nil {
					return res, err
				}
			}
		case PDUC2HTermReq:
			return res, fmt.Errorf("%w: C2HTermReq FES %d", ErrProtocol, le.Uint16(hb[8:]))
		default:
			return res, fmt.Errorf("unexpected PDU type %#x", ph.Type)
		}
	}
}

// fabricsSQE builds a Fabrics command of type fctype.
func fabricsSQE(fctype uint8) [SQEBytes]byte {
	var s [SQEBytes]byte
	s[0], s[4] = opFabrics, fctype
	return s
}

// connect sends Connect for qid and returns its status and CNTLID.
func (q *queue) connect(qid, sqsize, cntlid uint16, katoMs uint32, subNQN string) (result, error) {
	s := fabricsSQE(fcConnect)
	le := binary.LittleEndian
	le.PutUint16(s[42:], qid)
	le.PutUint16(s[44:], sqsize)
	le.PutUint32(s[48:], katoMs)
	d := make([]byte, connectBytes)
	copy(d, hostID[:])
	le.PutUint16(d[16:], cntlid)
	copy(d[256:], subNQN)
	copy(d[512:], hostNQN)
	return q.exec(s, d, 0)
}

func (q *queue) propGet(off uint32, wide bool) (result, error) {
	s := fabricsSQE(fcPropertyGet)
	if wide {
		s[40] = 1
	}
	binary.LittleEndian.PutUint32(s[44:], off)
	return q.exec(s, nil, 0)
}

func (q *queue) propSet(off, v uint32) (result, error) {
	s := fabricsSQE(fcPropertySet)
	binary.LittleEndian.PutUint32(s[44:], off)
	binary.LittleEndian.PutUint32(s[48:], v)
	return q.exec(s, nil, 0)
}

// adminSQE builds an admin command.
func adminSQE(op uint8, nsid uint32, cdw10, cdw11 uint32) [SQEBytes]byte {
	c := nvmekv.Command{Opcode: op, NSID: nsid, CDW10: cdw10, CDW11: cdw11}
	return c.Bytes()
}

// host is an admin queue and one I/O queue connected as the Linux host
// does it (drivers/nvme/host/tcp.c nvme_tcp_setup_ctrl; the steps of
// nvme-tcp.md §3.1).
type host struct {
	admin, io *queue
	cntlid    uint16
	limits    nvmekv.Limits
}

// mustR returns a checker of one command's outcome: it fails t unless the
// command completed with status 0.
func mustR(t testing.TB, what string) func(result, error) result {
	return func(r result, err error) result {
		t.Helper()
		if err != nil || r.status != 0 {
			t.Fatalf("%s: status %#x, %v", what, r.status, err)
		}
		return r
	}
}

func connectHost(t testing.TB, addr, nqn string) *host {
	t.Helper()
	h := &host{admin: dialQueue(t, addr)}
	r := mustR(t, "admin Connect")(h.admin.connect(0, 31, connectCntlidAny, 5000, nqn))
	h.cntlid = uint16(r.dw0)
	cap := mustR(t, "Property Get CAP")(h.admin.propGet(regCAP, true)).dw0
	if cap&capCSSIOCS == 0 {
		t.Fatalf("CAP %#x lacks the I/O command sets bit", cap)
	}
	mustR(t, "Property Set CC (EN=0, CSS=110b)")(h.admin.propSet(regCC, 0x00460060))
	mustR(t, "Property Set CC (EN=1)")(h.admin.propSet(regCC, 0x00460061))
	if csts := mustR(t, "Property Get CSTS")(h.admin.propGet(regCSTS, false)).dw0; csts&cstsRDY == 0 {
		t.Fatalf("CSTS %#x not ready after CC.EN", csts)
	}
	id := mustR(t, "Identify Controller")(h.admin.exec(adminSQE(adminIdentify, 0, uint32(nvmekv.CNSController), 0), nil, 4096))
	ioccsz := binary.LittleEndian.Uint32(id.data[1792:])
	mustR(t, "Set Features Number of Queues")(h.admin.exec(adminSQE(adminSetFeatures, 0, featNumQueues, 0), nil, 0))
	h.io = dialQueue(t, addr)
	h.io.inline = int(ioccsz)*16 - SQEBytes
	mustR(t, "I/O Connect")(h.io.connect(1, 127, h.cntlid, 0, nqn))
	kvid := mustR(t, "Identify KV namespace")(h.admin.exec(adminSQE(adminIdentify, 1, uint32(nvmekv.CNSIOCSNamespace), uint32(nvmekv.CSIKV)<<24), nil, 4096))
	kvns, err := nvmekv.ParseKVNamespace(kvid.data)
	if err != nil {
		t.Fatal(err)
	}
	f := kvns.Format()
	h.limits = nvmekv.Limits{MaxKeyLen: int(f.MaxKeyLen), MaxValueLen: int(f.MaxValueLen), MaxKeys: uint64(f.MaxKeys), Capacity: kvns.Size}
	return h
}

// hostNS is an nvmekv.Namespace over the host's I/O queue, encoding every
// command with nvmekv's encoder.
type hostNS struct {
	nvmekv.Singles
	h *host
}

func newHostNS(h *host) *hostNS {
	n := &hostNS{h: h}
	n.Singles.D = n
	return n
}

func (n *hostNS) Do(ctx context.Context, ops ...*nvmekv.Op) error {
	broken := false
	for _, op := range ops {
		if broken {
			op.Complete(-int32(syscall.ECANCELED), 0)
			broken = op.Link
			continue
		}
		c, err := op.Encode(1)
		if err != nil {
			op.Err = err
			broken = op.Link
			continue
		}
		var w []byte
		readLen := 0
		if op.Code == nvmekv.OpStore {
			w = op.Buf
		} else {
			readLen = len(op.Buf)
		}
		r, err := n.h.io.exec(c.Bytes(), w, readLen)
		if err != nil {
			return err
		}
		if readLen > 0 {
			copy(op.Buf, r.data)
		}
		op.Complete(int32(r.status), r.dw0)
		broken = op.Err != nil && op.Link
	}
	return nil
}

func (n *hostNS) Flush(ctx context.Context) error {
	c := nvmekv.EncodeFlush(1)
	r, err := n.h.io.exec(c.Bytes(), nil, 0)
	if err != nil {
		return err
	}
	return nvmekv.DecodeResult(nvmekv.OpFlush, int32(r.status))
}

func (n *hostNS) Limits() nvmekv.Limits { return n.h.limits }
func (n *hostNS) Close() error          { return nil }

// raw sends a raw I/O command (for kvconform.Raw).
func (n *hostNS) raw(ctx context.Context, c nvmekv.Command, buf []byte) (int32, uint32, error) {
	var w []byte
	readLen := 0
	if c.Opcode&1 != 0 {
		w = buf
	} else {
		readLen = len(buf)
	}
	r, err := n.h.io.exec(c.Bytes(), w, readLen)
	if err != nil {
		return 0, 0, err
	}
	copy(buf, r.data)
	return int32(r.status), uint32(r.dw0), nil
}

var errNoTerm = errors.New("no C2HTermReq")

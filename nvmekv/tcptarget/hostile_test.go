package tcptarget

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/tiercache/tiercache/nvmekv"
)

// rawConn is a connection a test writes arbitrary bytes to.
func rawConn(t *testing.T, addr string, icreq bool) (net.Conn, *queue) {
	t.Helper()
	if icreq {
		q := dialQueue(t, addr)
		return q.nc, q
	}
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(time.Minute))
	return nc, &queue{nc: nc}
}

// readTerm reads PDUs until a C2HTermReq and returns its FES, or 0 if the
// connection closed without one.
func readTerm(t *testing.T, nc net.Conn) uint16 {
	t.Helper()
	for {
		var hb [TermHdrBytes]byte
		if _, err := io.ReadFull(nc, hb[:]); err != nil {
			return 0
		}
		h := parseHeader(hb[:])
		if h.Type == PDUC2HTermReq {
			if h.PLen < TermHdrBytes || h.PLen > TermMaxBytes {
				t.Fatalf("C2HTermReq PLEN %d", h.PLen)
			}
			io.CopyN(io.Discard, nc, int64(h.PLen)-TermHdrBytes)
			if _, err := nc.Read(make([]byte, 1)); err == nil {
				t.Fatal("the target sent more after its C2HTermReq")
			}
			return binary.LittleEndian.Uint16(hb[8:])
		}
		if h.PLen > TermHdrBytes {
			io.CopyN(io.Discard, nc, int64(h.PLen)-TermHdrBytes)
		}
	}
}

func pduHdr(typ, flags, hlen, pdo uint8, plen uint32, size int) []byte {
	b := make([]byte, size)
	header{Type: typ, Flags: flags, HLen: hlen, PDO: pdo, PLen: plen}.put(b)
	return b
}

// enabledAdmin connects an admin queue of depth sqsize+1 and enables the
// controller.
func enabledAdmin(t *testing.T, addr, nqn string, sqsize uint16) (*queue, uint16) {
	q := dialQueue(t, addr)
	r := mustR(t, "Connect")(q.connect(0, sqsize, connectCntlidAny, 0, nqn))
	mustR(t, "CC")(q.propSet(regCC, 0x00460061))
	return q, uint16(r.dw0)
}

// TestHostileInput sends broken PDUs of every kind (NT5): each gets a
// C2HTermReq with the right fatal error status (or, for a connection cut
// short, just a close), and the target keeps serving a host connected
// before, and new ones, with nothing stored lost.
func TestHostileInput(t *testing.T) {
	tg, addr := startTarget(t, Options{})
	good := newHostNS(connectHost(t, addr, tg.NQN()))
	ctx := t.Context()
	if err := good.Store(ctx, []byte("kept"), []byte("value"), 0); err != nil {
		t.Fatal(err)
	}
	sqe := func(op uint8) []byte {
		b := pduHdr(PDUCapsuleCmd, 0, CmdHdrBytes, 0, CmdHdrBytes, CmdHdrBytes)
		b[CHBytes] = op
		b[CHBytes+39] = sglTransport
		return b
	}
	cases := []struct {
		name  string
		icreq bool
		send  func(t *testing.T, nc net.Conn, q *queue)
		fes   uint16 // 0: closed without a TermReq
	}{
		{"capsule before ICReq", false, func(t *testing.T, nc net.Conn, q *queue) { nc.Write(sqe(0x06)) }, FESPDUSequence},
		{"ICReq PLEN 64", false, func(t *testing.T, nc net.Conn, q *queue) { nc.Write(pduHdr(PDUICReq, 0, ICBytes, 0, 64, 64)) }, FESInvalidHeader},
		{"ICReq PFV 1", false, func(t *testing.T, nc net.Conn, q *queue) {
			b := pduHdr(PDUICReq, 0, ICBytes, 0, ICBytes, ICBytes)
			b[8] = 1
			nc.Write(b)
		}, FESUnsupportedParams},
		{"5 bytes then close", false, func(t *testing.T, nc net.Conn, q *queue) {
			nc.Write([]byte{0, 0, 128, 0, 128})
			nc.(*net.TCPConn).CloseWrite()
		}, 0},
		{"half a capsule then close", true, func(t *testing.T, nc net.Conn, q *queue) {
			nc.Write(sqe(0x06)[:40])
			nc.(*net.TCPConn).CloseWrite()
		}, 0},
		{"unknown PDU type", true, func(t *testing.T, nc net.Conn, q *queue) { nc.Write(pduHdr(0x0a, 0, 24, 0, 24, 24)) }, FESInvalidHeader},
		{"a second ICReq", true, func(t *testing.T, nc net.Conn, q *queue) { nc.Write(pduHdr(PDUICReq, 0, ICBytes, 0, ICBytes, ICBytes)) }, FESInvalidHeader},
		{"C2HData from the host", true, func(t *testing.T, nc net.Conn, q *queue) { nc.Write(pduHdr(PDUC2HData, 0, 24, 24, 24, 24)) }, FESInvalidHeader},
		{"capsule HLEN 24", true, func(t *testing.T, nc net.Conn, q *queue) { nc.Write(pduHdr(PDUCapsuleCmd, 0, 24, 0, 72, 72)) }, FESInvalidHeader},
		{"capsule PLEN below HLEN", true, func(t *testing.T, nc net.Conn, q *queue) {
			b := sqe(0x06)
			binary.LittleEndian.PutUint32(b[4:], 10)
			nc.Write(b)
		}, FESInvalidHeader},
		{"capsule of 1 GiB", true, func(t *testing.T, nc net.Conn, q *queue) {
			b := sqe(0x06)
			b[3] = CmdHdrBytes
			binary.LittleEndian.PutUint32(b[4:], 1<<30)
			nc.Write(b)
		}, FESInvalidHeader},
		{"digest flags without digests", true, func(t *testing.T, nc net.Conn, q *queue) {
			b := sqe(0x06)
			b[1] = FlagHDGST
			nc.Write(b)
		}, FESInvalidHeader},
		{"in-capsule data at the wrong PDO", true, func(t *testing.T, nc net.Conn, q *queue) {
			b := append(sqe(0x06), make([]byte, 16)...)
			b[3] = 80
			binary.LittleEndian.PutUint32(b[4:], uint32(len(b)))
			nc.Write(b)
		}, FESInvalidHeader},
		{"H2CData for an unknown TTAG", true, func(t *testing.T, nc net.Conn, q *queue) {
			b := pduHdr(PDUH2CData, FlagDataLast, 24, 24, 28, 28)
			binary.LittleEndian.PutUint32(b[16:], 4)
			nc.Write(b)
		}, FESInvalidHeader},
		{"more commands than the queue holds", false, func(t *testing.T, nc net.Conn, q *queue) {
			a, _ := enabledAdmin(t, addr, tg.NQN(), 2) // 3 slots
			aer := sqe(adminAER)
			for range 4 {
				a.nc.Write(aer)
			}
			if fes := readTerm(t, a.nc); fes != FESPDUSequence {
				t.Fatalf("fourth command on a 3-entry queue: FES %d, want %d", fes, FESPDUSequence)
			}
			nc.Close()
		}, 0},
		{"H2CData at the wrong offset", false, func(t *testing.T, nc net.Conn, q *queue) {
			_, cntlid := enabledAdmin(t, addr, tg.NQN(), 31)
			io := dialQueue(t, addr)
			mustR(t, "I/O Connect")(io.connect(1, 31, cntlid, 0, tg.NQN()))
			c, _ := nvmekv.EncodeStore(1, []byte("r2t"), 20000, 0)
			s := c.Bytes()
			b := pduHdr(PDUCapsuleCmd, 0, CmdHdrBytes, 0, CmdHdrBytes, CmdHdrBytes)
			copy(b[CHBytes:], s[:])
			b[CHBytes+1] = sqeFlagsSGL
			binary.LittleEndian.PutUint32(b[CHBytes+32:], 20000)
			b[CHBytes+39] = sglTransport
			io.nc.Write(b)
			var r2t [DataHdrBytes]byte
			if _, err := io.ReadFull(r2t[:]); err != nil || r2t[0] != PDUR2T {
				t.Fatalf("no R2T: %x %v", r2t, err)
			}
			d := pduHdr(PDUH2CData, 0, 24, 24, 24+100, 24+100)
			copy(d[8:12], r2t[8:12])                   // CID, TTAG
			binary.LittleEndian.PutUint32(d[12:], 100) // offset 100, expected 0
			binary.LittleEndian.PutUint32(d[16:], 100)
			io.nc.Write(d)
			if fes := readTerm(t, io.nc); fes != FESDataOutOfRange {
				t.Fatalf("H2CData at offset 100 of 0: FES %d, want %d", fes, FESDataOutOfRange)
			}
			nc.Close()
		}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nc, q := rawConn(t, addr, tc.icreq)
			tc.send(t, nc, q)
			if fes := readTerm(t, nc); fes != tc.fes {
				t.Fatalf("FES %d, want %d", fes, tc.fes)
			}
			buf := make([]byte, 8)
			if n, err := good.Retrieve(ctx, []byte("kept"), buf); err != nil || !bytes.Equal(buf[:n], []byte("value")) {
				t.Fatalf("the good connection after %q: %q, %v", tc.name, buf[:n], err)
			}
		})
	}
	// A new host still connects and reads what was stored.
	fresh := newHostNS(connectHost(t, addr, tg.NQN()))
	if ok, err := fresh.Exist(ctx, []byte("kept")); !ok || err != nil {
		t.Fatalf("a new host after the hostile connections: %v %v", ok, err)
	}
	if tg.Stats().ProtocolErrors < uint64(len(cases)-4) {
		t.Fatalf("protocol errors counted: %d", tg.Stats().ProtocolErrors)
	}
}

// ReadFull reads exactly len(b) bytes from the queue's connection.
func (q *queue) ReadFull(b []byte) (int, error) {
	if q.r == nil {
		return io.ReadFull(q.nc, b)
	}
	return io.ReadFull(q.r, b)
}

// TestConnectRefusals: Connect with bad fields gets its Fabrics status and
// the connection stays usable for a correct Connect (NT6).
func TestConnectRefusals(t *testing.T) {
	tg, addr := startTarget(t, Options{MaxControllers: 1})
	q := dialQueue(t, addr)
	for _, tc := range []struct {
		name           string
		qid, sq, cntid uint16
		want           uint16
	}{
		{"sqsize 0", 0, 0, connectCntlidAny, scConnectInvalidPar | scDNR},
		{"sqsize above MQES", 0, 1000, connectCntlidAny, scConnectInvalidPar | scDNR},
		{"admin with a CNTLID", 0, 31, 5, scConnectInvalidPar | scDNR},
	} {
		if r, err := q.connect(tc.qid, tc.sq, tc.cntid, 0, tg.NQN()); err != nil || r.status != tc.want {
			t.Fatalf("%s: %#x %v, want %#x", tc.name, r.status, err, tc.want)
		}
	}
	s := fabricsSQE(fcConnect)
	if r, err := q.exec(s, make([]byte, 1000), 0); err != nil || r.status != scSGLLengthInvalid|scDNR {
		t.Fatalf("Connect with 1000 bytes of data: %#x %v", r.status, err)
	}
	if r, err := q.exec(adminSQE(adminIdentify, 0, 1, 0), nil, 4096); err != nil || r.status != scCmdSeqError|scDNR {
		t.Fatalf("Identify before Connect: %#x %v", r.status, err)
	}
	mustR(t, "Connect")(q.connect(0, 31, connectCntlidAny, 0, tg.NQN()))
	if r, _ := q.exec(adminSQE(adminIdentify, 0, 1, 0), nil, 4096); r.status != scCmdSeqError|scDNR {
		t.Fatalf("Identify before CC.EN: %#x", r.status)
	}
	q2 := dialQueue(t, addr)
	if r, _ := q2.connect(0, 31, connectCntlidAny, 0, tg.NQN()); r.status != scConnectCtrlBusy|scDNR {
		t.Fatalf("a second controller over MaxControllers 1: %#x", r.status)
	}
	q.nc.Close()
	deadline := time.Now().Add(10 * time.Second)
	for tg.Stats().Controllers != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	mustR(t, "Connect after the first controller's admin queue closed")(q2.connect(0, 31, connectCntlidAny, 0, tg.NQN()))
}

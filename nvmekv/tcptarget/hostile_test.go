package tcptarget

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/nvmetcp"
)

// rawConn is a connection a test writes arbitrary bytes to.
func rawConn(t *testing.T, addr string, icreq bool) (net.Conn, *queue) {
	t.Helper()
	if icreq {
		q := dialQueue(t, addr)
		return q.Conn(), q
	}
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(time.Minute))
	return nc, nvmetcp.NewQueue(nc)
}

// readTerm reads PDUs until a C2HTermReq and returns its FES, or 0 if the
// connection closed without one.
func readTerm(t *testing.T, nc net.Conn) uint16 {
	t.Helper()
	for {
		var hb [nvmetcp.TermHdrBytes]byte
		if _, err := io.ReadFull(nc, hb[:]); err != nil {
			return 0
		}
		h := nvmetcp.ParseHeader(hb[:])
		if h.Type == nvmetcp.PDUC2HTermReq {
			if h.PLen < nvmetcp.TermHdrBytes || h.PLen > nvmetcp.TermMaxBytes {
				t.Fatalf("C2HTermReq PLEN %d", h.PLen)
			}
			io.CopyN(io.Discard, nc, int64(h.PLen)-nvmetcp.TermHdrBytes)
			if _, err := nc.Read(make([]byte, 1)); err == nil {
				t.Fatal("the target sent more after its C2HTermReq")
			}
			return binary.LittleEndian.Uint16(hb[8:])
		}
		if h.PLen > nvmetcp.TermHdrBytes {
			io.CopyN(io.Discard, nc, int64(h.PLen)-nvmetcp.TermHdrBytes)
		}
	}
}

func pduHdr(typ, flags, hlen, pdo uint8, plen uint32, size int) []byte {
	b := make([]byte, size)
	nvmetcp.Header{Type: typ, Flags: flags, HLen: hlen, PDO: pdo, PLen: plen}.Put(b)
	return b
}

// enabledAdmin connects an admin queue of depth sqsize+1 and enables the
// controller.
func enabledAdmin(t *testing.T, addr, nqn string, sqsize uint16) (*queue, uint16) {
	q := dialQueue(t, addr)
	r := mustR(t, "Connect")(connectQ(q, 0, sqsize, nvmetcp.CntlidAny, 0, nqn))
	mustR(t, "CC")(q.PropSet(nvmetcp.RegCC, 0x00460061))
	return q, uint16(r.DW0)
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
		b := pduHdr(nvmetcp.PDUCapsuleCmd, 0, nvmetcp.CmdHdrBytes, 0, nvmetcp.CmdHdrBytes, nvmetcp.CmdHdrBytes)
		b[nvmetcp.CHBytes] = op
		b[nvmetcp.CHBytes+39] = nvmetcp.SGLTransport
		return b
	}
	cases := []struct {
		name  string
		icreq bool
		send  func(t *testing.T, nc net.Conn, q *queue)
		fes   uint16 // 0: closed without a TermReq
	}{
		{"capsule before ICReq", false, func(t *testing.T, nc net.Conn, q *queue) { nc.Write(sqe(0x06)) }, nvmetcp.FESPDUSequence},
		{"ICReq PLEN 64", false, func(t *testing.T, nc net.Conn, q *queue) {
			nc.Write(pduHdr(nvmetcp.PDUICReq, 0, nvmetcp.ICBytes, 0, 64, 64))
		}, nvmetcp.FESInvalidHeader},
		{"ICReq PFV 1", false, func(t *testing.T, nc net.Conn, q *queue) {
			b := pduHdr(nvmetcp.PDUICReq, 0, nvmetcp.ICBytes, 0, nvmetcp.ICBytes, nvmetcp.ICBytes)
			b[8] = 1
			nc.Write(b)
		}, nvmetcp.FESUnsupportedParams},
		{"5 bytes then close", false, func(t *testing.T, nc net.Conn, q *queue) {
			nc.Write([]byte{0, 0, 128, 0, 128})
			nc.(*net.TCPConn).CloseWrite()
		}, 0},
		{"half a capsule then close", true, func(t *testing.T, nc net.Conn, q *queue) {
			nc.Write(sqe(0x06)[:40])
			nc.(*net.TCPConn).CloseWrite()
		}, 0},
		{"unknown PDU type", true, func(t *testing.T, nc net.Conn, q *queue) { nc.Write(pduHdr(0x0a, 0, 24, 0, 24, 24)) }, nvmetcp.FESInvalidHeader},
		{"a second ICReq", true, func(t *testing.T, nc net.Conn, q *queue) {
			nc.Write(pduHdr(nvmetcp.PDUICReq, 0, nvmetcp.ICBytes, 0, nvmetcp.ICBytes, nvmetcp.ICBytes))
		}, nvmetcp.FESInvalidHeader},
		{"C2HData from the host", true, func(t *testing.T, nc net.Conn, q *queue) { nc.Write(pduHdr(nvmetcp.PDUC2HData, 0, 24, 24, 24, 24)) }, nvmetcp.FESInvalidHeader},
		{"capsule HLEN 24", true, func(t *testing.T, nc net.Conn, q *queue) { nc.Write(pduHdr(nvmetcp.PDUCapsuleCmd, 0, 24, 0, 72, 72)) }, nvmetcp.FESInvalidHeader},
		{"capsule PLEN below HLEN", true, func(t *testing.T, nc net.Conn, q *queue) {
			b := sqe(0x06)
			binary.LittleEndian.PutUint32(b[4:], 10)
			nc.Write(b)
		}, nvmetcp.FESInvalidHeader},
		{"capsule of 1 GiB", true, func(t *testing.T, nc net.Conn, q *queue) {
			b := sqe(0x06)
			b[3] = nvmetcp.CmdHdrBytes
			binary.LittleEndian.PutUint32(b[4:], 1<<30)
			nc.Write(b)
		}, nvmetcp.FESInvalidHeader},
		{"digest flags without digests", true, func(t *testing.T, nc net.Conn, q *queue) {
			b := sqe(0x06)
			b[1] = nvmetcp.FlagHDGST
			nc.Write(b)
		}, nvmetcp.FESInvalidHeader},
		{"in-capsule data at the wrong PDO", true, func(t *testing.T, nc net.Conn, q *queue) {
			b := append(sqe(0x06), make([]byte, 16)...)
			b[3] = 80
			binary.LittleEndian.PutUint32(b[4:], uint32(len(b)))
			nc.Write(b)
		}, nvmetcp.FESInvalidHeader},
		{"H2CData for an unknown TTAG", true, func(t *testing.T, nc net.Conn, q *queue) {
			b := pduHdr(nvmetcp.PDUH2CData, nvmetcp.FlagDataLast, 24, 24, 28, 28)
			binary.LittleEndian.PutUint32(b[16:], 4)
			nc.Write(b)
		}, nvmetcp.FESInvalidHeader},
		{"more commands than the queue holds", false, func(t *testing.T, nc net.Conn, q *queue) {
			a, _ := enabledAdmin(t, addr, tg.NQN(), 2) // 3 slots
			aer := sqe(adminAER)
			for range 4 {
				a.Conn().Write(aer)
			}
			if fes := readTerm(t, a.Conn()); fes != nvmetcp.FESPDUSequence {
				t.Fatalf("fourth command on a 3-entry queue: FES %d, want %d", fes, nvmetcp.FESPDUSequence)
			}
			nc.Close()
		}, 0},
		{"H2CData at the wrong offset", false, func(t *testing.T, nc net.Conn, q *queue) {
			_, cntlid := enabledAdmin(t, addr, tg.NQN(), 31)
			ioq := dialQueue(t, addr)
			mustR(t, "I/O Connect")(connectQ(ioq, 1, 31, cntlid, 0, tg.NQN()))
			c, _ := nvmekv.EncodeStore(1, []byte("r2t"), 20000, 0)
			s := c.Bytes()
			b := pduHdr(nvmetcp.PDUCapsuleCmd, 0, nvmetcp.CmdHdrBytes, 0, nvmetcp.CmdHdrBytes, nvmetcp.CmdHdrBytes)
			copy(b[nvmetcp.CHBytes:], s[:])
			b[nvmetcp.CHBytes+1] = nvmetcp.SQEFlagsSGL
			binary.LittleEndian.PutUint32(b[nvmetcp.CHBytes+32:], 20000)
			b[nvmetcp.CHBytes+39] = nvmetcp.SGLTransport
			ioq.Conn().Write(b)
			var r2t [nvmetcp.DataHdrBytes]byte
			if _, err := io.ReadFull(ioq.Reader(), r2t[:]); err != nil || r2t[0] != nvmetcp.PDUR2T {
				t.Fatalf("no R2T: %x %v", r2t, err)
			}
			d := pduHdr(nvmetcp.PDUH2CData, 0, 24, 24, 24+100, 24+100)
			copy(d[8:12], r2t[8:12])                   // CID, TTAG
			binary.LittleEndian.PutUint32(d[12:], 100) // offset 100, expected 0
			binary.LittleEndian.PutUint32(d[16:], 100)
			ioq.Conn().Write(d)
			if fes := readTerm(t, ioq.Conn()); fes != nvmetcp.FESDataOutOfRange {
				t.Fatalf("H2CData at offset 100 of 0: FES %d, want %d", fes, nvmetcp.FESDataOutOfRange)
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
		{"sqsize 0", 0, 0, nvmetcp.CntlidAny, scConnectInvalidPar | scDNR},
		{"sqsize above MQES", 0, 1000, nvmetcp.CntlidAny, scConnectInvalidPar | scDNR},
		{"admin with a CNTLID", 0, 31, 5, scConnectInvalidPar | scDNR},
	} {
		if r, err := connectQ(q, tc.qid, tc.sq, tc.cntid, 0, tg.NQN()); err != nil || r.Status != tc.want {
			t.Fatalf("%s: %#x %v, want %#x", tc.name, r.Status, err, tc.want)
		}
	}
	s := nvmetcp.FabricsSQE(nvmetcp.FCConnect)
	if r, err := q.Exec(s, make([]byte, 1000), 0); err != nil || r.Status != scSGLLengthInvalid|scDNR {
		t.Fatalf("Connect with 1000 bytes of data: %#x %v", r.Status, err)
	}
	if r, err := q.Exec(adminSQE(adminIdentify, 0, 1, 0), nil, 4096); err != nil || r.Status != scCmdSeqError|scDNR {
		t.Fatalf("Identify before Connect: %#x %v", r.Status, err)
	}
	mustR(t, "Connect")(connectQ(q, 0, 31, nvmetcp.CntlidAny, 0, tg.NQN()))
	if r, _ := q.Exec(adminSQE(adminIdentify, 0, 1, 0), nil, 4096); r.Status != scCmdSeqError|scDNR {
		t.Fatalf("Identify before CC.EN: %#x", r.Status)
	}
	q2 := dialQueue(t, addr)
	if r, _ := connectQ(q2, 0, 31, nvmetcp.CntlidAny, 0, tg.NQN()); r.Status != scConnectCtrlBusy|scDNR {
		t.Fatalf("a second controller over MaxControllers 1: %#x", r.Status)
	}
	q.Conn().Close()
	deadline := time.Now().Add(10 * time.Second)
	for tg.Stats().Controllers != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	mustR(t, "Connect after the first controller's admin queue closed")(connectQ(q2, 0, 31, nvmetcp.CntlidAny, 0, tg.NQN()))
}

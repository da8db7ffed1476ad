package tcptarget

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/tiercache/tiercache/nvmekv"
)

// capsule is a CapsuleCmd PDU for sqe with in-capsule data d (or a
// transport SGL of length n when d is nil).
func capsule(sqe [SQEBytes]byte, d []byte, n uint32) []byte {
	b := make([]byte, CmdHdrBytes, CmdHdrBytes+len(d))
	h := header{Type: PDUCapsuleCmd, HLen: CmdHdrBytes, PLen: CmdHdrBytes}
	sqe[1] = sqeFlagsSGL
	if d != nil {
		h.PDO, h.PLen = CmdHdrBytes, uint32(CmdHdrBytes+len(d))
		sqe[39] = sglInCapsule
		n = uint32(len(d))
	} else {
		sqe[39] = sglTransport
	}
	binary.LittleEndian.PutUint32(sqe[32:], n)
	h.put(b)
	copy(b[CHBytes:], sqe[:])
	return append(b, d...)
}

// FuzzPDUStream feeds any byte stream to one connection (NT5): the target
// never panics, and the connection's goroutine ends once the host closes,
// whatever state the stream left it in (a controller, held AERs, a write
// waiting for H2CData).
func FuzzPDUStream(f *testing.F) {
	tg, _ := startTarget(f, Options{ICReqTimeout: time.Second})
	ic := pduHdr(PDUICReq, 0, ICBytes, 0, ICBytes, ICBytes)
	connect := func(qid, cntlid uint16) []byte {
		s := fabricsSQE(fcConnect)
		binary.LittleEndian.PutUint16(s[42:], qid)
		binary.LittleEndian.PutUint16(s[44:], 31)
		d := make([]byte, connectBytes)
		binary.LittleEndian.PutUint16(d[16:], cntlid)
		copy(d[256:], tg.NQN())
		copy(d[512:], hostNQN)
		return capsule(s, d, 0)
	}
	enable := fabricsSQE(fcPropertySet)
	binary.LittleEndian.PutUint32(enable[44:], regCC)
	binary.LittleEndian.PutUint32(enable[48:], 0x00460061)
	cat := func(ps ...[]byte) []byte {
		var b []byte
		for _, p := range ps {
			b = append(b, p...)
		}
		return b
	}
	store, _ := nvmekv.EncodeStore(1, []byte("fz"), 20000, 0)
	h2c := pduHdr(PDUH2CData, FlagDataLast, 24, 24, 24+16, 24+16)
	binary.LittleEndian.PutUint32(h2c[16:], 16)
	f.Add(ic)
	f.Add(cat(ic, connect(0, connectCntlidAny)))
	f.Add(cat(ic, connect(0, connectCntlidAny), capsule(enable, nil, 0), capsule(adminSQE(adminIdentify, 0, 1, 0), nil, 4096),
		capsule(adminSQE(adminAER, 0, 0, 0), nil, 0), capsule(adminSQE(adminGetLogPage, 0, logEffects|1023<<16, 0), nil, 4096)))
	f.Add(cat(ic, connect(1, 1), capsule(store.Bytes(), nil, 20000), h2c))
	f.Fuzz(func(t *testing.T, data []byte) {
		cli, srv := net.Pipe()
		c := newConn(tg, srv)
		done := make(chan struct{})
		go func() {
			c.serve()
			close(done)
		}()
		go io.Copy(io.Discard, cli)
		cli.SetWriteDeadline(time.Now().Add(2 * time.Second))
		cli.Write(data)
		cli.Close()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("the connection did not end within 20s of the host closing it")
		}
	})
}

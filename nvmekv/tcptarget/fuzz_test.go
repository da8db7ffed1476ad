package tcptarget

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/nvmetcp"
)

// capsule is a CapsuleCmd PDU for sqe with in-capsule data d (or a
// transport SGL of length n when d is nil).
func capsule(sqe [nvmetcp.SQEBytes]byte, d []byte, n uint32) []byte {
	b := make([]byte, nvmetcp.CmdHdrBytes, nvmetcp.CmdHdrBytes+len(d))
	h := nvmetcp.Header{Type: nvmetcp.PDUCapsuleCmd, HLen: nvmetcp.CmdHdrBytes, PLen: nvmetcp.CmdHdrBytes}
	sqe[1] = nvmetcp.SQEFlagsSGL
	if d != nil {
		h.PDO, h.PLen = nvmetcp.CmdHdrBytes, uint32(nvmetcp.CmdHdrBytes+len(d))
		sqe[39] = nvmetcp.SGLInCapsule
		n = uint32(len(d))
	} else {
		sqe[39] = nvmetcp.SGLTransport
	}
	binary.LittleEndian.PutUint32(sqe[32:], n)
	h.Put(b)
	copy(b[nvmetcp.CHBytes:], sqe[:])
	return append(b, d...)
}

// FuzzPDUStream feeds any byte stream to one connection (NT5): the target
// never panics, and the connection's goroutine ends once the host closes,
// whatever state the stream left it in (a controller, held AERs, a write
// waiting for H2CData).
func FuzzPDUStream(f *testing.F) {
	tg, _ := startTarget(f, Options{ICReqTimeout: time.Second})
	ic := pduHdr(nvmetcp.PDUICReq, 0, nvmetcp.ICBytes, 0, nvmetcp.ICBytes, nvmetcp.ICBytes)
	connect := func(qid, cntlid uint16) []byte {
		s := nvmetcp.FabricsSQE(nvmetcp.FCConnect)
		binary.LittleEndian.PutUint16(s[42:], qid)
		binary.LittleEndian.PutUint16(s[44:], 31)
		d := make([]byte, nvmetcp.ConnectBytes)
		binary.LittleEndian.PutUint16(d[16:], cntlid)
		copy(d[256:], tg.NQN())
		copy(d[512:], hostNQN)
		return capsule(s, d, 0)
	}
	enable := nvmetcp.FabricsSQE(nvmetcp.FCPropertySet)
	binary.LittleEndian.PutUint32(enable[44:], nvmetcp.RegCC)
	binary.LittleEndian.PutUint32(enable[48:], 0x00460061)
	cat := func(ps ...[]byte) []byte {
		var b []byte
		for _, p := range ps {
			b = append(b, p...)
		}
		return b
	}
	store, _ := nvmekv.EncodeStore(1, []byte("fz"), 20000, 0)
	h2c := pduHdr(nvmetcp.PDUH2CData, nvmetcp.FlagDataLast, 24, 24, 24+16, 24+16)
	binary.LittleEndian.PutUint32(h2c[16:], 16)
	f.Add(ic)
	f.Add(cat(ic, connect(0, nvmetcp.CntlidAny)))
	f.Add(cat(ic, connect(0, nvmetcp.CntlidAny), capsule(enable, nil, 0), capsule(adminSQE(adminIdentify, 0, 1, 0), nil, 4096),
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

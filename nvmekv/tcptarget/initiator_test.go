package tcptarget

import (
	"context"
	"encoding/binary"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/nvmetcp"
)

// queue is the test's host queue: nvmetcp's, which speaks the PDU
// sequences the Linux host produces.
type queue = nvmetcp.Queue

// result is one command's completion.
type result = nvmetcp.Result

const hostNQN = "nqn.2014-08.org.nvmexpress:uuid:tiercache-test-host"

var hostID = [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

// dialQueue connects and exchanges ICReq/ICResp.
func dialQueue(t testing.TB, addr string) *queue {
	t.Helper()
	q, err := nvmetcp.Dial(addr, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

// connectQ sends Connect for qid as the test host and returns its status
// and CNTLID.
func connectQ(q *queue, qid, sqsize, cntlid uint16, katoMs uint32, subNQN string) (result, error) {
	return q.Connect(nvmetcp.ConnectParams{QID: qid, SQSize: sqsize, CNTLID: cntlid, KATOMs: katoMs, HostID: hostID, SubNQN: subNQN, HostNQN: hostNQN})
}

// adminSQE builds an admin command.
func adminSQE(op uint8, nsid uint32, cdw10, cdw11 uint32) [nvmetcp.SQEBytes]byte {
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
		if err != nil || r.Status != 0 {
			t.Fatalf("%s: status %#x, %v", what, r.Status, err)
		}
		return r
	}
}

func connectHost(t testing.TB, addr, nqn string) *host {
	t.Helper()
	h := &host{admin: dialQueue(t, addr)}
	r := mustR(t, "admin Connect")(connectQ(h.admin, 0, 31, nvmetcp.CntlidAny, 5000, nqn))
	h.cntlid = uint16(r.DW0)
	cap := mustR(t, "Property Get CAP")(h.admin.PropGet(nvmetcp.RegCAP, true)).DW0
	if cap&capCSSIOCS == 0 {
		t.Fatalf("CAP %#x lacks the I/O command sets bit", cap)
	}
	mustR(t, "Property Set CC (EN=0, CSS=110b)")(h.admin.PropSet(nvmetcp.RegCC, 0x00460060))
	mustR(t, "Property Set CC (EN=1)")(h.admin.PropSet(nvmetcp.RegCC, 0x00460061))
	if csts := mustR(t, "Property Get CSTS")(h.admin.PropGet(nvmetcp.RegCSTS, false)).DW0; csts&cstsRDY == 0 {
		t.Fatalf("CSTS %#x not ready after CC.EN", csts)
	}
	id := mustR(t, "Identify Controller")(h.admin.Exec(adminSQE(adminIdentify, 0, uint32(nvmekv.CNSController), 0), nil, 4096))
	ioccsz := binary.LittleEndian.Uint32(id.Data[1792:])
	mustR(t, "Set Features Number of Queues")(h.admin.Exec(adminSQE(adminSetFeatures, 0, featNumQueues, 0), nil, 0))
	h.io = dialQueue(t, addr)
	h.io.SetInline(int(ioccsz)*16 - nvmetcp.SQEBytes)
	mustR(t, "I/O Connect")(connectQ(h.io, 1, 127, h.cntlid, 0, nqn))
	kvid := mustR(t, "Identify KV namespace")(h.admin.Exec(adminSQE(adminIdentify, 1, uint32(nvmekv.CNSIOCSNamespace), uint32(nvmekv.CSIKV)<<24), nil, 4096))
	kvns, err := nvmekv.ParseKVNamespace(kvid.Data)
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
		r, err := n.h.io.Exec(c.Bytes(), w, readLen)
		if err != nil {
			return err
		}
		if readLen > 0 {
			copy(op.Buf, r.Data)
		}
		op.Complete(int32(r.Status), r.DW0)
		broken = op.Err != nil && op.Link
	}
	return nil
}

func (n *hostNS) Flush(ctx context.Context) error {
	c := nvmekv.EncodeFlush(1)
	r, err := n.h.io.Exec(c.Bytes(), nil, 0)
	if err != nil {
		return err
	}
	return nvmekv.DecodeResult(nvmekv.OpFlush, int32(r.Status))
}

func (n *hostNS) Limits() nvmekv.Limits { return n.h.limits }
func (n *hostNS) Close() error          { return nil }

// raw sends a raw I/O command (for kvconform.Raw).
func (n *hostNS) raw(ctx context.Context, c nvmekv.Command, buf []byte) (int32, uint32, error) {
	r, err := n.h.io.ExecData(c.Bytes(), buf)
	if err != nil {
		return 0, 0, err
	}
	return int32(r.Status), uint32(r.DW0), nil
}

var errNoTerm = errors.New("no C2HTermReq")

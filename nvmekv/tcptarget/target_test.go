package tcptarget

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"testing"

	"go.uber.org/goleak"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu"
	"github.com/tiercache/tiercache/nvmekv/kvconform"
	"github.com/tiercache/tiercache/nvmekv/nvmetcp"
)

// startTarget serves a fresh emulated namespace on 127.0.0.1.
func startTarget(t testing.TB, o Options) (*Target, string) {
	t.Helper()
	ns, err := emu.Open(emu.Options{Path: t.TempDir() + "/kv", Capacity: 64 << 20, RegionBytes: 1 << 20, MaxValueBytes: 256 << 10})
	if err != nil {
		t.Fatalf("emu.Open: %v", err)
	}
	o.Namespace = ns
	tg, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- tg.Serve(ln) }()
	t.Cleanup(func() {
		tg.Close()
		<-done
		ns.Close()
	})
	return tg, ln.Addr().String()
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestConnectSequence walks the admin sequence of the Linux 6.1 host
// (drivers/nvme/host/core.c nvme_init_ctrl_finish, nvme_scan_ns, fabrics.c)
// and checks each answer it depends on (NT1, NT2).
func TestConnectSequence(t *testing.T) {
	tg, addr := startTarget(t, Options{})
	h := connectHost(t, addr, tg.NQN())
	a, le := h.admin, binary.LittleEndian
	id := func(nsid uint32, cns, csi uint8) result {
		return mustR(t, "Identify")(a.Exec(adminSQE(adminIdentify, nsid, uint32(cns), uint32(csi)<<24), nil, 4096))
	}
	c := id(0, nvmekv.CNSController, 0).Data
	if got := le.Uint16(c[78:]); got != h.cntlid {
		t.Fatalf("Identify CNTLID %d, Connect returned %d", got, h.cntlid)
	}
	if le.Uint16(c[320:]) == 0 || le.Uint32(c[1792:]) < 4 || le.Uint32(c[1796:]) < 1 || le.Uint16(c[1800:]) != 0 ||
		le.Uint32(c[536:])&3 != 1 || le.Uint16(c[514:]) < 2 || c[111] != 1 || c[261]&2 == 0 {
		t.Fatalf("Identify Controller fails a host check: KAS %d IOCCSZ %d IORCSZ %d ICDOFF %d SGLS %#x MAXCMD %d CNTRLTYPE %d LPA %#x",
			le.Uint16(c[320:]), le.Uint32(c[1792:]), le.Uint32(c[1796:]), le.Uint16(c[1800:]), le.Uint32(c[536:]), le.Uint16(c[514:]), c[111], c[261])
	}
	if got := nvmetcp.CString(c[768:1024]); got != tg.NQN() {
		t.Fatalf("SUBNQN %q, want %q", got, tg.NQN())
	}
	if vs := mustR(t, "VS")(a.PropGet(nvmetcp.RegVS, false)).DW0; vs < 0x00010300 {
		t.Fatalf("VS %#x", vs)
	}
	// The active namespace lists: general, KV, NVM (none).
	if l := id(0, nvmekv.CNSActiveNSList, 0).Data; le.Uint32(l) != 1 || le.Uint32(l[4:]) != 0 {
		t.Fatalf("active NS list %x", l[:8])
	}
	if l := id(1, nvmekv.CNSActiveNSList, 0).Data; le.Uint32(l) != 0 {
		t.Fatalf("active NS list after NSID 1: %x", l[:8])
	}
	if l := id(0, cnsIOCSActiveNSList, nvmekv.CSIKV).Data; le.Uint32(l) != 1 {
		t.Fatalf("KV active NS list %x", l[:8])
	}
	if l := id(0, cnsIOCSActiveNSList, nvmekv.CSINVM).Data; le.Uint32(l) != 0 {
		t.Fatalf("NVM active NS list %x", l[:8])
	}
	ds, err := nvmekv.ParseNSDescriptors(id(1, nvmekv.CNSNSDescriptorList, 0).Data)
	if err != nil || nvmekv.CSIFromDescriptors(ds) != nvmekv.CSIKV || len(ds) != 2 || ds[0].Type != nvmekv.NIDTUUID {
		t.Fatalf("NS descriptors %+v, %v: want a UUID and CSI 1", ds, err)
	}
	if ind := id(1, nvmekv.CNSIndependentNS, 0).Data; ind[14]&1 == 0 {
		t.Fatal("CNS 08h: NSTAT.NRDY is 0, the host would ignore the namespace")
	}
	kv, err := nvmekv.ParseKVNamespace(id(1, nvmekv.CNSIOCSNamespace, nvmekv.CSIKV).Data)
	if err != nil || kv.Format().MaxKeyLen != 16 || int(kv.Format().MaxValueLen) != h.limits.MaxValueLen || kv.Size == 0 {
		t.Fatalf("KV identify %+v, %v", kv, err)
	}
	id(0, nvmekv.CNSIOCSController, nvmekv.CSINVM)
	id(0, nvmekv.CNSIOCSController, nvmekv.CSIKV)
	if v := le.Uint64(id(0, cnsIOCSCombinations, 0).Data); v != 3 {
		t.Fatalf("I/O command set vector 0 = %#x, want NVM|KV", v)
	}
	for _, tc := range []struct {
		nsid uint32
		cns  uint8
		csi  uint8
		want uint16
	}{{2, nvmekv.CNSNSDescriptorList, 0, scInvalidNS}, {1, nvmekv.CNSIOCSNamespace, nvmekv.CSINVM, scInvalidIOCS}, {1, nvmekv.CNSNamespace, 0, scInvalidIOCS}, {0, 0x15, 0, scInvalidField}} {
		if r, err := a.Exec(adminSQE(adminIdentify, tc.nsid, uint32(tc.cns), uint32(tc.csi)<<24), nil, 4096); err != nil || r.Status&0x7ff != tc.want {
			t.Fatalf("Identify CNS %#x NSID %d CSI %d: %#x %v, want %#x", tc.cns, tc.nsid, tc.csi, r.Status, err, tc.want)
		}
	}
	// Logs: effects for CSI 0 and 1 (the host needs CSI 1), SMART, error.
	logPage := func(lid, csi uint8, n int) result {
		return mustExec(a, t, adminSQE(adminGetLogPage, 0, uint32(lid)|uint32(n/4-1)<<16, 0), n, func(s *[64]byte) { s[59] = csi })
	}
	eff := logPage(logEffects, nvmekv.CSIKV, 4096).Data
	for op, want := range map[nvmekv.Opcode]uint32{nvmekv.OpStore: 3, nvmekv.OpRetrieve: 1, nvmekv.OpList: 1, nvmekv.OpDelete: 3, nvmekv.OpExist: 1} {
		if got := le.Uint32(eff[1024+4*int(op):]); got != want {
			t.Fatalf("effects CSI 1 %s = %#x, want %#x", op, got, want)
		}
	}
	if e0 := logPage(logEffects, nvmekv.CSINVM, 4096).Data; le.Uint32(e0[1024+4:]) != 0 || le.Uint32(e0[4*adminIdentify:]) != 1 {
		t.Fatal("effects CSI 0: want admin commands only")
	}
	if s := logPage(logSMART, 0, 512).Data; len(s) != 512 || le.Uint16(s[1:]) == 0 {
		t.Fatalf("SMART log %d bytes", len(s))
	}
	logPage(logError, 0, 64)
	if r, _ := a.Exec(adminSQE(adminGetLogPage, 0, 0x70|(1023<<16), 0), nil, 4096); r.Status&0x7ff != scInvalidLogPage {
		t.Fatalf("unknown log page: %#x", r.Status)
	}
	// Features.
	if r := mustR(t, "Get KATO")(a.Exec(adminSQE(adminGetFeatures, 0, featKATO, 0), nil, 0)); r.DW0 != 5000 {
		t.Fatalf("KATO %d, want the Connect's 5000", r.DW0)
	}
	mustR(t, "Set AEC")(a.Exec(adminSQE(adminSetFeatures, 0, featAsyncEvt, 0x900), nil, 0))
	if r := mustR(t, "Get AEC")(a.Exec(adminSQE(adminGetFeatures, 0, featAsyncEvt, 0), nil, 0)); r.DW0 != 0x900 {
		t.Fatalf("AEC %#x", r.DW0)
	}
	mustR(t, "Set IOCS profile 0")(a.Exec(adminSQE(adminSetFeatures, 0, featIOCSProf, 0), nil, 0))
	if r, _ := a.Exec(adminSQE(adminSetFeatures, 0, featIOCSProf, 1), nil, 0); r.Status&0x7ff != scIOCSCombination {
		t.Fatalf("IOCS profile 1: %#x, want combination rejected", r.Status)
	}
	if r, _ := a.Exec(adminSQE(adminSetFeatures, 0, featNumQueues, 0xffff), nil, 0); r.Status&0x7ff != scInvalidField {
		t.Fatalf("Number of Queues 0xFFFF: %#x", r.Status)
	}
	if r, _ := a.Exec(adminSQE(0x80, 0, 0, 0), nil, 0); r.Status != scInvalidOpcode|scDNR {
		t.Fatalf("unknown admin opcode: %#x", r.Status)
	}
	// An AER is held: the next completion is the Keep Alive's.
	a.Lock()
	aer := adminSQE(adminAER, 0, 0, 0)
	binary.LittleEndian.PutUint16(aer[2:], 31) // the host's AER CID (NVME_AQ_BLK_MQ_DEPTH)
	pdu := make([]byte, nvmetcp.CmdHdrBytes)
	nvmetcp.Header{Type: nvmetcp.PDUCapsuleCmd, HLen: nvmetcp.CmdHdrBytes, PLen: nvmetcp.CmdHdrBytes}.Put(pdu)
	aer[1], aer[39] = nvmetcp.SQEFlagsSGL, nvmetcp.SGLTransport
	copy(pdu[nvmetcp.CHBytes:], aer[:])
	a.Conn().Write(pdu)
	a.Unlock()
	mustR(t, "Keep Alive")(a.Exec(adminSQE(adminKeepAlive, 0, 0, 0), nil, 0))
	// A second controller is independent; a wrong NQN or CNTLID is refused.
	q := dialQueue(t, addr)
	if r, _ := connectQ(q, 0, 31, nvmetcp.CntlidAny, 0, "nqn.wrong"); r.Status != scConnectInvalidPar|scDNR || r.DW0 != 1<<16|256 {
		t.Fatalf("Connect to a wrong NQN: %#x dw0 %#x", r.Status, r.DW0)
	}
	q = dialQueue(t, addr)
	if r, _ := connectQ(q, 1, 31, 0x777, 0, tg.NQN()); r.Status != scConnectInvalidPar|scDNR {
		t.Fatalf("I/O Connect to an unknown CNTLID: %#x", r.Status)
	}
	q = dialQueue(t, addr)
	if r, _ := connectQ(q, 1, 31, h.cntlid, 0, tg.NQN()); r.Status != scCmdSeqError|scDNR {
		t.Fatalf("I/O Connect to a taken QID: %#x", r.Status)
	}
	// Shutdown: SHN=01 → SHST complete.
	mustR(t, "CC shutdown")(a.PropSet(nvmetcp.RegCC, 0x00464061))
	if csts := mustR(t, "CSTS")(a.PropGet(nvmetcp.RegCSTS, false)).DW0; csts&0xc != cstsSHSTDone {
		t.Fatalf("CSTS %#x after shutdown, want SHST complete", csts)
	}
}

// mustExec runs an admin command with a tweak of its SQE.
func mustExec(q *queue, t *testing.T, s [nvmetcp.SQEBytes]byte, readLen int, tweak func(*[64]byte)) result {
	t.Helper()
	tweak(&s)
	return mustR(t, "command")(q.Exec(s, nil, readLen))
}

// TestKVConformanceOverTCP runs the nvmekv conformance suite through the
// in-process initiator: every KV command over NVMe/TCP, in-capsule and
// R2T writes, multi-PDU reads (kvconform KC1, NT3).
func TestKVConformanceOverTCP(t *testing.T) {
	tg, addr := startTarget(t, Options{})
	h := connectHost(t, addr, tg.NQN())
	ns := newHostNS(h)
	kvconform.Run(t, kvconform.Target{NS: ns, Raw: ns.raw})
	if h.io.R2Ts() == 0 {
		t.Fatal("no write went through R2T/H2CData")
	}
}

// TestKVStatusCodes sends commands the encoder would refuse or a target
// must refuse before taking data (NT4): an over-long Store gets Invalid
// Value Size with no R2T, and a refused command changes nothing.
func TestKVStatusCodes(t *testing.T) {
	tg, addr := startTarget(t, Options{})
	h := connectHost(t, addr, tg.NQN())
	ns := newHostNS(h)
	ctx := t.Context()
	if err := ns.Store(ctx, []byte("k"), []byte("v1"), 0); err != nil {
		t.Fatal(err)
	}
	cmd := func(op uint8, nsid, cdw10, cdw11 uint32, key string) [nvmetcp.SQEBytes]byte {
		c := nvmekv.Command{Opcode: op, NSID: nsid, CDW10: cdw10, CDW11: cdw11}
		nvmekv.PackKey(&c, []byte(key))
		return c.Bytes()
	}
	big := make([]byte, h.limits.MaxValueLen+1)
	for _, tc := range []struct {
		name string
		sqe  [nvmetcp.SQEBytes]byte
		w    []byte
		rl   int
		want uint16
	}{
		{"Store too big", cmd(0x01, 1, uint32(len(big)), 1, "k"), big, 0, kvStatus(nvmekv.SCInvalidValueSize)},
		{"Store KL 17", cmd(0x01, 1, 2, 17, "k"), []byte("v2"), 0, kvStatus(nvmekv.SCInvalidKeySize)},
		{"Store value size ≠ data", cmd(0x01, 1, 3, 1, "k"), []byte("v2"), 0, scSGLLengthInvalid | scDNR},
		{"Store both options", cmd(0x01, 1, 2, 1|3<<8, "k"), []byte("v2"), 0, scInvalidField | scDNR},
		{"Store NSID 2", cmd(0x01, 2, 2, 1, "k"), []byte("v2"), 0, scInvalidNS | scDNR},
		{"Retrieve KL 0", cmd(0x02, 1, 8, 0, ""), nil, 8, kvStatus(nvmekv.SCInvalidKeySize)},
		{"Retrieve missing", cmd(0x02, 1, 8, 1, "x"), nil, 8, kvStatus(nvmekv.SCKeyNotExists)},
		{"Exist missing", cmd(0x14, 1, 0, 1, "x"), nil, 0, kvStatus(nvmekv.SCKeyNotExists)},
		{"Delete missing", cmd(0x10, 1, 0, 1, "x"), nil, 0, kvStatus(nvmekv.SCKeyNotExists)},
		{"Store must-not-exist", cmd(0x01, 1, 2, 1|2<<8, "k"), []byte("v2"), 0, kvStatus(nvmekv.SCKeyExists)},
		{"unknown I/O opcode", cmd(0x81, 1, 0, 1, "k"), nil, 0, scInvalidOpcode | scDNR},
		{"NVM Read opcode 0x02 with a zero key length", cmd(0x02, 1, 512, 0, ""), nil, 512, kvStatus(nvmekv.SCInvalidKeySize)},
	} {
		before := h.io.R2Ts()
		r, err := h.io.Exec(tc.sqe, tc.w, tc.rl)
		if err != nil || r.Status != tc.want {
			t.Errorf("%s: status %#x, %v; want %#x", tc.name, r.Status, err, tc.want)
		}
		if h.io.R2Ts() != before {
			t.Errorf("%s: the target asked for the data of a command it refuses", tc.name)
		}
	}
	buf := make([]byte, 8)
	if n, err := ns.Retrieve(ctx, []byte("k"), buf); err != nil || !bytes.Equal(buf[:n], []byte("v1")) {
		t.Fatalf("after the refused commands: %q, %v", buf[:n], err)
	}
	if tg.Stats().Writes == 0 || tg.Stats().Reads == 0 {
		t.Fatalf("stats %+v", tg.Stats())
	}
}

// TestKVConfigurationFeature: Set and Get Features of Key Value
// Configuration (FID 20h): EDNEK is set by default (a Delete of a missing
// key answers 87h); cleared, that Delete succeeds; a reserved bit is
// refused and changes nothing; SEL 1 reads the default. NT8.
func TestKVConfigurationFeature(t *testing.T) {
	tg, addr := startTarget(t, Options{})
	h := connectHost(t, addr, tg.NQN())
	ns := newHostNS(h)
	ctx := t.Context()
	key := []byte("never-stored")
	get := func(sel uint32) uint64 {
		t.Helper()
		return mustR(t, "Get Features KV Configuration")(h.admin.Exec(adminSQE(adminGetFeatures, 0, featKVConfig|sel<<8, 0), nil, 0)).DW0
	}
	if v := get(0); v != kvConfigEDNEK {
		t.Fatalf("KV Configuration %#x, want EDNEK (1) by default", v)
	}
	if err := ns.Delete(ctx, key); !errors.Is(err, nvmekv.ErrKeyNotFound) {
		t.Fatalf("Delete of a missing key with EDNEK set: %v, want key not found (87h)", err)
	}
	mustR(t, "Set Features KV Configuration 0")(h.admin.Exec(adminSQE(adminSetFeatures, 0, featKVConfig, 0), nil, 0))
	if v := get(0); v != 0 {
		t.Fatalf("KV Configuration %#x after setting 0", v)
	}
	if v := get(1); v != kvConfigEDNEK {
		t.Fatalf("KV Configuration default %#x, want EDNEK", v)
	}
	if err := ns.Delete(ctx, key); err != nil {
		t.Fatalf("Delete of a missing key with EDNEK clear: %v, want success", err)
	}
	if r, _ := h.admin.Exec(adminSQE(adminSetFeatures, 0, featKVConfig, 0x3), nil, 0); r.Status&0x7ff != scInvalidField {
		t.Fatalf("KV Configuration with a reserved bit: %#x, want Invalid Field", r.Status)
	}
	if v := get(0); v != 0 {
		t.Fatalf("a refused Set changed KV Configuration to %#x", v)
	}
	mustR(t, "Set Features KV Configuration EDNEK")(h.admin.Exec(adminSQE(adminSetFeatures, 0, featKVConfig, kvConfigEDNEK), nil, 0))
	if err := ns.Delete(ctx, key); !errors.Is(err, nvmekv.ErrKeyNotFound) {
		t.Fatalf("Delete of a missing key with EDNEK set again: %v", err)
	}
	// A key that exists is deleted whatever EDNEK says.
	if err := ns.Store(ctx, key, []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	mustR(t, "Set Features KV Configuration 0")(h.admin.Exec(adminSQE(adminSetFeatures, 0, featKVConfig, 0), nil, 0))
	if err := ns.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	if ok, err := ns.Exist(ctx, key); err != nil || ok {
		t.Fatalf("Exist after Delete = %v, %v", ok, err)
	}
}

package tcptarget

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu"
	"github.com/tiercache/tiercache/nvmekv/nvmetcp"
)

// emuStore keeps each managed namespace in an emulated namespace file.
type emuStore struct{ dir string }

func (s emuStore) path(nsid uint32) string { return filepath.Join(s.dir, fmt.Sprintf("ns%d.kv", nsid)) }

func (s emuStore) Create(nsid uint32, size int64) (nvmekv.Namespace, error) {
	os.Remove(s.path(nsid))
	os.Remove(s.path(nsid) + ".ckpt")
	return s.Open(nsid, size)
}

func (s emuStore) Open(nsid uint32, size int64) (nvmekv.Namespace, error) {
	return emu.Open(emu.Options{Path: s.path(nsid), Capacity: size, RegionBytes: 1 << 20, MaxValueBytes: 256 << 10, Mode: emu.Strict, Sparse: true})
}

func (s emuStore) Remove(nsid uint32) error {
	os.Remove(s.path(nsid) + ".ckpt")
	return os.Remove(s.path(nsid))
}

// managedOptions are Namespace Management options over a fresh directory.
func managedOptions(t testing.TB, capacity int64) Options {
	dir := t.TempDir()
	return Options{Namespaces: &NamespaceOptions{Store: emuStore{dir}, StatePath: filepath.Join(dir, "namespaces.json"), Capacity: capacity, MaxNamespaces: 4}}
}

// serve starts a target with o on 127.0.0.1.
func serve(t testing.TB, o Options) (*Target, string) {
	t.Helper()
	tg, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- tg.Serve(ln) }()
	t.Cleanup(func() {
		tg.Close()
		<-done
	})
	return tg, ln.Addr().String()
}

// hostAs connects as host nqn (an admin queue and an I/O queue).
func hostAs(t testing.TB, addr, subNQN, nqn string) *nvmetcp.Host {
	t.Helper()
	h, err := nvmetcp.Connect(addr, nvmetcp.HostOptions{SubNQN: subNQN, HostNQN: nqn, IOQueue: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// admin runs an admin command and returns DW0 and the NVMe status.
func admin(t testing.TB, h *nvmetcp.Host, c nvmekv.Command, buf []byte) (uint32, uint16) {
	t.Helper()
	dw0, err := h.Admin(context.Background(), c, buf)
	var se *nvmekv.StatusError
	switch {
	case err == nil:
		return dw0, 0
	case errors.As(err, &se):
		return dw0, uint16(se.SC) | uint16(se.SCT)<<8
	}
	t.Fatalf("admin %#x: %v", c.Opcode, err)
	return 0, 0
}

func createNS(t testing.TB, h *nvmetcp.Host, size uint64, csi uint8) (uint32, uint16) {
	d := make([]byte, 4096)
	binary.LittleEndian.PutUint64(d, size)
	return admin(t, h, nvmekv.Command{Opcode: adminNSManagement, CDW10: selCreate, CDW11: uint32(csi) << 24}, d)
}

func attachNS(t testing.TB, h *nvmetcp.Host, nsid uint32, sel uint32, cntlids ...uint16) uint16 {
	d := make([]byte, 4096)
	putControllerList(d, cntlids)
	_, st := admin(t, h, nvmekv.Command{Opcode: adminNSAttachment, NSID: nsid, CDW10: sel}, d)
	return st
}

func identifyNS(t testing.TB, h *nvmetcp.Host, nsid uint32, cns, csi uint8) ([]byte, uint16) {
	b := make([]byte, 4096)
	_, st := admin(t, h, nvmekv.EncodeIdentify(nsid, cns, 0, csi), b)
	return b, st
}

func nsList(t testing.TB, h *nvmetcp.Host, cns uint8) []uint32 {
	t.Helper()
	b, st := identifyNS(t, h, 0, cns, nvmekv.CSIKV)
	if st != 0 {
		t.Fatalf("Identify CNS %#x: status %#x", cns, st)
	}
	var ids []uint32
	for i := 0; i < 4096 && binary.LittleEndian.Uint32(b[i:]) != 0; i += 4 {
		ids = append(ids, binary.LittleEndian.Uint32(b[i:]))
	}
	return ids
}

func unallocated(t testing.TB, h *nvmetcp.Host) uint64 {
	b, _ := identifyNS(t, h, 0, nvmekv.CNSController, 0)
	return binary.LittleEndian.Uint64(b[296:])
}

// TestNamespaceManagement (NT9): a host creates a KV namespace (DW0 its
// NSID), which takes capacity from UNVMCAP and is allocated but active
// for nobody; attached to the host's controller it is active, has an
// NGUID, a UUID and CSI 1, its KV data says its size, and it stores
// values; another host's controllers neither see it nor reach it;
// detached it answers Invalid Namespace; deleted, its capacity returns.
func TestNamespaceManagement(t *testing.T) {
	tg, addr := serve(t, managedOptions(t, 64<<20))
	a := hostAs(t, addr, tg.NQN(), "nqn.2014-08.org.nvmexpress:uuid:host-a")
	b := hostAs(t, addr, tg.NQN(), "nqn.2014-08.org.nvmexpress:uuid:host-b")
	id, _ := identifyNS(t, a, 0, nvmekv.CNSController, 0)
	le := binary.LittleEndian
	if le.Uint16(id[256:])&oacsNSManagement == 0 || le.Uint32(id[92:])&oaesNSAttribute == 0 || le.Uint64(id[280:]) != 64<<20 || le.Uint64(id[296:]) != 64<<20 || le.Uint32(id[516:]) != 4 {
		t.Fatalf("Identify Controller: OACS %#x OAES %#x TNVMCAP %d UNVMCAP %d NN %d", le.Uint16(id[256:]), le.Uint32(id[92:]), le.Uint64(id[280:]), le.Uint64(id[296:]), le.Uint32(id[516:]))
	}
	nsid, st := createNS(t, a, 10<<20, nvmekv.CSIKV)
	if st != 0 || nsid != 1 {
		t.Fatalf("create: NSID %d status %#x", nsid, st)
	}
	if free := unallocated(t, a); free != 54<<20 {
		t.Fatalf("UNVMCAP %d after a 10 MiB namespace", free)
	}
	if got := nsList(t, a, cnsAllocatedNSList); !slices.Equal(got, []uint32{1}) {
		t.Fatalf("allocated %v", got)
	}
	if got := nsList(t, a, nvmekv.CNSActiveNSList); len(got) != 0 {
		t.Fatalf("active before attach %v", got)
	}
	if st := attachNS(t, a, nsid, selAttach, a.CNTLID); st != 0 {
		t.Fatalf("attach: %#x", st)
	}
	if got := nsList(t, a, nvmekv.CNSActiveNSList); !slices.Equal(got, []uint32{1}) {
		t.Fatalf("active after attach %v", got)
	}
	if got := nsList(t, b, nvmekv.CNSActiveNSList); len(got) != 0 {
		t.Fatalf("host b sees %v", got)
	}
	d, _ := identifyNS(t, a, nsid, nvmekv.CNSNSDescriptorList, 0)
	ds, err := nvmekv.ParseNSDescriptors(d)
	if err != nil || len(ds) != 3 || ds[0].Type != nvmekv.NIDTNGUID || nvmekv.CSIFromDescriptors(ds) != nvmekv.CSIKV {
		t.Fatalf("descriptors %+v %v", ds, err)
	}
	kv, _ := identifyNS(t, a, nsid, nvmekv.CNSIOCSNamespace, nvmekv.CSIKV)
	if n, _ := nvmekv.ParseKVNamespace(kv); n.Size != 10<<20 || !slices.Equal(kv[48:64], ds[0].ID) {
		t.Fatalf("KV namespace size %d NGUID %x, descriptor %x", n.Size, kv[48:64], ds[0].ID)
	}
	if _, st := identifyNS(t, a, nsid, nvmekv.CNSNamespace, 0); st != scInvalidIOCS&0x7ff {
		t.Fatalf("NVM Identify Namespace of a KV namespace: %#x", st)
	}
	store := func(h *nvmetcp.Host, ns uint32) uint16 {
		c, _ := nvmekv.EncodeStore(ns, []byte("k"), 1, 0)
		r, err := h.IOQ.Exec(c.Bytes(), []byte("v"), 0)
		if err != nil {
			t.Fatal(err)
		}
		return r.Status &^ scDNR
	}
	if st := store(a, nsid); st != 0 {
		t.Fatalf("Store on the attached namespace: %#x", st)
	}
	if st := store(b, nsid); st != scInvalidNS {
		t.Fatalf("host b's Store on host a's namespace: %#x", st)
	}
	if st := attachNS(t, a, nsid, selDetach, a.CNTLID); st != 0 {
		t.Fatalf("detach: %#x", st)
	}
	if st := store(a, nsid); st != scInvalidNS {
		t.Fatalf("Store after detach: %#x", st)
	}
	if _, st := admin(t, a, nvmekv.Command{Opcode: adminNSManagement, NSID: nsid, CDW10: selDelete}, nil); st != 0 {
		t.Fatalf("delete: %#x", st)
	}
	if free := unallocated(t, a); free != 64<<20 || len(nsList(t, a, cnsAllocatedNSList)) != 0 {
		t.Fatalf("after delete: UNVMCAP %d, allocated %v", free, nsList(t, a, cnsAllocatedNSList))
	}
}

// TestNamespaceManagementRefusals (NT10): every bad request gets its
// status and changes nothing (the allocated list, UNVMCAP and the state
// file stay as they were); a target without Namespace Management answers
// Invalid Opcode.
func TestNamespaceManagementRefusals(t *testing.T) {
	o := managedOptions(t, 32<<20)
	tg, addr := serve(t, o)
	a := hostAs(t, addr, tg.NQN(), "nqn.2014-08.org.nvmexpress:uuid:host-a")
	b := hostAs(t, addr, tg.NQN(), "nqn.2014-08.org.nvmexpress:uuid:host-b")
	nsid, st := createNS(t, a, 8<<20, nvmekv.CSIKV)
	if st != 0 {
		t.Fatal(st)
	}
	if st := attachNS(t, a, nsid, selAttach, a.CNTLID); st != 0 {
		t.Fatal(st)
	}
	before, _ := os.ReadFile(o.Namespaces.StatePath)
	free := unallocated(t, a)
	withData := func(f func(d []byte)) []byte {
		d := make([]byte, 4096)
		binary.LittleEndian.PutUint64(d, 4<<20)
		f(d)
		return d
	}
	for _, tc := range []struct {
		name string
		c    nvmekv.Command
		data []byte
		want uint16
	}{
		{"larger than unallocated", nvmekv.Command{Opcode: adminNSManagement, CDW11: 1 << 24}, withData(func(d []byte) { binary.LittleEndian.PutUint64(d, 64<<20) }), scNSInsufficientCap},
		{"NVM command set", nvmekv.Command{Opcode: adminNSManagement, CDW11: 0}, withData(func([]byte) {}), scIOCSNotSupported},
		{"ZNS command set", nvmekv.Command{Opcode: adminNSManagement, CDW11: 2 << 24}, withData(func([]byte) {}), scIOCSNotSupported},
		{"size 0", nvmekv.Command{Opcode: adminNSManagement, CDW11: 1 << 24}, withData(func(d []byte) { binary.LittleEndian.PutUint64(d, 0) }), scInvalidField},
		{"shared", nvmekv.Command{Opcode: adminNSManagement, CDW11: 1 << 24}, withData(func(d []byte) { d[hsNMIC] = 1 }), scInvalidField},
		{"KV format 1", nvmekv.Command{Opcode: adminNSManagement, CDW11: 1 << 24}, withData(func(d []byte) { d[hsKVFC] = 1 }), scInvalidFormat},
		{"short data", nvmekv.Command{Opcode: adminNSManagement, CDW11: 1 << 24}, make([]byte, 512), scInvalidField},
		{"SEL 2", nvmekv.Command{Opcode: adminNSManagement, CDW10: 2, CDW11: 1 << 24}, withData(func([]byte) {}), scInvalidField},
		{"delete unallocated", nvmekv.Command{Opcode: adminNSManagement, NSID: 3, CDW10: selDelete}, nil, scInvalidNS},
		{"delete NSID 0", nvmekv.Command{Opcode: adminNSManagement, NSID: 0, CDW10: selDelete}, nil, scInvalidNS},
		{"delete beyond NN", nvmekv.Command{Opcode: adminNSManagement, NSID: 99, CDW10: selDelete}, nil, scInvalidNS},
	} {
		if _, st := admin(t, a, tc.c, tc.data); st != tc.want&0x7ff {
			t.Errorf("%s: status %#x, want %#x", tc.name, st, tc.want&0x7ff)
		}
	}
	for _, tc := range []struct {
		name    string
		nsid    uint32
		sel     uint32
		cntlids []uint16
		want    uint16
	}{
		{"attach to an unknown controller", nsid, selAttach, []uint16{0x777}, scCtrlListInvalid},
		{"attach an empty list", nsid, selAttach, nil, scCtrlListInvalid},
		{"attach again", nsid, selAttach, []uint16{a.CNTLID}, scNSAlreadyAttached},
		{"attach to a second host", nsid, selAttach, []uint16{b.CNTLID}, scNSIsPrivate},
		{"attach to two hosts", nsid, selAttach, []uint16{a.CNTLID, b.CNTLID}, scNSIsPrivate},
		{"detach a host it is not attached to", nsid, selDetach, []uint16{b.CNTLID}, scNSNotAttached},
		{"attach unallocated", 2, selAttach, []uint16{a.CNTLID}, scInvalidField},
		{"SEL 5", nsid, 5, []uint16{a.CNTLID}, scInvalidField},
	} {
		if st := attachNS(t, a, tc.nsid, tc.sel, tc.cntlids...); st != tc.want&0x7ff {
			t.Errorf("%s: status %#x, want %#x", tc.name, st, tc.want&0x7ff)
		}
	}
	after, _ := os.ReadFile(o.Namespaces.StatePath)
	if string(before) != string(after) || unallocated(t, a) != free || !slices.Equal(nsList(t, a, cnsAllocatedNSList), []uint32{nsid}) {
		t.Fatalf("a refused command changed the table: UNVMCAP %d → %d\n%s\n→\n%s", free, unallocated(t, a), before, after)
	}
	// NSIDs run out at NN (4).
	for i := 0; i < 3; i++ {
		if _, st := createNS(t, a, 4<<20, nvmekv.CSIKV); st != 0 {
			t.Fatalf("create %d: %#x", i, st)
		}
	}
	if _, st := createNS(t, a, 4<<20, nvmekv.CSIKV); st != scNSIDUnavailable&0x7ff {
		t.Fatalf("a fifth namespace with NN 4: %#x", st)
	}
	// A target with a fixed namespace has no Namespace Management.
	fixed, faddr := startTarget(t, Options{})
	f := hostAs(t, faddr, fixed.NQN(), "nqn.2014-08.org.nvmexpress:uuid:host-a")
	if _, st := createNS(t, f, 4<<20, nvmekv.CSIKV); st != scInvalidOpcode {
		t.Fatalf("create on a target without Namespace Management: %#x", st)
	}
	if st := attachNS(t, f, 1, selDetach, f.CNTLID); st != scInvalidOpcode {
		t.Fatalf("detach on a target without Namespace Management: %#x", st)
	}
}

// TestNamespaceAttributeChanged (NT11): a host that enabled Namespace
// Attribute Notices and posted an Asynchronous Event Request is told
// (DW0 00040002h) when another host attaches a namespace to it; the
// Changed Namespace List names it and reading the log clears it; a second
// change is reported only after that read; a change while no AER waits
// completes the next AER at once.
func TestNamespaceAttributeChanged(t *testing.T) {
	tg, addr := serve(t, managedOptions(t, 64<<20))
	a := hostAs(t, addr, tg.NQN(), "nqn.2014-08.org.nvmexpress:uuid:host-a")
	adm := hostAs(t, addr, tg.NQN(), "nqn.2014-08.org.nvmexpress:uuid:admin")
	if _, st := admin(t, a, nvmekv.Command{Opcode: adminSetFeatures, CDW10: featAsyncEvt, CDW11: oaesNSAttribute}, nil); st != 0 {
		t.Fatal(st)
	}
	cid, err := a.AdminQ.Post(adminSQE(adminAER, 0, 0, 0), nil)
	if err != nil {
		t.Fatal(err)
	}
	nsid, _ := createNS(t, adm, 4<<20, nvmekv.CSIKV)
	if st := attachNS(t, adm, nsid, selAttach, a.CNTLID); st != 0 {
		t.Fatal(st)
	}
	r, err := a.AdminQ.Wait(cid)
	if err != nil || r.Status != 0 || r.DW0 != aenNSChanged {
		t.Fatalf("AER: %+v %v, want DW0 %#x", r, err, aenNSChanged)
	}
	readLog := func() []uint32 {
		b := make([]byte, 4096)
		if _, st := admin(t, a, nvmekv.Command{Opcode: adminGetLogPage, NSID: nsidAll, CDW10: logChangedNS | 1023<<16}, b); st != 0 {
			t.Fatal(st)
		}
		var ids []uint32
		for i := 0; binary.LittleEndian.Uint32(b[i:]) != 0; i += 4 {
			ids = append(ids, binary.LittleEndian.Uint32(b[i:]))
		}
		return ids
	}
	// Before the log is read, a detach is recorded but not reported.
	if st := attachNS(t, adm, nsid, selDetach, a.CNTLID); st != 0 {
		t.Fatal(st)
	}
	if ids := readLog(); !slices.Equal(ids, []uint32{nsid}) {
		t.Fatalf("changed list %v", ids)
	}
	if ids := readLog(); len(ids) != 0 {
		t.Fatalf("changed list after a read %v", ids)
	}
	// A change with no AER waiting: the next AER completes at once.
	if st := attachNS(t, adm, nsid, selAttach, a.CNTLID); st != 0 {
		t.Fatal(st)
	}
	r, err = a.AdminQ.Exec(adminSQE(adminAER, 0, 0, 0), nil, 0)
	if err != nil || r.DW0 != aenNSChanged {
		t.Fatalf("AER after a change: %+v %v", r, err)
	}
	// Deleting an attached namespace reports it too.
	readLog()
	cid, _ = a.AdminQ.Post(adminSQE(adminAER, 0, 0, 0), nil)
	if _, st := admin(t, adm, nvmekv.Command{Opcode: adminNSManagement, NSID: nsid, CDW10: selDelete}, nil); st != 0 {
		t.Fatal(st)
	}
	if r, err := a.AdminQ.Wait(cid); err != nil || r.DW0 != aenNSChanged {
		t.Fatalf("AER after delete: %+v %v", r, err)
	}
	if ids := readLog(); !slices.Equal(ids, []uint32{nsid}) {
		t.Fatalf("changed list after delete %v", ids)
	}
}

// TestNamespacesPersist (NT12): a new target on the same state file has
// the namespaces with their NGUIDs, sizes, data and attachments (a host
// that reconnects with its NQN sees its namespace at once); a capacity
// below what they hold, or a state file of another subsystem, is refused
// at New and the file is left as it was.
func TestNamespacesPersist(t *testing.T) {
	o := managedOptions(t, 64<<20)
	const hostA = "nqn.2014-08.org.nvmexpress:uuid:host-a"
	tg, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	done := make(chan error, 1)
	go func() { done <- tg.Serve(ln) }()
	a, err := nvmetcp.Connect(ln.Addr().String(), nvmetcp.HostOptions{SubNQN: tg.NQN(), HostNQN: hostA, IOQueue: true})
	if err != nil {
		t.Fatal(err)
	}
	nsid, _ := createNS(t, a, 16<<20, nvmekv.CSIKV)
	attachNS(t, a, nsid, selAttach, a.CNTLID)
	kv1, _ := identifyNS(t, a, nsid, nvmekv.CNSIOCSNamespace, nvmekv.CSIKV)
	c, _ := nvmekv.EncodeStore(nsid, []byte("kept"), 5, 0)
	if r, err := a.IOQ.Exec(c.Bytes(), []byte("value"), 0); err != nil || r.Status != 0 {
		t.Fatalf("Store: %+v %v", r, err)
	}
	a.Close()
	tg.Close()
	<-done

	tg2, addr := serve(t, o)
	a2 := hostAs(t, addr, tg2.NQN(), hostA)
	if got := nsList(t, a2, nvmekv.CNSActiveNSList); !slices.Equal(got, []uint32{nsid}) {
		t.Fatalf("active after restart %v", got)
	}
	kv2, _ := identifyNS(t, a2, nsid, nvmekv.CNSIOCSNamespace, nvmekv.CSIKV)
	if !slices.Equal(kv1[:8], kv2[:8]) || !slices.Equal(kv1[48:64], kv2[48:64]) {
		t.Fatalf("NSZE or NGUID changed across the restart:\n%x\n%x", kv1[:64], kv2[:64])
	}
	rc, _ := nvmekv.EncodeRetrieve(nsid, []byte("kept"), 16, 0)
	if r, err := a2.IOQ.Exec(rc.Bytes(), nil, 16); err != nil || string(r.Data) != "value" {
		t.Fatalf("Retrieve after restart: %+v %v", r, err)
	}
	before, _ := os.ReadFile(o.Namespaces.StatePath)
	small := *o.Namespaces
	small.Capacity = 8 << 20
	small.MinBytes = 4 << 20
	if _, err := New(Options{Namespaces: &small}); !errors.Is(err, ErrState) {
		t.Fatalf("New with a capacity below the namespaces: %v", err)
	}
	other := *o.Namespaces
	if _, err := New(Options{NQN: "nqn.2026-12.io.tiercache:other", Namespaces: &other}); !errors.Is(err, ErrState) {
		t.Fatalf("New for another subsystem: %v", err)
	}
	if after, _ := os.ReadFile(o.Namespaces.StatePath); string(before) != string(after) {
		t.Fatal("a refused New changed the state file")
	}
}

// slowStore is an emuStore whose Create waits until release is closed.
type slowStore struct {
	emuStore
	started, release chan struct{}
}

func (s slowStore) Create(nsid uint32, size int64) (nvmekv.Namespace, error) {
	close(s.started)
	<-s.release
	return s.emuStore.Create(nsid, size)
}

// TestSlowCreateKeepsAdminQueue (NT15): while a namespace's store is being
// created, the same admin queue answers Keep Alive (the Linux host resets
// a controller whose Keep Alive times out); the namespace is not listed
// yet but its capacity is taken; then the create completes.
func TestSlowCreateKeepsAdminQueue(t *testing.T) {
	o := managedOptions(t, 32<<20)
	st := slowStore{emuStore: o.Namespaces.Store.(emuStore), started: make(chan struct{}), release: make(chan struct{})}
	o.Namespaces.Store = st
	tg, addr := serve(t, o)
	a := hostAs(t, addr, tg.NQN(), "nqn.2014-08.org.nvmexpress:uuid:host-a")
	d := make([]byte, 4096)
	binary.LittleEndian.PutUint64(d, 16<<20)
	create := nvmekv.Command{Opcode: adminNSManagement, CDW11: uint32(nvmekv.CSIKV) << 24}
	cid, err := a.AdminQ.Post(create.Bytes(), d)
	if err != nil {
		t.Fatal(err)
	}
	<-st.started
	b := hostAs(t, addr, tg.NQN(), "nqn.2014-08.org.nvmexpress:uuid:host-b")
	if got := nsList(t, b, cnsAllocatedNSList); len(got) != 0 {
		t.Fatalf("a namespace being created is listed: %v", got)
	}
	if free := unallocated(t, b); free != 16<<20 {
		t.Fatalf("UNVMCAP %d while 16 MiB of 32 are being created", free)
	}
	ka := adminSQE(adminKeepAlive, 0, 0, 0)
	kaCID, err := a.AdminQ.Post(ka, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan nvmetcp.Result, 1)
	go func() {
		r, _ := a.AdminQ.Wait(kaCID)
		done <- r
	}()
	select {
	case r := <-done:
		if r.Status != 0 {
			t.Fatalf("Keep Alive: %#x", r.Status)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Keep Alive waited behind a namespace create")
	}
	close(st.release)
	r, err := a.AdminQ.Wait(cid)
	if err != nil || r.Status != 0 || r.DW0 != 1 {
		t.Fatalf("create: %+v %v", r, err)
	}
}

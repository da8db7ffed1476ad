package nsadmin

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu"
	"github.com/tiercache/tiercache/nvmekv/nvmetcp"
	"github.com/tiercache/tiercache/nvmekv/tcptarget"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	hostA = "nqn.2014-08.org.nvmexpress:uuid:nsadmin-a"
	hostB = "nqn.2014-08.org.nvmexpress:uuid:nsadmin-b"
)

// store keeps each namespace in an emulated namespace file.
type store struct{ dir string }

func (s store) path(nsid uint32) string { return filepath.Join(s.dir, fmt.Sprintf("ns%d.kv", nsid)) }
func (s store) Create(nsid uint32, size int64) (nvmekv.Namespace, error) {
	s.Remove(nsid)
	return s.Open(nsid, size)
}
func (s store) Open(nsid uint32, size int64) (nvmekv.Namespace, error) {
	return emu.Open(emu.Options{Path: s.path(nsid), Capacity: size, RegionBytes: 1 << 20, MaxValueBytes: 64 << 10, Mode: emu.Strict, Sparse: true, CheckpointPath: "-"})
}
func (s store) Remove(nsid uint32) error { return os.Remove(s.path(nsid)) }

// target is a kvtarget with Namespace Management on a directory; restart
// serves the same directory again.
type target struct {
	t    *testing.T
	dir  string
	addr string
	tg   *tcptarget.Target
	done chan error
}

func startTarget(t *testing.T, capacity int64) *target {
	x := &target{t: t, dir: t.TempDir()}
	x.start(capacity)
	t.Cleanup(x.stop)
	return x
}

func (x *target) start(capacity int64) {
	var err error
	x.tg, err = tcptarget.New(tcptarget.Options{MaxValueBytes: 32 << 10, Namespaces: &tcptarget.NamespaceOptions{Store: store{x.dir},
		StatePath: filepath.Join(x.dir, "namespaces.json"), Capacity: capacity}})
	if err != nil {
		x.t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		x.t.Fatal(err)
	}
	x.addr, x.done = ln.Addr().String(), make(chan error, 1)
	go func(tg *tcptarget.Target) { x.done <- tg.Serve(ln) }(x.tg)
}

func (x *target) stop() {
	if x.tg != nil {
		x.tg.Close()
		<-x.done
		x.tg = nil
	}
}

// controller connects as host and identifies the controller.
func (x *target) controller(host string) *Controller {
	x.t.Helper()
	h, err := nvmetcp.Connect(x.addr, nvmetcp.HostOptions{SubNQN: tcptarget.DefaultNQN, HostNQN: host})
	if err != nil {
		x.t.Fatal(err)
	}
	x.t.Cleanup(func() { h.Close() })
	c, err := New(context.Background(), h, "")
	if err != nil {
		x.t.Fatal(err)
	}
	return c
}

// TestEnsureFindsItsNamespaceAgain (NA1): Ensure creates a KV namespace,
// records it and attaches it; the same name on a new connection, after a
// restart of the target and after its NSID changed finds the same
// namespace (by NGUID) and creates nothing; two processes' Managers
// ensure different names at once without losing a record.
func TestEnsureFindsItsNamespaceAgain(t *testing.T) {
	x := startTarget(t, 64<<20)
	reg := filepath.Join(t.TempDir(), "namespaces.json")
	ctx := context.Background()
	m := &Manager{C: x.controller(hostA), RegistryPath: reg}
	a, err := m.Ensure(ctx, "tenant-a", 8<<20)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Namespace.Attached || !a.Namespace.KV || a.Namespace.Size != 8<<20 || !a.Record.Created || a.Record.ID != a.Namespace.ID() || a.Record.ID[:6] != "nguid:" {
		t.Fatalf("ensured %+v", a)
	}
	again, err := (&Manager{C: x.controller(hostA), RegistryPath: reg}).Ensure(ctx, "tenant-a", 8<<20)
	if err != nil || again.Namespace.NSID != a.Namespace.NSID || again.Record.ID != a.Record.ID {
		t.Fatalf("again: %+v %v", again, err)
	}
	// Move it: a second namespace takes NSID 2, then the first is dropped
	// and a third takes NSID 1; "tenant-c" is found by its NGUID, not NSID.
	if _, err := m.Ensure(ctx, "tenant-b", 8<<20); err != nil {
		t.Fatal(err)
	}
	if err := m.Drop(ctx, "tenant-a"); err != nil {
		t.Fatal(err)
	}
	c, err := m.Ensure(ctx, "tenant-c", 4<<20)
	if err != nil || c.Namespace.NSID != 1 {
		t.Fatalf("tenant-c %+v %v", c, err)
	}
	x.stop()
	x.start(64 << 20)
	m2 := &Manager{C: x.controller(hostA), RegistryPath: reg}
	list, err := m2.List(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("list after restart: %+v %v", list, err)
	}
	for _, o := range list {
		if o.Record.Name == "" || !o.Namespace.Attached || o.Record.ID != o.Namespace.ID() {
			t.Fatalf("after restart: %+v", o)
		}
	}
	c2, err := m2.Ensure(ctx, "tenant-c", 4<<20)
	if err != nil || c2.Namespace.NSID != 1 || c2.Record.ID != c.Record.ID {
		t.Fatalf("tenant-c after restart: %+v %v", c2, err)
	}
	// A record whose NSID is stale (the device renumbered): found by its
	// NGUID, and the record follows.
	b, _ := os.ReadFile(reg)
	stale := strings.Replace(string(b), `"nsid": 2`, `"nsid": 7`, 1)
	if stale == string(b) {
		t.Fatalf("no NSID 2 in %s", b)
	}
	os.WriteFile(reg, []byte(stale), 0o600)
	if o, err := m2.Ensure(ctx, "tenant-b", 8<<20); err != nil || o.Namespace.NSID != 2 || o.Record.NSID != 2 {
		t.Fatalf("tenant-b with a stale NSID: %+v %v", o, err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := (&Manager{C: x.controller(hostA), RegistryPath: reg}).Ensure(ctx, fmt.Sprintf("parallel-%d", i), 4<<20)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if list, _ := m2.List(ctx); len(list) != 4 {
		t.Fatalf("after two concurrent Ensures: %d namespaces", len(list))
	}
}

// TestNeverDeletesWhatItDidNotCreate (NA2): a namespace another host
// created is not deleted by NSID (ErrNotOwned); claimed under a name, Drop
// refuses it and Forget only detaches it; a second claim, by name or by
// namespace, is ErrClaimed. The namespace survives all of it.
func TestNeverDeletesWhatItDidNotCreate(t *testing.T) {
	x := startTarget(t, 64<<20)
	ctx := context.Background()
	other := x.controller(hostB)
	nsid, err := other.Create(ctx, 8<<20)
	if err != nil {
		t.Fatal(err)
	}
	m := &Manager{C: x.controller(hostA), RegistryPath: filepath.Join(t.TempDir(), "ns.json")}
	if err := m.DeleteNSID(ctx, nsid); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("DeleteNSID of another's namespace: %v", err)
	}
	if _, err := m.Claim(ctx, "borrowed", nsid); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Claim(ctx, "borrowed", nsid); !errors.Is(err, ErrClaimed) {
		t.Fatalf("the same name twice: %v", err)
	}
	if _, err := m.Claim(ctx, "again", nsid); !errors.Is(err, ErrClaimed) {
		t.Fatalf("one namespace for two names: %v", err)
	}
	if err := m.Drop(ctx, "borrowed"); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("Drop of a claimed namespace: %v", err)
	}
	if err := m.DeleteNSID(ctx, nsid); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("DeleteNSID of a claimed namespace: %v", err)
	}
	if err := m.Forget(ctx, "borrowed"); err != nil {
		t.Fatal(err)
	}
	n, err := m.C.Namespace(ctx, nsid)
	if err != nil || n.Attached {
		t.Fatalf("after Forget: %+v %v (want still allocated, detached)", n, err)
	}
}

// TestRefusals (NA3): a size beyond the unallocated capacity, a recorded
// namespace asked with another size, one deleted behind the registry's
// back and a controller without Namespace Management each get their
// error and change nothing on the device.
func TestRefusals(t *testing.T) {
	x := startTarget(t, 32<<20)
	ctx := context.Background()
	m := &Manager{C: x.controller(hostA), RegistryPath: filepath.Join(t.TempDir(), "ns.json")}
	if _, err := m.Ensure(ctx, "big", 64<<20); !errors.Is(err, ErrCapacity) {
		t.Fatalf("64 MiB of 32: %v", err)
	}
	if ns, _ := m.C.Namespaces(ctx); len(ns) != 0 {
		t.Fatalf("a refused Ensure left %+v", ns)
	}
	a, err := m.Ensure(ctx, "a", 8<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Ensure(ctx, "a", 16<<20); !errors.Is(err, ErrMismatch) {
		t.Fatalf("another size: %v", err)
	}
	if err := m.C.Attach(ctx, a.Namespace.NSID, false); err != nil {
		t.Fatal(err)
	}
	if err := m.C.Delete(ctx, a.Namespace.NSID); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Ensure(ctx, "a", 8<<20); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a recorded namespace deleted behind the registry: %v", err)
	}
	if ns, _ := m.C.Namespaces(ctx); len(ns) != 0 {
		t.Fatalf("Ensure recreated it: %+v", ns)
	}
	if err := m.Drop(ctx, "a"); err != nil {
		t.Fatalf("Drop of a namespace already gone: %v", err)
	}
	// A controller without Namespace Management: refused before sending.
	dir := t.TempDir()
	ns, err := emu.Open(emu.Options{Path: dir + "/kv", Capacity: 16 << 20, RegionBytes: 1 << 20, MaxValueBytes: 64 << 10, Sparse: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	tg, err := tcptarget.New(tcptarget.Options{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	done := make(chan error, 1)
	go func() { done <- tg.Serve(ln) }()
	defer func() { tg.Close(); <-done }()
	h, err := nvmetcp.Connect(ln.Addr().String(), nvmetcp.HostOptions{SubNQN: tg.NQN(), HostNQN: hostA})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	c, err := New(ctx, h, "")
	if err != nil {
		t.Fatal(err)
	}
	before := tg.Stats().Commands
	if _, err := c.Create(ctx, 4<<20); !errors.Is(err, ErrNoManagement) {
		t.Fatalf("Create without Namespace Management: %v", err)
	}
	if got := tg.Stats().Commands; got != before {
		t.Fatalf("%d commands reached the controller", got-before)
	}
	list, err := c.Namespaces(ctx)
	if err != nil || len(list) != 1 || !list[0].KV || !list[0].Attached {
		t.Fatalf("namespaces without management: %+v %v", list, err)
	}
	// A raw Namespace Management command there answers Invalid Opcode,
	// which maps to ErrNoManagement too.
	d := make([]byte, 4096)
	binary.LittleEndian.PutUint64(d, 4<<20)
	_, err = h.Admin(ctx, nvmekv.Command{Opcode: opNSManagement, CDW11: 1 << 24}, d)
	if err = c.statusErr("create", err); !errors.Is(err, ErrNoManagement) {
		t.Fatalf("raw create: %v", err)
	}
}

// seen counts the admin opcodes a controller is sent, and can make one
// namespace's descriptor list say another command set (the tcptarget
// makes KV namespaces only; a subsystem with an NVM namespace beside them
// is what this stands for).
type seen struct {
	a       Admin
	ops     map[uint8]int
	nvmNSID uint32
}

func (s *seen) Admin(ctx context.Context, c nvmekv.Command, buf []byte) (uint32, error) {
	s.ops[c.Opcode]++
	dw0, err := s.a.Admin(ctx, c, buf)
	if err == nil && c.Opcode == 0x06 && uint8(c.CDW10) == nvmekv.CNSNSDescriptorList && c.NSID == s.nvmNSID {
		for off := 0; off+4 <= len(buf) && buf[off] != 0; off += 4 + int(buf[off+1]) {
			if buf[off] == nvmekv.NIDTCSI {
				buf[off+4] = nvmekv.CSINVM
			}
		}
	}
	return dw0, err
}

// TestCheckAll (NA4): Check names every problem of a set of names at
// once, sending nothing but Identify; a set it passes is then ensured.
func TestCheckAll(t *testing.T) {
	x := startTarget(t, 32<<20)
	ctx := context.Background()
	reg := filepath.Join(t.TempDir(), "ns.json")
	m := &Manager{C: x.controller(hostA), RegistryPath: reg}
	a, err := m.Ensure(ctx, "a", 8<<20)
	if err != nil {
		t.Fatal(err)
	}
	nvmNSID, err := m.C.Create(ctx, 4<<20) // unrecorded, attached to nobody
	if err != nil {
		t.Fatal(err)
	}
	h, err := nvmetcp.Connect(x.addr, nvmetcp.HostOptions{SubNQN: tcptarget.DefaultNQN, HostNQN: hostA})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := m.C.Attach(ctx, nvmNSID, true); err != nil {
		t.Fatal(err)
	}
	s := &seen{a: h, ops: map[uint8]int{}, nvmNSID: nvmNSID}
	c, err := New(ctx, s, "")
	if err != nil {
		t.Fatal(err)
	}
	cm := &Manager{C: c, RegistryPath: reg}
	err = cm.Check(ctx, []Want{
		{Name: "a", Size: 16 << 20},         // recorded with 8 MiB
		{Name: "b", NSID: a.Namespace.NSID}, // a's namespace, recorded as "a"
		{Name: "c", NSID: nvmNSID},          // not KV
		{Name: "d", NSID: 99},               // missing
		{Name: "e", Size: 12 << 20},         // with f, past the 20 MiB unallocated
		{Name: "f", Size: 12 << 20},         //
		{Name: "g", NSID: nvmNSID},          // claimed twice
		{Name: "h"},                         // neither recorded nor sized
	})
	for _, want := range []string{
		`"a" was created with 8388608 bytes, 16777216 asked`,
		`"a" and "b" both claim namespace 1`,
		`"c" claims namespace 2 of`,
		`"d" claims namespace 99, which`,
		"the new namespaces need 25165824 bytes, 20971520 of 33554432 are unallocated",
		`"c" and "g" both claim namespace 2`,
		`no namespace is recorded as "h"`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check: %v\nlacks %q", err, want)
		}
	}
	for _, sentinel := range []error{ErrMismatch, ErrClaimed, ErrCommandSet, ErrNotFound, ErrCapacity} {
		if !errors.Is(err, sentinel) {
			t.Errorf("Check's error is not %v", sentinel)
		}
	}
	for op, n := range s.ops {
		if op != 0x06 {
			t.Errorf("Check sent %d commands of opcode %#02x", n, op)
		}
	}
	if err := cm.Check(ctx, []Want{{Name: "a", Size: 8 << 20}, {Name: "e", Size: 12 << 20}}); err != nil {
		t.Fatalf("a set that fits: %v", err)
	}
}

package kvtcp

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/nsadmin"
	"github.com/tiercache/tiercache/nvmekv/nvmetcp"
)

const (
	hostA = "nqn.2014-08.org.nvmexpress:uuid:guest-host-a"
	hostB = "nqn.2014-08.org.nvmexpress:uuid:guest-host-b"
)

// hostOpts are the connect options of a host NQN with a host ID of its
// own: the kernel refuses (EINVAL) a hostnqn= whose host ID, by default
// the default host's, is known under another NQN
// (drivers/nvme/host/fabrics.c nvmf_host_add).
func hostOpts(nqn string) string {
	s := sha256.Sum256([]byte(nqn))
	return fmt.Sprintf(",hostnqn=%s,hostid=%x-%x-%x-%x-%x", nqn, s[0:4], s[4:6], s[6:8], s[8:10], s[10:16])
}

// nvmeCLI runs Debian's nvme-cli (packed by the host: vmtest
// DefaultHostPrograms) and returns its exit status and output, stdout
// then stderr.
func nvmeCLI(t *testing.T, args ...string) (int, string) {
	t.Helper()
	code, out, errs := nvmeRun(t, args...)
	return code, out + errs
}

// nvmeRun is nvmeCLI with stdout and stderr apart.
func nvmeRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return Run(t, NVMeCLI(t), args...)
}

// nvmeJSON runs an nvme-cli command with -o json and decodes its output.
func nvmeJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	code, out := nvmeCLI(t, append(args, "-o", "json")...)
	if code != 0 {
		t.Fatalf("nvme %v: exit %d: %s", args, code, out)
	}
	d := json.NewDecoder(strings.NewReader(out))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("nvme %v printed %q: %v", args, out, err)
	}
	return m
}

// number reads a number of nvme-cli's JSON output (a 128-bit one, such
// as TNVMCAP, is a string of decimal digits there).
func number(t *testing.T, m map[string]any, key string) float64 {
	t.Helper()
	var s string
	switch v := m[key].(type) {
	case json.Number:
		s = v.String()
	case string:
		s = v
	default:
		t.Fatalf("nvme-cli output has no number %q: %v", key, m)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("nvme-cli's %s = %q: %v", key, s, err)
	}
	return f
}

// nsList is `nvme list-ns` (args: -a for the allocated NSIDs).
func nsList(t *testing.T, ctrl string, args ...string) []uint32 {
	t.Helper()
	code, out := nvmeCLI(t, append([]string{"list-ns", ctrl}, args...)...)
	if code != 0 {
		t.Fatalf("nvme list-ns %s %v: exit %d: %s", ctrl, args, code, out)
	}
	var ids []uint32
	for _, m := range regexp.MustCompile(`\[\s*\d+\]:0x([0-9a-f]+)`).FindAllStringSubmatch(out, -1) {
		v, _ := strconv.ParseUint(m[1], 16, 32)
		ids = append(ids, uint32(v))
	}
	return ids
}

// tiercacheNS runs `tiercache ns VERB -ctrl ctrl -registry reg args...`.
func tiercacheNS(t *testing.T, verb, ctrl, reg string, args ...string) (int, string, string) {
	t.Helper()
	return Run(t, Binary(t), append([]string{"ns", verb, "-ctrl", ctrl, "-registry", reg, "-timeout", "2m"}, args...)...)
}

// ensured is `tiercache ns create -json`'s namespace.
type ensured struct {
	Record    nsadmin.Record
	Namespace nsadmin.Namespace
	Device    string
}

func createNS(t *testing.T, ctrl, reg, name, size string) ensured {
	t.Helper()
	code, out, errs := tiercacheNS(t, "create", ctrl, reg, "-name", name, "-size", size, "-json")
	if code != 0 {
		t.Fatalf("tiercache ns create %s: exit %d: %s\nkernel: %s", name, code, errs, KernelLog("nvme"))
	}
	var r struct{ Namespaces []ensured }
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Namespaces) != 1 {
		t.Fatalf("tiercache ns create printed %q: %v", out, err)
	}
	return r.Namespaces[0]
}

// TestNamespaceManagementThroughKernel (V30): `tiercache kvtarget -dir`
// attached through the guest kernel's nvme-tcp host, managed through the
// kernel's /dev/nvmeX:
//   - `tiercache ns create` makes a KV namespace, attaches it and prints
//     its /dev/ngXnY, where KV passthrough stores a value; nvme-cli's
//     list-ns (active and allocated), id-ctrl (TNVMCAP, UNVMCAP, OACS),
//     ns-descs (the NGUID), id-ns (Invalid I/O Command Set: a KV
//     namespace has no NVM data) and the KV Identify Namespace through
//     admin-passthru agree with what tiercache reads;
//   - a size beyond the unallocated capacity, a namespace of the NVM
//     command set (nvme create-ns --csi=0), a namespace of QEMU's NVM
//     controller claimed as KV and a create on QEMU's controller (which
//     has no Namespace Management) are refused and change nothing;
//   - another host (an NVMe/TCP connection of this process) creates a
//     namespace and attaches it to the kernel's controller: only the
//     Namespace Attribute Changed event tells the kernel, which rescans
//     and makes its char device; detached, the device goes away;
//   - after a restart of the target and a new kernel controller the same
//     name finds the same namespace (NGUID) with its value; a namespace
//     nvme-cli created is not deleted by `tiercache ns delete -nsid`;
//     `tiercache ns delete` removes the one it created, device and all.
func TestNamespaceManagementThroughKernel(t *testing.T) {
	requireGuest(t)
	dir, reg := "/tmp/kv-nsdir", "/tmp/kv-ns-registry.json"
	os.RemoveAll(dir)
	os.Remove(reg)
	tg := StartTarget(t, "-dir", dir, "-capacity", "48MiB", "-max-namespaces", "8")
	d, err := tg.Connect(hostOpts(hostA), false)
	if err != nil {
		t.Fatal(err)
	}
	ctrl := "/dev/" + d.Ctrl
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()

	// Create through the kernel.
	a := createNS(t, ctrl, reg, "tenant-a", "16MiB")
	if a.Namespace.NSID != 1 || !a.Namespace.KV || a.Namespace.Size != 16<<20 || a.Device == "" || !strings.HasPrefix(a.Record.ID, "nguid:") {
		t.Fatalf("created %+v", a)
	}
	p, err := nvmekv.OpenPassthrough(a.Device, nvmekv.PassthroughOptions{RingEntries: 16})
	if err != nil {
		t.Fatalf("OpenPassthrough(%s): %v", a.Device, err)
	}
	if err := p.Store(ctx, []byte("kept"), []byte("across restarts"), 0); err != nil {
		t.Fatal(err)
	}
	p.Close()

	// nvme-cli's view.
	if got := nsList(t, ctrl); !slices.Equal(got, []uint32{1}) {
		t.Fatalf("nvme list-ns: %v", got)
	}
	if got := nsList(t, ctrl, "-a"); !slices.Equal(got, []uint32{1}) {
		t.Fatalf("nvme list-ns -a: %v", got)
	}
	id := nvmeJSON(t, "id-ctrl", ctrl)
	if number(t, id, "tnvmcap") != 48<<20 || number(t, id, "unvmcap") != 32<<20 || int(number(t, id, "oacs"))&8 == 0 {
		t.Fatalf("nvme id-ctrl: tnvmcap %v unvmcap %v oacs %v", id["tnvmcap"], id["unvmcap"], id["oacs"])
	}
	descs := nvmeJSON(t, "ns-descs", ctrl, "-n", "1")
	nguid, csi := "", ""
	entries, _ := descs["ns-descs"].([]any)
	for _, e := range entries {
		m, _ := e.(map[string]any)
		if v, ok := m["nguid"]; ok {
			nguid = strings.ToLower(fmt.Sprint(v))
		}
		if v, ok := m["csi"]; ok {
			csi = fmt.Sprint(v)
		}
	}
	if nguid != strings.TrimPrefix(a.Record.ID, "nguid:") || csi != "0x1" && csi != "1" {
		t.Fatalf("nvme ns-descs: NGUID %q CSI %q (%v), tiercache %s", nguid, csi, descs, a.Record.ID)
	}
	if code, out := nvmeCLI(t, "id-ns", ctrl, "-n", "1"); code == 0 || !strings.Contains(strings.ToLower(out), "412c") && !strings.Contains(strings.ToLower(out), "command set") {
		t.Fatalf("nvme id-ns of a KV namespace: exit %d: %s", code, out)
	}
	code, raw, _ := nvmeRun(t, "admin-passthru", ctrl, "--opcode=0x06", "--namespace-id=1", "--cdw10=5", "--cdw11=0x01000000", "--data-len=4096", "--read", "--raw-binary")
	if code != 0 || len(raw) < 4096 || binary.LittleEndian.Uint64([]byte(raw[:8])) != 16<<20 || hex.EncodeToString([]byte(raw[48:64])) != strings.TrimPrefix(a.Record.ID, "nguid:") {
		t.Fatalf("nvme admin-passthru Identify CNS 05h CSI 1: exit %d, %d bytes", code, len(raw))
	}

	// Refusals change nothing.
	if code, _, errs := tiercacheNS(t, "create", ctrl, reg, "-name", "too-big", "-size", "1GiB"); code != 1 || !strings.Contains(errs, "not enough unallocated capacity") {
		t.Fatalf("create 1 GiB of 32 MiB: exit %d: %s", code, errs)
	}
	if code, out := nvmeCLI(t, "create-ns", ctrl, "--nsze=8388608", "--ncap=8388608", "--flbas=0", "--csi=0"); code == 0 {
		t.Fatalf("nvme create-ns --csi=0 succeeded: %s", out)
	} else {
		t.Logf("nvme create-ns --csi=0: exit %d: %s", code, strings.TrimSpace(out))
	}
	if code, _, errs := tiercacheNS(t, "claim", "/dev/nvme0", reg, "-name", "nvm", "-nsid", "1"); code != 1 || !strings.Contains(errs, "not a KV namespace") {
		t.Fatalf("claim QEMU's NVM namespace: exit %d: %s", code, errs)
	}
	qemuSaysAboutNSManagement(t)
	if got := nsList(t, ctrl, "-a"); !slices.Equal(got, []uint32{1}) {
		t.Fatalf("after the refusals: allocated %v", got)
	}

	// Another host attaches a namespace to the kernel's controller.
	kernel, err := nsadmin.Open(ctx, ctrl)
	if err != nil {
		t.Fatal(err)
	}
	defer kernel.Close()
	cntlid, _ := strconv.Atoi(readAttr("/sys/class/nvme/" + d.Ctrl + "/cntlid"))
	b, err := nvmetcp.Connect("127.0.0.1:"+strconv.Itoa(Port), nvmetcp.HostOptions{SubNQN: NQN, HostNQN: hostB})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	other, err := nsadmin.New(ctx, b, "")
	if err != nil {
		t.Fatal(err)
	}
	nsid, err := other.Create(ctx, 8<<20)
	if err != nil {
		t.Fatal(err)
	}
	list := make([]byte, 4096)
	binary.LittleEndian.PutUint16(list, 1)
	binary.LittleEndian.PutUint16(list[2:], uint16(cntlid))
	start := time.Now()
	if _, err := b.Admin(ctx, nvmekv.Command{Opcode: 0x15, NSID: nsid, CDW10: 0}, list); err != nil {
		t.Fatalf("host b attaches namespace %d to the kernel's controller %d: %v", nsid, cntlid, err)
	}
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	dev, err := kernel.WaitDevice(wctx, nsid)
	wcancel()
	if err != nil {
		t.Fatalf("after the event: %v\nkernel: %s", err, KernelLog("nvme"))
	}
	t.Logf("namespace %d attached by another host appeared as %s after %v", nsid, dev, time.Since(start).Round(time.Millisecond))
	if !strings.Contains(KernelLog(d.Ctrl), "rescanning namespaces") {
		t.Fatalf("the kernel did not log a rescan for the event: %s", KernelLog(d.Ctrl))
	}
	if _, err := b.Admin(ctx, nvmekv.Command{Opcode: 0x15, NSID: nsid, CDW10: 1}, list); err != nil {
		t.Fatal(err)
	}
	wctx, wcancel = context.WithTimeout(ctx, time.Minute)
	err = kernel.WaitGone(wctx, nsid)
	wcancel()
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Delete(ctx, nsid); err != nil {
		t.Fatal(err)
	}
	kernel.Close()
	b.Close()

	// Restart: the same name finds the same namespace and its value.
	d.Disconnect()
	tg.Stop()
	tg = StartTarget(t, "-dir", dir, "-capacity", "48MiB", "-max-namespaces", "8")
	d, err = tg.Connect(hostOpts(hostA), true)
	if err != nil {
		t.Fatal(err)
	}
	ctrl = "/dev/" + d.Ctrl
	again := createNS(t, ctrl, reg, "tenant-a", "16MiB")
	if again.Record.ID != a.Record.ID || again.Namespace.NSID != 1 || again.Device != d.NG {
		t.Fatalf("after the restart: %+v, before %+v (kernel device %s)", again, a, d.NG)
	}
	p, err = nvmekv.OpenPassthrough(again.Device, nvmekv.PassthroughOptions{RingEntries: 16})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, err := p.Retrieve(ctx, []byte("kept"), buf)
	p.Close()
	if err != nil || string(buf[:n]) != "across restarts" {
		t.Fatalf("the value after the restart: %q %v", buf[:n], err)
	}

	// A namespace nvme-cli created is not this host's to delete.
	code, out := nvmeCLI(t, "create-ns", ctrl, "--nsze=8388608", "--ncap=8388608", "--flbas=0", "--csi=1")
	m := regexp.MustCompile(`nsid:\s*(\d+)`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("nvme create-ns --csi=1: exit %d: %s", code, out)
	}
	if code, _, errs := tiercacheNS(t, "delete", ctrl, reg, "-nsid", m[1]); code != 1 || !strings.Contains(errs, "not created by this host") {
		t.Fatalf("tiercache ns delete of nvme-cli's namespace: exit %d: %s", code, errs)
	}
	if got := nsList(t, ctrl, "-a"); len(got) != 2 {
		t.Fatalf("nvme-cli's namespace is gone: %v", got)
	}
	if code, out := nvmeCLI(t, "delete-ns", ctrl, "-n", m[1]); code != 0 {
		t.Fatalf("nvme delete-ns: %s", out)
	}
	if code, _, errs := tiercacheNS(t, "delete", ctrl, reg, "-name", "tenant-a"); code != 0 {
		t.Fatalf("tiercache ns delete: %s", errs)
	}
	if _, err := os.Stat(again.Device); err == nil {
		t.Fatalf("%s still exists after the delete", again.Device)
	}
	if got := nsList(t, ctrl, "-a"); len(got) != 0 {
		t.Fatalf("allocated after the delete: %v", got)
	}
	if ms, _ := filepath.Glob(dir + "/ns*.kv"); len(ms) != 0 {
		t.Fatalf("namespace files left: %v", ms)
	}
}

// qemuSaysAboutNSManagement records what QEMU's emulated NVMe controller
// (nvme0, no NVMe subsystem device) says about Namespace Management: its
// OACS, and its answer to a Namespace Management create sent raw; nothing
// may change on it.
func qemuSaysAboutNSManagement(t *testing.T) {
	t.Helper()
	c, err := nsadmin.Open(t.Context(), "/dev/nvme0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	before := nsList(t, "/dev/nvme0")
	d, err := nsadmin.OpenCharDevice("/dev/nvme0")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	data := make([]byte, 4096)
	binary.LittleEndian.PutUint64(data, 2048) // NSZE and NCAP: 2048 blocks, NVM
	binary.LittleEndian.PutUint64(data[8:], 2048)
	_, err = d.Admin(t.Context(), nvmekv.Command{Opcode: 0x0d}, data)
	t.Logf("QEMU's NVMe controller: OACS Namespace Management %v, unallocated %d; a raw Namespace Management create answers: %v", c.Info().NSManagement, c.Info().Unallocated, err)
	if err == nil {
		t.Fatal("QEMU's controller created a namespace")
	}
	if code, _, errs := tiercacheNS(t, "create", "/dev/nvme0", "/tmp/kv-ns-qemu.json", "-name", "q", "-size", "1MiB"); code != 1 || !strings.Contains(errs, "does not support Namespace Management") {
		t.Fatalf("tiercache ns create on QEMU's controller: exit %d: %s", code, errs)
	} else {
		t.Logf("tiercache ns create on QEMU's controller: %s", strings.TrimSpace(errs))
	}
	if after := nsList(t, "/dev/nvme0"); !slices.Equal(before, after) {
		t.Fatalf("QEMU's namespaces changed: %v → %v", before, after)
	}
}

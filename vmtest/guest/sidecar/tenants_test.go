package sidecar

import (
	"context"
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

	"github.com/redis/go-redis/v9"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/nsadmin"
	"github.com/tiercache/tiercache/vmtest/guest/kvtcp"
)

// tenantKeys is what each key prefix writes in the tenant test: a and b
// have namespaces of their own, "x:" keys belong to no tenant (the
// default namespace). The counts differ so that every namespace's
// utilization tells whose keys it holds.
var tenantKeys = []struct {
	prefix string
	keys   int
}{{"a:", 24}, {"b:", 8}, {"x:", 16}}

const tenantValue = 32 << 10 // above hot.max_value: warm, and whole in one KV value

// tenantsYAML is the tenants section: a and b with cold namespaces.
func tenantsYAML(withB bool) string {
	s := "tenants:\n  - {name: a, prefix: \"a:\", quota: 512KiB, cold_bytes: 16MiB}\n"
	if withB {
		s += "  - {name: b, prefix: \"b:\", quota: 2MiB, cold_bytes: 8MiB}\n"
	}
	return s
}

// tenantRun runs `tiercache tenant ARGS -config cfg`.
func tenantRun(t *testing.T, cfg string, args ...string) (int, string, string) {
	t.Helper()
	return kvtcp.Run(t, binary(t), append(append([]string{"tenant"}, args...), "-config", cfg)...)
}

// tenantIDs is `tiercache tenant list -json`: each tenant namespace's
// NGUID by tenant name.
func tenantIDs(t *testing.T, cfg string) map[string]string {
	t.Helper()
	code, out, errs := tenantRun(t, cfg, "list", "-json")
	if code != 0 {
		t.Fatalf("tiercache tenant list: exit %d: %s", code, errs)
	}
	var l struct {
		Namespaces []struct{ Name, ID, Where string }
	}
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatalf("tiercache tenant list -json printed %q: %v", out, err)
	}
	ids := map[string]string{}
	for _, n := range l.Namespaces {
		ids[n.Name] = n.ID
	}
	t.Logf("tiercache tenant list: %s", strings.Join(strings.Fields(out), " "))
	return ids
}

func tenantKeyCount() (n int) {
	for _, k := range tenantKeys {
		n += k.keys
	}
	return n
}

// tenantRow is INFO tenants' row of tenant name, field by field.
func tenantRow(t *testing.T, rc *redis.Client, name string) map[string]string {
	t.Helper()
	row := map[string]string{}
	for _, kv := range strings.Split(info(t, rc, "tenants")["tenant_"+name], ",") {
		k, v, _ := strings.Cut(kv, "=")
		row[k] = v
	}
	return row
}

// setTenantKeys SETs tenantKeys; checkTenantKeys reads them back.
func setTenantKeys(ctx context.Context, t *testing.T, rc *redis.Client) {
	t.Helper()
	for _, p := range tenantKeys {
		for i := range p.keys {
			if err := rc.Set(ctx, fmt.Sprintf("%s%d", p.prefix, i), value(i, tenantValue), 0).Err(); err != nil {
				t.Fatalf("SET %s%d: %v", p.prefix, i, err)
			}
		}
	}
}

func checkTenantKeys(ctx context.Context, t *testing.T, rc *redis.Client) {
	t.Helper()
	for _, p := range tenantKeys {
		for i := range p.keys {
			k := fmt.Sprintf("%s%d", p.prefix, i)
			if v, err := rc.Get(ctx, k).Bytes(); err != nil || string(v) != string(value(i, tenantValue)) {
				t.Fatalf("GET %s: %d bytes, %v", k, len(v), err)
			}
		}
	}
}

// utilization is the namespace's NUSE (KV Identify Namespace, CNS 05h
// CSI 1) read through the kernel on its /dev/ngXnY: the live bytes the
// target's emulated namespace holds.
func utilization(t *testing.T, dev string) uint64 {
	t.Helper()
	p, err := nvmekv.OpenPassthrough(dev, nvmekv.PassthroughOptions{RingEntries: 16})
	if err != nil {
		t.Fatalf("OpenPassthrough(%s): %v", dev, err)
	}
	defer p.Close()
	return p.Limits().Utilization
}

// TestSidecarTenantNamespacesOnKVSSD (V32): tenants with cold_bytes on a
// KV SSD (cold.backend passthrough) served by `tiercache kvtarget -dir`
// through the kernel's nvme-tcp host. The sidecar's start creates a KV
// namespace per tenant through the kernel's /dev/nvmeX (nvmekv/nsadmin,
// coldstore Multi); tenant a, past its DRAM quota, evicts its own keys to
// its namespace while the sidecar runs (INFO tenants: b writes nothing
// yet); a namespace nvme-cli creates and attaches while the sidecar runs
// appears in the kernel and changes nothing for the sidecar; after the sidecar stops, each namespace's
// utilization (NUSE through the kernel) holds its own keys' bytes and less
// than the smallest other share, so no key went to another tenant's
// namespace, and nvme-cli's namespace holds nothing; a restart finds the
// same namespaces (NGUIDs) with every key, read from cold; `tiercache
// tenant drop` deletes the namespace it made for a removed tenant and
// leaves the others.
func TestSidecarTenantNamespacesOnKVSSD(t *testing.T) {
	requireGuest(t)
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	dir := t.TempDir()
	tg := kvtcp.StartTarget(t, "-dir", filepath.Join(dir, "kvdir"), "-capacity", "64MiB", "-max-namespaces", "8")
	d, err := tg.Connect("", false)
	if err != nil {
		t.Fatal(err)
	}
	ctrl := "/dev/" + d.Ctrl
	// The default namespace, made by `tiercache ns` under a registry of its own.
	code, out, errs := kvtcp.Run(t, binary(t), "ns", "create", "-ctrl", ctrl, "-registry", filepath.Join(dir, "default-ns.json"),
		"-name", "default", "-size", "16MiB", "-json", "-timeout", "2m")
	var made struct{ Namespaces []struct{ Device string } }
	if json.Unmarshal([]byte(out), &made); code != 0 || len(made.Namespaces) != 1 || made.Namespaces[0].Device == "" {
		t.Fatalf("tiercache ns create default: exit %d: %s%s", code, out, errs)
	}
	def := made.Namespaces[0].Device

	socket := "/tmp/tc-vm-tenants.sock"
	reg := filepath.Join(dir, "namespaces.json")
	c := strings.Replace(config(dir, socket), "  backend: emulated\n", "  backend: passthrough\n  device: "+def+"\n  namespace_registry: "+reg+"\n", 1)
	c = strings.Replace(c, "  data_dir: "+filepath.Join(dir, "data")+"\n  path: "+coldDevice+"\n  capacity: 128MiB\n", "", 1)
	cfg := filepath.Join(dir, "tiercache.yaml")
	if err := os.WriteFile(cfg, []byte(c+tenantsYAML(true)), 0o644); err != nil {
		t.Fatal(err)
	}

	start0 := time.Now()
	p := start(t, cfg, socket)
	t.Logf("the sidecar made its tenants' namespaces and opened them in %v", time.Since(start0).Round(time.Millisecond))
	rc := p.client()
	setTenantKeys(ctx, t, rc)
	// a is past its DRAM quota: it evicts its own keys, which the flusher
	// writes to a's namespace while the sidecar runs; b and the default
	// tenant are within theirs and write nothing yet.
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		a := tenantRow(t, rc, "a")
		// cold_writes counts a batch when the flusher hands it to the
		// namespace, the device's bytes once its write completed: wait for both.
		if infoInt(t, a, "cold_writes") > 0 && infoInt(t, a, "cold_device_written_bytes") >= tenantValue &&
			infoInt(t, info(t, rc, "tiers"), "flusher_queue") == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a's evictions did not reach its namespace within 2m: tenant_a %v\ntarget: %s", a, tg.Output())
		}
	}
	a, b := tenantRow(t, rc, "a"), tenantRow(t, rc, "b")
	if a["cold_namespace"] != "own" || b["cold_namespace"] != "own" || infoInt(t, a, "evictions") == 0 || infoInt(t, a, "cold_device_written_bytes") < tenantValue ||
		infoInt(t, b, "cold_writes") != 0 || infoInt(t, b, "cold_device_written_bytes") != 0 {
		t.Fatalf("INFO tenants while running: tenant_a %v, tenant_b %v", a, b)
	}
	t.Logf("while running: a evicted %s keys, wrote %s bytes to its namespace; b wrote %s", a["evictions"], a["cold_device_written_bytes"], b["cold_device_written_bytes"])

	// Another admin makes a namespace on the controller while the sidecar
	// runs: nvme-cli creates it and attaches it to the kernel's controller.
	kernel, err := nsadmin.Open(ctx, ctrl)
	if err != nil {
		t.Fatal(err)
	}
	defer kernel.Close()
	code, out, errs = kvtcp.Run(t, kvtcp.NVMeCLI(t), "create-ns", ctrl, "--nsze=4194304", "--ncap=4194304", "--flbas=0", "--csi=1")
	m := regexp.MustCompile(`nsid:\s*(\d+)`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("nvme create-ns --csi=1 while the sidecar runs: exit %d: %s%s", code, out, errs)
	}
	foreign, _ := strconv.ParseUint(m[1], 10, 32)
	cntlid := strings.TrimSpace(readFile(t, "/sys/class/nvme/"+d.Ctrl+"/cntlid"))
	if code, out, errs := kvtcp.Run(t, kvtcp.NVMeCLI(t), "attach-ns", ctrl, "-n", m[1], "-c", cntlid); code != 0 {
		t.Fatalf("nvme attach-ns %s -c %s: exit %d: %s%s", m[1], cntlid, code, out, errs)
	}
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	foreignDev, err := kernel.WaitDevice(wctx, uint32(foreign))
	wcancel()
	if err != nil {
		t.Fatalf("nvme-cli's namespace %d: %v\nkernel: %s", foreign, err, kvtcp.KernelLog("nvme"))
	}
	t.Logf("nvme-cli made namespace %d (%s) while the sidecar ran", foreign, foreignDev)
	checkTenantKeys(ctx, t, rc)
	rc.Close()
	p.stop() // durability drain: every key is written to its namespace

	// Whose keys each namespace holds, as the device counts them.
	ids := tenantIDs(t, cfg)
	recs, err := nsadmin.Records(reg)
	if err != nil {
		t.Fatal(err)
	}
	devs := map[string]string{"x:": def}
	for _, r := range recs {
		dev, err := kernel.Device(r.NSID)
		if err != nil {
			t.Fatalf("the device of %s (namespace %d): %v", r.Name, r.NSID, err)
		}
		devs[strings.TrimPrefix(r.Name, "tenant:")+":"] = dev
		if ids[strings.TrimPrefix(r.Name, "tenant:")] != strings.TrimPrefix(r.ID, "nguid:") && ids[strings.TrimPrefix(r.Name, "tenant:")] != r.ID {
			t.Fatalf("tenant list %v and the registry %+v disagree", ids, r)
		}
	}
	smallest := uint64(1 << 62)
	for _, k := range tenantKeys {
		smallest = min(smallest, uint64(k.keys*tenantValue))
	}
	for _, k := range tenantKeys {
		dev, ok := devs[k.prefix]
		if !ok {
			t.Fatalf("no namespace for %q: registry %+v", k.prefix, recs)
		}
		own, got := uint64(k.keys*tenantValue), utilization(t, dev)
		t.Logf("%q keys: %d value bytes, namespace %s holds %d bytes", k.prefix, own, dev, got)
		if got < own || got >= own+smallest {
			t.Fatalf("namespace %s of %q holds %d bytes, want its own %d and less than another share (%d) more", dev, k.prefix, got, own, smallest)
		}
	}
	if got := utilization(t, foreignDev); got != 0 {
		t.Fatalf("nvme-cli's namespace %s holds %d bytes, want 0", foreignDev, got)
	}

	// The restart finds the same namespaces, every key from cold, and
	// takes nothing of nvme-cli's.
	p = start(t, cfg, socket)
	rc = p.client()
	allFromCold(t, rc, int64(tenantKeyCount()), func() { checkTenantKeys(ctx, t, rc) })
	rc.Close()
	p.stop()
	if again := tenantIDs(t, cfg); len(again) != 2 || again["a"] != ids["a"] || again["b"] != ids["b"] {
		t.Fatalf("after the restart the tenants' namespaces are %v, before %v", again, ids)
	}

	// b removed from the config: `tiercache tenant drop b` deletes its
	// namespace, device and all, and nothing else.
	if err := os.WriteFile(cfg, []byte(c+tenantsYAML(false)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := tenantRun(t, cfg, "drop", "b"); code != 0 {
		t.Fatalf("tiercache tenant drop b: exit %d: %s%s", code, out, errs)
	}
	if _, err := os.Stat(devs["b:"]); err == nil {
		t.Fatalf("%s (b's namespace) still exists after the drop", devs["b:"])
	}
	left, err := kernel.Namespaces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var nsids []uint32
	for _, n := range left {
		nsids = append(nsids, n.NSID)
	}
	if len(left) != 3 || !slices.Contains(nsids, uint32(foreign)) {
		t.Fatalf("after the drop the controller has namespaces %v, want the default, a's and nvme-cli's %d", nsids, foreign)
	}
	if again := tenantIDs(t, cfg); len(again) != 1 || again["a"] != ids["a"] {
		t.Fatalf("after the drop: %v", again)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

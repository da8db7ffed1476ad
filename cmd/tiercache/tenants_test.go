package main

import (
	"context"
	"crypto/sha256"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/tier"
)

// TestTenantsConfig (C11): tenants reach tier.Options from YAML and from
// TIERCACHE_TENANTS (a YAML flow sequence); overlapping prefixes, an empty
// name and quotas above hot.bytes + warm.bytes are refused in one error
// naming each field.
func TestTenantsConfig(t *testing.T) {
	c := defaultConfig()
	if err := c.loadYAML([]byte("tenants:\n  - name: rag\n    prefix: \"rag:\"\n    quota: 64MiB\n  - {name: emb, prefix: \"emb:\", quota: 256MiB}\n"), "test"); err != nil {
		t.Fatal(err)
	}
	b, err := c.build(zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	want := []tier.Tenant{{Name: "rag", Prefix: "rag:", Quota: 64 << 20}, {Name: "emb", Prefix: "emb:", Quota: 256 << 20}}
	if !slices.Equal(b.tier.Tenants, want) {
		t.Fatalf("tier tenants %+v, want %+v", b.tier.Tenants, want)
	}
	ec, err := loadConfig("serve", nil, []string{`TIERCACHE_TENANTS=[{name: a, prefix: "a:", quota: 1MiB}]`}, os.Stderr)
	if err != nil || len(ec.Tenants) != 1 || ec.Tenants[0] != (TenantConfig{Name: "a", Prefix: "a:", Quota: 1 << 20}) {
		t.Fatalf("from the environment: %+v, %v", ec, err)
	}
	bad := defaultConfig()
	bad.Tenants = []TenantConfig{{Name: "", Prefix: "x:", Quota: 1 << 20}, {Name: "a", Prefix: "a", Quota: 1 << 30},
		{Name: "b", Prefix: "ab", Quota: 1 << 20}}
	_, err = bad.build(zap.NewNop())
	if err == nil {
		t.Fatal("bad tenants accepted")
	}
	for _, s := range []string{"Tenants[0].Name is empty", `Tenants[2].Prefix "ab" overlaps Tenants[1].Prefix "a"`, "oversubscription is refused"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error lacks %q:\n%v", s, err)
		}
	}
}

// TestTenantsOnTheSidecar (C11): on the real sidecar with two tenants,
// INFO tenants has one line per tenant with its keys, DRAM bytes, hits,
// misses and evictions as go-redis reads them, and /metrics the same
// numbers labelled tenant="<name>".
func TestTenantsOnTheSidecar(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Tenants = []TenantConfig{{Name: "rag", Prefix: "rag:", Quota: 8 << 20}, {Name: "emb", Prefix: "emb:", Quota: 8 << 20}}
	sc := startTestSidecar(t, cfg)
	ctx := context.Background()
	rc := newClient(t, sc, 3)
	for _, k := range []string{"rag:1", "rag:2", "emb:1", "other"} {
		if err := rc.Set(ctx, k, "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	rc.Get(ctx, "rag:1")
	rc.Get(ctx, "rag:nope")
	rc.MGet(ctx, "emb:1", "emb:nope", "other")
	sections, err := rc.InfoMap(ctx, "tenants").Result()
	if err != nil {
		t.Fatal(err)
	}
	got := sections["Tenants"]
	for name, want := range map[string]string{
		"tenant_default": "keys=1,dram_items=1,dram_bytes=6,hits=1,dram_hits=1,misses=0,evictions=0",
		"tenant_rag":     "keys=2,dram_items=2,dram_bytes=12,hits=1,dram_hits=1,misses=1,evictions=0",
		"tenant_emb":     "keys=1,dram_items=1,dram_bytes=6,hits=1,dram_hits=1,misses=1,evictions=0",
	} {
		if !strings.Contains(got[name], want) {
			t.Errorf("INFO tenants %s:%s, want %s", name, got[name], want)
		}
	}
	if len(got) != 3 {
		t.Errorf("INFO tenants has %d lines: %v", len(got), got)
	}
	fams, err := sc.met.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	samples := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "tenant" {
					samples[f.GetName()+"/"+l.GetValue()] = m.GetCounter().GetValue() + m.GetGauge().GetValue()
				}
			}
		}
	}
	for k, want := range map[string]float64{
		"tiercache_tenant_keys/rag": 2, "tiercache_tenant_hits_total/rag": 1, "tiercache_tenant_misses_total/rag": 1,
		"tiercache_tenant_dram_bytes/rag": 12, "tiercache_tenant_evictions_total/rag": 0, "tiercache_tenant_quota_bytes/rag": 8 << 20,
		"tiercache_tenant_misses_total/emb": 1, "tiercache_tenant_hits_total/default": 1, "tiercache_tenant_quota_bytes/default": 64<<20 - 16<<20,
	} {
		if got, ok := samples[k]; !ok || got != want {
			t.Errorf("/metrics %s = %v (present %v), want %v", k, got, ok, want)
		}
	}
}

// TestTenantNamespacesOnTheSidecar (C23): tenants with cold_bytes get cold
// namespaces of their own on the real sidecar, INFO tenants shows each
// tenant's cold figures, and reconfiguration loses nothing across
// restarts: a removed tenant's namespace is kept with its keys (still
// read and written there) until `tiercache tenant drop`, which is refused
// while the sidecar runs; a config that no longer matches the device (a
// quota changed, more than the free capacity) is refused at start naming
// the problem, with the store untouched.
func TestTenantNamespacesOnTheSidecar(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	t.Setenv("TIERCACHE_COLD_DATA_DIR", dir)
	t.Setenv("TIERCACHE_COLD_CAPACITY", "256MiB")
	both := []TenantConfig{{Name: "a", Prefix: "a:", Quota: 8 << 20, ColdBytes: 32 << 20, FlushWeight: 2}, {Name: "b", Prefix: "b:", Quota: 8 << 20, ColdBytes: 32 << 20}}
	start := func(ts []TenantConfig) (*sidecar, error) {
		cfg := testConfig(t, dir)
		cfg.Cold.Capacity, cfg.Durability, cfg.Tenants = 256<<20, "drain", ts
		return startSidecar(cfg, zap.NewNop())
	}
	sc, err := start(both)
	if err != nil {
		t.Fatal(err)
	}
	rc := newClient(t, sc, 3)
	for _, k := range []string{"a:1", "b:1", "x:1"} {
		if err := rc.Set(ctx, k, "v-"+k, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	info, err := rc.InfoMap(ctx, "tenants").Result()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"tenant_a":       "cold_namespace=own,cold_keys=0,",
		"tenant_default": "cold_namespace=default,",
	} {
		if !strings.Contains(info["Tenants"][name], want) {
			t.Errorf("INFO tenants %s:%s, want %s", name, info["Tenants"][name], want)
		}
	}
	rc.Close()
	if err := sc.Close(); err != nil {
		t.Fatal(err)
	}
	// b removed: its namespace is kept, its keys still served from it.
	sc, err = start(both[:1])
	if err != nil {
		t.Fatal(err)
	}
	rc = newClient(t, sc, 3)
	for _, k := range []string{"a:1", "b:1", "x:1"} {
		if v, err := rc.Get(ctx, k).Result(); err != nil || v != "v-"+k {
			t.Fatalf("%s with b removed: %q %v", k, v, err)
		}
	}
	info, _ = rc.InfoMap(ctx, "tenants").Result()
	if !strings.Contains(info["Tenants"]["tenant_b"], "cold_namespace=kept,cold_keys=1,") {
		t.Errorf("INFO tenants with b removed: %v", info["Tenants"])
	}
	var out, errb strings.Builder
	t.Setenv("TIERCACHE_TENANTS", `[{name: a, prefix: "a:", quota: 8MiB, cold_bytes: 32MiB}]`)
	if code := run([]string{"tenant", "drop", "b"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "locked (a running sidecar holds it)") {
		t.Fatalf("tenant drop while the sidecar runs: exit %d: %s", code, errb.String())
	}
	rc.Close()
	sc.Close()
	errb.Reset()
	if code := run([]string{"tenant", "list"}, &out, &errb); code != 0 || !regexp.MustCompile(`(?m)^b +33554432 +true`).MatchString(out.String()) {
		t.Fatalf("tenant list: exit %d: %s%s", code, out.String(), errb.String())
	}
	for verb, want := range map[string]string{"a": "tenant a is still configured", "zz": `has no namespace "zz"`, "default": "it is not dropped"} {
		errb.Reset()
		if code := run([]string{"tenant", "drop", verb}, &out, &errb); code != 1 || !strings.Contains(errb.String(), want) {
			t.Fatalf("tenant drop %s: exit %d: %s, want %q", verb, code, errb.String(), want)
		}
	}
	if code := run([]string{"tenant", "drop", "b"}, &out, &errb); code != 0 {
		t.Fatalf("tenant drop b: exit %d: %s", code, errb.String())
	}
	// Refusals at start: the store is left as it is.
	sum := fileSum(t, dir+"/cold.kv")
	for _, tc := range []struct {
		ts   []TenantConfig
		want string
	}{
		{[]TenantConfig{{Name: "a", Prefix: "a:", Quota: 8 << 20, ColdBytes: 64 << 20}}, "holds 33554432 bytes, cold_bytes asks 67108864"},
		{[]TenantConfig{{Name: "a", Prefix: "a:", Quota: 8 << 20, ColdBytes: 32 << 20}, {Name: "c", Prefix: "c:", Quota: 8 << 20, ColdBytes: 1 << 30}},
			`namespace "c" needs 1073741824 bytes, the largest free run`},
		{[]TenantConfig{{Name: "a", Prefix: "a:", Quota: 8 << 20, ColdBytes: 32 << 20}, {Name: "c", Prefix: "c:", Quota: 8 << 20, ColdNamespace: "a"}},
			`tenants "a" and "c" both take namespace "a"`},
		{[]TenantConfig{{Name: "a", Prefix: "a:", Quota: 8 << 20, ColdBytes: 32 << 20, FlushWeight: -1}}, "Tenants[0].FlushWeight -1 is outside"},
	} {
		if sc, err := start(tc.ts); err == nil {
			sc.Close()
			t.Fatalf("%+v started", tc.ts)
		} else if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v\nlacks %q", tc.ts, err, tc.want)
		}
		if fileSum(t, dir+"/cold.kv") != sum {
			t.Errorf("%+v: the refused start changed the store", tc.ts)
		}
	}
	sc, err = start(both[:1])
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	rc = newClient(t, sc, 3)
	if v, err := rc.Get(ctx, "a:1").Result(); err != nil || v != "v-a:1" {
		t.Fatalf("a:1 after the refusals: %q %v", v, err)
	}
	if n, err := rc.Exists(ctx, "b:1").Result(); err != nil || n != 0 {
		t.Fatalf("b:1 after b's namespace was dropped: %d %v", n, err)
	}
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestTenantDropRefusesATakenNamespace (C23): `tiercache tenant drop NAME`
// is refused while a configured tenant takes namespace NAME by its
// cold_namespace, as it is for a tenant named NAME: the tenant's keys
// stay, and its next start finds its namespace.
func TestTenantDropRefusesATakenNamespace(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	t.Setenv("TIERCACHE_COLD_DATA_DIR", dir)
	t.Setenv("TIERCACHE_COLD_CAPACITY", "256MiB")
	start := func(ts []TenantConfig) *sidecar {
		cfg := testConfig(t, dir)
		cfg.Cold.Capacity, cfg.Durability, cfg.Tenants = 256<<20, "drain", ts
		sc, err := startSidecar(cfg, zap.NewNop())
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	sc := start([]TenantConfig{{Name: "a", Prefix: "a:", Quota: 8 << 20, ColdBytes: 32 << 20}})
	rc := newClient(t, sc, 3)
	if err := rc.Set(ctx, "a:1", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	rc.Close()
	if err := sc.Close(); err != nil {
		t.Fatal(err)
	}
	rag := []TenantConfig{{Name: "rag", Prefix: "a:", Quota: 8 << 20, ColdNamespace: "a"}}
	t.Setenv("TIERCACHE_TENANTS", `[{name: rag, prefix: "a:", quota: 8MiB, cold_namespace: a}]`)
	var out, errb strings.Builder
	if code := run([]string{"tenant", "drop", "a"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "namespace a is tenant rag's (cold_namespace)") {
		t.Fatalf("tenant drop of a namespace a configured tenant takes: exit %d: %s%s", code, out.String(), errb.String())
	}
	sc = start(rag)
	defer sc.Close()
	rc = newClient(t, sc, 3)
	if v, err := rc.Get(ctx, "a:1").Result(); err != nil || v != "v" {
		t.Fatalf("a:1 in rag's namespace: %q %v", v, err)
	}
}

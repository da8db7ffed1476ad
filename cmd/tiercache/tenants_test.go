package main

import (
	"context"
	"os"
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

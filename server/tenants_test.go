package server

import (
	"strings"
	"testing"

	"github.com/tiercache/tiercache/tier"
)

// TestInfoTenants (S28): INFO tenants has one line per tenant, the default
// tenant first, each tenant_<name>: then every per-tenant row of the
// stats table as <Info>=<value> in table order; without tenants the
// section is its header alone, and INFO everything holds it after tiers.
func TestInfoTenants(t *testing.T) {
	_, path := startServerWith(t, newRagTenantCache(t), nil)
	rc := dialRaw(t, path)
	rc.cmd("SET", "rag:1", "v")
	rc.reply()
	rc.cmd("GET", "rag:1")
	rc.reply()
	rc.cmd("GET", "x")
	rc.reply()
	rc.cmd("INFO", "tenants")
	lines := strings.Split(strings.TrimSuffix(strings.TrimPrefix(rc.reply(), "$"), "\r\n"), "\r\n") // a bulk string
	var fields []string
	for _, r := range statsTable {
		if r.Label == TenantLabel {
			fields = append(fields, r.Info)
		}
	}
	if len(lines) != 3 || lines[0] != "# Tenants" {
		t.Fatalf("INFO tenants: %q", lines)
	}
	for i, name := range []string{"default", "rag"} {
		head, rest, _ := strings.Cut(lines[1+i], ":")
		if head != "tenant_"+name {
			t.Fatalf("line %d: %q", i, lines[1+i])
		}
		var keys []string
		for _, kv := range strings.Split(rest, ",") {
			k, _, _ := strings.Cut(kv, "=")
			keys = append(keys, k)
		}
		if strings.Join(keys, ",") != strings.Join(fields, ",") {
			t.Fatalf("tenant_%s has %q, the table's rows are %q", name, keys, fields)
		}
	}
	if !strings.Contains(lines[2], ",keys=1,") || !strings.Contains(lines[2], ",hits=1,") || !strings.Contains(lines[1], ",misses=1,") {
		t.Fatalf("INFO tenants: %q", lines)
	}
	_, plain := startServerWith(t, newTierCache(t), nil)
	pc := dialRaw(t, plain)
	pc.cmd("INFO", "everything")
	all := pc.reply()
	if i, j := strings.Index(all, "# Tiers\r\n"), strings.Index(all, "# Tenants\r\n"); i < 0 || j < i || !strings.HasSuffix(all, "# Tenants\r\n") {
		t.Fatalf("INFO everything without tenants: tiers at %d, tenants at %d, ends %q", i, j, all[max(len(all)-40, 0):])
	}
}

// newRagTenantCache is a cache with one tenant, "rag", of the keys
// prefixed "rag:", beside the default tenant.
func newRagTenantCache(t *testing.T) *tier.Cache {
	t.Helper()
	c, err := tier.Open(tier.Options{HotBytes: 8 << 20, HotMaxValue: 1 << 20,
		Tenants: []tier.Tenant{{Name: "rag", Prefix: "rag:", Quota: 1 << 20}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

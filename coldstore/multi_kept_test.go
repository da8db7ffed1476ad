package coldstore

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/tiercache/tiercache/backend"
)

// TestKeptNamespaceOfAConfiguredTenantRefused (CS6, CS8): a namespace kept
// from tenant a (a configured tenant no longer asks for one) is refused
// at Open while a tenant named a is configured, whatever its prefix now:
// the kept namespace's row and the tenant's would share a name, so the
// tier's per-tenant figures would take one's cold figures for the other's,
// and the error says the tenant is still configured, how to go on, and
// nothing is dropped.
func TestKeptNamespaceOfAConfiguredTenantRefused(t *testing.T) {
	dir := t.TempDir()
	m := openMultiT(t, multiConfig(dir, TenantSpace{Name: "a", Bytes: 4 << 20}), backend.Tenant{Name: "a", Prefix: "a:"})
	putNamed(t, m, "a:1")
	m.Close()
	for _, prefix := range []string{"a:", "x:"} {
		s, err := Open(multiConfig(dir), backend.Params{MaxValue: 1 << 20, Batch: 16, WarmNode: -1, Tenants: []backend.Tenant{{Name: "a", Prefix: prefix}}})
		if err == nil {
			st := s.Stats()
			s.Close()
			t.Fatalf("prefix %q: opened with tenant a configured and a's namespace kept: %+v", prefix, st.Tenants)
		}
		if !errors.Is(err, ErrTenantMismatch) || !strings.Contains(err.Error(), `tenant "a" is configured without a cold namespace of its own`) {
			t.Fatalf("prefix %q: %v", prefix, err)
		}
	}
	m = openMultiT(t, multiConfig(dir, TenantSpace{Name: "a", Bytes: 4 << 20}), backend.Tenant{Name: "a", Prefix: "a:"})
	if !holds(t, m.spaceOf("a"), "a:1") {
		t.Fatal("a's namespace lost its key")
	}
	m.Close()
	// The namespace's name, not its tenant's, is what tenant drop takes:
	// tenant r took namespace a by its cold_namespace.
	m = openMultiT(t, multiConfig(dir, TenantSpace{Name: "r", Namespace: "a"}), backend.Tenant{Name: "r", Prefix: "a:"})
	m.Close()
	for _, ts := range [][]backend.Tenant{{{Name: "r", Prefix: "a:"}}, {{Name: "q", Prefix: "a:x"}}} {
		_, err := Open(multiConfig(dir), backend.Params{MaxValue: 1 << 20, Batch: 16, WarmNode: -1, Tenants: ts})
		if !errors.Is(err, ErrTenantMismatch) || !strings.Contains(err.Error(), "tiercache tenant drop a,") {
			t.Fatalf("namespace a kept from tenant r, tenants %+v: %v", ts, err)
		}
	}
}

// TestDefaultBytesRefusedByValidate (CS6): a fresh volume's default
// namespace asked (DefaultBytes) below the smallest namespace, or too
// large to fit beside the tenants' in Capacity, is refused by Validate
// and by Open with no file made, as when the tenants leave it too little
// (TestTinyCapacityRefusedByValidate): a refused start left an empty
// volume of the refused Capacity behind.
func TestDefaultBytesRefusedByValidate(t *testing.T) {
	dir := t.TempDir()
	over := multiConfig(dir, TenantSpace{Name: "a", Bytes: 16 << 20})
	over.DefaultBytes = 20 << 20
	small := multiConfig(dir, TenantSpace{Name: "a", Bytes: 4 << 20})
	small.DefaultBytes = 1 << 20
	for c, want := range map[*Config]string{&over: "the default namespace's 20971520 bytes (DefaultBytes) and the tenants' 16777216 do not fit",
		&small: "DefaultBytes 1048576 is below the smallest namespace"} {
		if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want %q", err, want)
		}
		if s, err := Open(*c, backend.Params{MaxValue: 1 << 20, Batch: 16, WarmNode: -1, Tenants: multiTenants}); err == nil {
			s.Close()
			t.Fatal("opened")
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Fatalf("a refused configuration made %v", ents)
		}
	}
	fits := multiConfig(dir, TenantSpace{Name: "a", Bytes: 4 << 20})
	fits.DefaultBytes = 8 << 20
	if err := fits.Validate(); err != nil {
		t.Errorf("room for both: %v", err)
	}
}

package coldstore

import (
	"errors"
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
	defer m.Close()
	if !holds(t, m.spaceOf("a"), "a:1") {
		t.Fatal("a's namespace lost its key")
	}
}

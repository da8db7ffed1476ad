package coldstore

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/backend"
)

// check refuses a tenant namespace whose record names another prefix: its
// keys are another prefix's, and a namespace keeps its prefix (CS6).
func (s *space) check(w want) error {
	if s.rec.Name != "" && s.rec.Prefix != w.prefix {
		return fmt.Errorf("%w: namespace %s holds the keys of prefix %q (tenant %q), tenant %q's prefix is %q: a namespace keeps its prefix; "+
			"give the tenant its old prefix, or drop the namespace (tiercache tenant drop %s, which deletes its keys)",
			ErrTenantMismatch, s.where, s.rec.Prefix, s.rec.Name, w.Name, w.prefix, s.name)
	}
	return nil
}

// claimAll writes each tenant namespace's record (its tenant's name and
// prefix) where it is missing or names another tenant, and moves into
// each namespace whose record does not say so yet the keys of its prefix
// the default namespace holds (CS7).
func (m *Multi) claimAll(ctx context.Context, ws []want, p backend.Params) error {
	for _, w := range ws {
		s := m.spaces[m.rows[w.row].sp]
		if s.rec.Name == w.Name && s.rec.Prefix == w.prefix {
			continue
		}
		s.rec = tenantRec{Name: w.Name, Prefix: w.prefix, Moved: s.rec.Moved}
		if err := storeTenantRec(ctx, s.st.kv.Namespace(), s.rec); err != nil {
			return fmt.Errorf("coldstore: namespace %s: %w", s.where, err)
		}
	}
	def := m.spaces[0]
	for _, s := range m.spaces[1:] {
		if s.rec.Moved {
			continue
		}
		n, err := moveKeys(ctx, def.st, s.st, s.rec.Prefix)
		if err != nil {
			return fmt.Errorf("coldstore: move the keys of prefix %q from the default namespace into %s: %w (moved %d; the next start goes on)", s.rec.Prefix, s.where, err, n)
		}
		s.rec.Moved = true
		if err := storeTenantRec(ctx, s.st.kv.Namespace(), s.rec); err != nil {
			return fmt.Errorf("coldstore: namespace %s: %w", s.where, err)
		}
		if n > 0 {
			p.Logger.Info("moved a tenant's keys from the default cold namespace into its own", zap.String("tenant", s.rec.Name),
				zap.Int("keys", n), zap.String("namespace", s.where))
		}
	}
	return nil
}

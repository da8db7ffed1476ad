package coldstore

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/nvmekv/emu/volume"
	"github.com/tiercache/tiercache/nvmekv/nsadmin"
)

// defaultSpace names the default namespace in a volume.
const defaultSpace = "default"

// registryPrefix starts the registry name of a tenant's KV namespace
// (nsadmin.Record.Name), beside names `tiercache ns` users give theirs.
const registryPrefix = "tenant:"

// validateTenants reports what is wrong with Config.Tenants on its own.
func (c *Config) validateTenants() []error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, a...)...))
	}
	seen := map[string]int{}
	for i, t := range c.Tenants {
		switch {
		case t.Name == "" || t.Name == defaultSpace:
			bad("Tenants[%d].Name %q: a tenant's name, not empty nor %q", i, t.Name, defaultSpace)
		case len(t.Name) > 255:
			bad("Tenants[%d].Name is %d bytes, at most 255", i, len(t.Name))
		default:
			if j, dup := seen[t.Name]; dup {
				bad("Tenants[%d].Name %q is Tenants[%d]'s too", i, t.Name, j)
			}
			seen[t.Name] = i
		}
		if t.Bytes < 0 {
			bad("Tenants[%d] (%s): Bytes %d is negative", i, t.Name, t.Bytes)
		}
		if t.Bytes > 0 && t.Namespace == "" && c.Mode != "passthrough" && roundMiB(t.Bytes) < c.minSpace() {
			bad("%s", c.tooSmall(t.Name, t.Bytes)) // no namespace that small exists or is made (CS6): refused before Open makes anything
		}
		if t.Namespace != "" && c.Mode == "passthrough" {
			if n, err := strconv.ParseUint(t.Namespace, 10, 32); err != nil || n == 0 {
				bad("Tenants[%d] (%s): Namespace %q is not a KV namespace's NSID", i, t.Name, t.Namespace)
			}
		}
	}
	if c.DefaultBytes < 0 {
		bad("DefaultBytes %d is negative", c.DefaultBytes)
	}
	return errs
}

// wanted are the tenants that ask for a namespace of their own.
func (c *Config) wanted() []TenantSpace {
	var ws []TenantSpace
	for _, t := range c.Tenants {
		if t.Bytes > 0 || t.Namespace != "" {
			ws = append(ws, t)
		}
	}
	return ws
}

// tenantSpaces reports whether the store is a Multi: tenants ask for
// namespaces, or the device holds tenant namespaces already (which stay
// routed, CS8). A single emulated namespace asked to give tenants
// namespaces is refused: its keys would have to move into a volume.
func (c *Config) tenantSpaces(p backend.Params) (bool, error) {
	ws := c.wanted()
	switch c.Mode {
	case "emulated", "nvme":
		path, nvme := c.Path, c.Mode == "nvme"
		if nvme {
			path = c.Device
		}
		kind, err := volume.Probe(path, nvme)
		if err != nil {
			if len(ws) == 0 {
				return false, nil // openOne says what is wrong with it
			}
			return false, fmt.Errorf("coldstore: %s: %w", path, err)
		}
		switch {
		case kind == volume.IsVolume:
			return true, nil
		case kind == volume.Empty:
			return len(ws) > 0, nil
		case len(ws) == 0:
			return false, nil
		case kind == volume.Namespace:
			return false, fmt.Errorf("%w: %s is one emulated namespace that every tenant shares (it was made without tenant namespaces), and %s ask for namespaces of their own; "+
				"it cannot be divided in place: to start with tenant namespaces move it (and its .ckpt) away or point cold at another file, or remove their cold_bytes (nothing was changed)",
				ErrTenantMismatch, path, tenantNames(ws))
		}
		return false, fmt.Errorf("%w: %s holds data that is neither a volume nor an emulated namespace; refusing to format it for %s (nothing was changed)",
			ErrTenantMismatch, path, tenantNames(ws))
	case "passthrough":
		if len(ws) > 0 || c.DropRemoved {
			return true, nil
		}
		recs, err := nsadmin.Records(c.registry())
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return false, fmt.Errorf("coldstore: %w", err)
		}
		return slices.ContainsFunc(recs, func(r nsadmin.Record) bool { return strings.HasPrefix(r.Name, registryPrefix) }), nil
	}
	return false, nil
}

func tenantNames(ws []TenantSpace) string {
	var ns []string
	for _, w := range ws {
		ns = append(ns, w.Name)
	}
	return "tenants " + strings.Join(ns, ", ")
}

// registry is the KV SSD's namespace registry file.
func (c *Config) registry() string {
	if c.Registry != "" {
		return c.Registry
	}
	dir := c.DataDir
	if dir == "" {
		dir = "."
	}
	return dir + "/namespaces.json"
}

// want is a tenant's namespace as openMulti plans it.
type want struct {
	TenantSpace
	row    int    // its row in Multi.rows
	prefix string // its prefix (backend.Tenant.Prefix)
}

// newMulti makes the rows of p's tenants, every key routed to the default
// namespace for now, and matches c.Tenants to them.
func newMulti(c Config, p backend.Params) (*Multi, []want, error) {
	m := &Multi{rows: []*row{{name: defaultSpace, kind: "shared"}}}
	for _, t := range p.Tenants {
		m.rows = append(m.rows, &row{name: t.Name, prefix: t.Prefix, kind: "shared"})
	}
	var ws []want
	var errs []error
	for _, t := range c.wanted() {
		i := slices.IndexFunc(m.rows, func(r *row) bool { return r.name == t.Name })
		if i <= 0 {
			errs = append(errs, fmt.Errorf("%w: cold namespace for %q, which is not a tenant", ErrInvalidConfig, t.Name))
			continue
		}
		if len(m.rows[i].prefix) > maxPrefix {
			errs = append(errs, fmt.Errorf("%w: tenant %q: a prefix of %d bytes, at most %d with a namespace of its own", ErrInvalidConfig, t.Name, len(m.rows[i].prefix), maxPrefix))
		}
		ws = append(ws, want{TenantSpace: t, row: i, prefix: m.rows[i].prefix})
	}
	return m, ws, errors.Join(errs...)
}

// openMulti opens the default namespace and every tenant namespace, after
// checking that the configuration matches the device (CS6).
func openMulti(c Config, p backend.Params) (backend.Store, error) {
	m, ws, err := newMulti(c, p)
	if err != nil {
		return nil, err
	}
	if c.Mode == "passthrough" {
		err = m.openKVSpaces(c, p, ws)
	} else {
		err = m.openVolume(c, p, ws)
	}
	if err != nil {
		return nil, errors.Join(err, m.Close())
	}
	m.dirty = make([]atomic.Bool, len(m.spaces))
	m.index()
	m.keyspace = true
	for _, s := range m.spaces {
		if _, ok := s.st.UserKeys(); !ok {
			m.keyspace = false
		}
	}
	for _, s := range m.spaces[1:] {
		r := m.rows[s.row]
		p.Logger.Info("cold namespace", zap.String("tenant", r.name), zap.String("kind", r.kind), zap.String("namespace", s.where),
			zap.String("prefix", r.prefix))
		if r.kind == "kept" {
			p.Logger.Warn("a tenant no longer configured keeps its cold namespace: keys of its prefix are still read and written there until `tiercache tenant drop "+r.name+"` deletes it",
				zap.String("tenant", r.name), zap.String("prefix", r.prefix))
		}
	}
	return m, nil
}

// addSpace adds an open namespace to m, its row's keys routed to it.
func (m *Multi) addSpace(s *space) {
	m.spaces = append(m.spaces, s)
	if s.row > 0 {
		m.rows[s.row].sp, m.rows[s.row].kind = len(m.spaces)-1, "own"
	}
}

// checkKept refuses a kept namespace of a tenant configured (without a
// namespace of its own: its row and the kept one would share a name), or
// whose prefix overlaps a tenant's.
func (m *Multi) checkKept(name string, rec tenantRec) error {
	for _, r := range m.rows[1:] {
		if r.name == rec.Name {
			return fmt.Errorf("%w: namespace %q holds the keys of prefix %q of tenant %q, and tenant %q is configured without a cold namespace of its own (prefix %q): "+
				"give it its cold_bytes (the namespace's size) or cold_namespace back to keep its keys, or remove the tenant from the configuration, drop the namespace (tiercache tenant drop %s, which deletes its keys) and add the tenant again",
				ErrTenantMismatch, name, rec.Prefix, rec.Name, r.name, r.prefix, strings.TrimPrefix(name, registryPrefix))
		}
		if r.prefix != "" && (strings.HasPrefix(r.prefix, rec.Prefix) || strings.HasPrefix(rec.Prefix, r.prefix)) {
			return fmt.Errorf("%w: namespace %q is kept from tenant %q, no longer configured, with the keys of prefix %q, which overlaps tenant %q's prefix %q: "+
				"drop it first (tiercache tenant drop %s, which deletes its keys) or give the tenant another prefix",
				ErrTenantMismatch, name, rec.Name, rec.Prefix, r.name, r.prefix, strings.TrimPrefix(name, registryPrefix))
		}
	}
	return nil
}

// addKept adds a namespace of a tenant no longer configured, with a row
// of its own, routed by its record's prefix (CS8).
func (m *Multi) addKept(s *space) {
	m.rows = append(m.rows, &row{name: s.rec.Name, prefix: s.rec.Prefix, kind: "kept"})
	s.row = len(m.rows) - 1
	m.spaces = append(m.spaces, s)
	m.rows[s.row].sp = len(m.spaces) - 1
}

// single is a Multi of one namespace, st, that every tenant shares: it
// counts each tenant's reads and writes (Stats.Tenants).
func single(st *Store, p backend.Params) *Multi {
	m, _, _ := newMulti(Config{}, p)
	m.spaces = []*space{{st: st, name: defaultSpace, where: st.name}}
	m.where = st.name
	m.dirty = make([]atomic.Bool, 1)
	m.index()
	_, m.keyspace = st.UserKeys()
	return m
}

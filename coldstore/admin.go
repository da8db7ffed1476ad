package coldstore

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/tiercache/tiercache/nvmekv/emu/volume"
	"github.com/tiercache/tiercache/nvmekv/nsadmin"
)

// TenantNamespace is a tenant namespace on the device, as `tiercache
// tenant list` prints it.
type TenantNamespace struct {
	Name  string // the tenant's (the volume's namespace name, or the registry name less "tenant:")
	ID    string // the volume's random id, or the KV namespace's NGUID/EUI-64
	Where string // the volume's byte range, or the KV namespace's NSID and /dev/ngXnY
	Bytes int64
	// Created: this host made it (a claimed KV namespace is only forgotten
	// by DropTenant).
	Created bool
}

// Namespaces lists the tenant namespaces of the store c describes (the
// default one first, for a volume), and the bytes still unallocated. It
// needs the store closed: a volume is locked while a sidecar runs.
func (c Config) Namespaces(ctx context.Context) ([]TenantNamespace, int64, error) {
	c.ensureDefaults()
	if c.Mode == "passthrough" {
		return c.kvNamespaces(ctx)
	}
	v, err := volume.Open(c.adminVolume())
	if err != nil {
		return nil, 0, fmt.Errorf("coldstore: %w", err)
	}
	defer v.Close()
	var out []TenantNamespace
	for _, e := range v.Namespaces() {
		out = append(out, TenantNamespace{Name: e.Name, ID: hex.EncodeToString(e.ID[:]), Bytes: e.Bytes, Created: true,
			Where: fmt.Sprintf("%s bytes [%d, %d)", v.Path(), e.Offset, e.Offset+e.Bytes)})
	}
	free, _ := v.Unallocated()
	return out, free, nil
}

func (c Config) kvNamespaces(ctx context.Context) ([]TenantNamespace, int64, error) {
	mgr, closeMgr, err := c.manager(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer closeMgr()
	all, err := mgr.List(ctx)
	if err != nil {
		return nil, 0, err
	}
	var out []TenantNamespace
	for _, o := range all {
		if !strings.HasPrefix(o.Record.Name, registryPrefix) {
			continue
		}
		out = append(out, TenantNamespace{Name: strings.TrimPrefix(o.Record.Name, registryPrefix), ID: o.Record.ID, Bytes: int64(o.Namespace.Size),
			Created: o.Record.Created, Where: fmt.Sprintf("NSID %d %s", o.Namespace.NSID, o.Device)})
	}
	return out, int64(mgr.C.Info().Unallocated), nil
}

// manager opens the KV SSD's controller and its registry.
func (c Config) manager(ctx context.Context) (*nsadmin.Manager, func(), error) {
	ctrl, err := c.controller()
	if err != nil {
		return nil, nil, err
	}
	cn, err := nsadmin.Open(ctx, ctrl)
	if err != nil {
		return nil, nil, fmt.Errorf("coldstore: the KV SSD's controller %s: %w", ctrl, err)
	}
	return &nsadmin.Manager{C: cn, RegistryPath: c.registry(), DeviceWait: c.DeviceWait}, func() { cn.Close() }, nil
}

// DropTenant deletes the namespace of tenant name, and every key in it
// (CS8): a volume's namespace, or a KV SSD namespace this host made (one
// it claimed is only forgotten). The store must be closed (ErrInUse, or
// volume.ErrBusy, while a sidecar runs on it). The default namespace is
// never dropped.
func (c Config) DropTenant(ctx context.Context, name string) error {
	c.ensureDefaults()
	if name == defaultSpace || name == "" {
		return fmt.Errorf("%w: %q: the default namespace is every tenant's without one of its own; it is not dropped", ErrNoTenantNamespace, name)
	}
	if c.Mode == "passthrough" {
		release, err := lockInUse(c.registry())
		if err != nil {
			return err
		}
		defer release()
		mgr, closeMgr, err := c.manager(ctx)
		if err != nil {
			return err
		}
		defer closeMgr()
		recs, err := nsadmin.Records(c.registry())
		if err != nil || !hasRecord(recs, registryPrefix+name) {
			return fmt.Errorf("%w: no namespace of tenant %q is recorded in %s (%v)", ErrNoTenantNamespace, name, c.registry(), err)
		}
		return dropKV(ctx, mgr, registryPrefix+name)
	}
	v, err := volume.Open(c.adminVolume())
	if err != nil {
		return fmt.Errorf("coldstore: %w", err)
	}
	defer v.Close()
	if _, ok := v.Find(name); !ok {
		return fmt.Errorf("%w: %s has no namespace %q", ErrNoTenantNamespace, v.Path(), name)
	}
	return dropVolumeSpace(c, v, name)
}

func hasRecord(recs []nsadmin.Record, name string) bool {
	for _, r := range recs {
		if r.Name == name {
			return true
		}
	}
	return false
}

// adminVolume opens the volume as it is, neither made nor grown.
func (c Config) adminVolume() volume.Options {
	o := c.volumeOptions(false)
	o.Capacity = 0
	return o
}

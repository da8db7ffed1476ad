package coldstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/nvmekv/nsadmin"
)

// ngRE is a generic char device's name, ngXnY: X the controller instance.
var ngRE = regexp.MustCompile(`^ng(\d+)n\d+$`)

// controller is the KV SSD's controller: Config.Controller, else the one
// of Device (/dev/ngXnY → /dev/nvmeX).
func (c Config) controller() (string, error) {
	if c.Controller != "" {
		return c.Controller, nil
	}
	m := ngRE.FindStringSubmatch(filepath.Base(c.Device))
	if m == nil {
		return "", fmt.Errorf("%w: tenant namespaces on a KV SSD need its controller (Controller, cold.controller: /dev/nvmeX); %s is not a /dev/ngXnY to find it from", ErrInvalidConfig, c.Device)
	}
	return filepath.Join(filepath.Dir(c.Device), "nvme"+m[1]), nil
}

// openKVSpaces opens a KV SSD's default namespace (Device) and the
// tenants' namespaces on its controller: each ensured, or claimed by NSID,
// through nsadmin, after nsadmin.Manager.Check found nothing wrong with
// any of them (CS6); recorded tenant namespaces no tenant takes are kept
// (or dropped, DropRemoved).
func (m *Multi) openKVSpaces(c Config, p backend.Params, ws []want) error {
	ctx := context.Background()
	ctrl, err := c.controller()
	if err != nil {
		return err
	}
	release, err := lockInUse(c.registry())
	if err != nil {
		return err
	}
	m.closers = append(m.closers, func() error { release(); return nil })
	cn, err := nsadmin.Open(ctx, ctrl)
	if err != nil {
		return fmt.Errorf("coldstore: the KV SSD's controller %s: %w", ctrl, err)
	}
	m.closers = append(m.closers, cn.Close)
	mgr := &nsadmin.Manager{C: cn, RegistryPath: c.registry(), DeviceWait: c.DeviceWait}
	m.mgr, m.where = mgr, "kvssd:"+ctrl
	def, err := c.openPassthrough(p, c.Device)
	if err != nil {
		return err
	}
	defNSID := def.NSID()
	dst, err := newStore(c, p, def, "passthrough:"+c.Device, nil)
	if err != nil {
		return err
	}
	m.spaces = []*space{{st: dst, name: defaultSpace, where: dst.name}}

	var nws []nsadmin.Want
	var errs []error
	wanted := map[string]bool{}
	for _, w := range ws {
		nw := nsadmin.Want{Name: registryPrefix + w.Name, Size: uint64(w.Bytes)}
		if w.Namespace != "" {
			id, _ := strconv.ParseUint(w.Namespace, 10, 32) // Validate checked it
			nw.NSID, nw.Size = uint32(id), 0
			if nw.NSID == defNSID {
				errs = append(errs, fmt.Errorf("%w: tenant %q takes namespace %d, the default namespace (%s) every tenant without one of its own shares", ErrTenantMismatch, w.Name, id, c.Device))
			}
		}
		wanted[nw.Name] = true
		nws = append(nws, nw)
	}
	recs, err := nsadmin.Records(c.registry())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var kept []string
	for _, r := range recs {
		if r.SubNQN == cn.Info().SubNQN && strings.HasPrefix(r.Name, registryPrefix) && !wanted[r.Name] {
			kept = append(kept, r.Name)
			if !c.DropRemoved {
				nws = append(nws, nsadmin.Want{Name: r.Name})
			}
		}
	}
	if err := mgr.Check(ctx, nws); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w (nothing was changed): %w", ErrTenantMismatch, errors.Join(errs...))
	}
	// Attach (or make) and open each; the records of existing ones are
	// checked before anything is moved.
	for i, w := range ws {
		s, err := m.ensureKV(ctx, c, p, nws[i], defNSID)
		if err != nil {
			return fmt.Errorf("coldstore: the cold namespace of tenant %q: %w", w.Name, err)
		}
		s.row = w.row
		m.addSpace(s)
		if err := s.check(w); err != nil {
			return err
		}
	}
	for _, name := range kept {
		if c.DropRemoved {
			if err := dropKV(ctx, mgr, name); err != nil {
				return err
			}
			p.Logger.Sugar().Infof("dropped the cold namespace %q of a tenant no longer configured (DropRemoved)", name)
			continue
		}
		s, err := m.ensureKV(ctx, c, p, nsadmin.Want{Name: name}, defNSID)
		if err != nil {
			return fmt.Errorf("coldstore: the kept cold namespace %q: %w", name, err)
		}
		if s.rec.Name == "" {
			return errors.Join(fmt.Errorf("%w: namespace %q (%s) has no tenant record: drop it (tiercache tenant drop %s)",
				ErrTenantMismatch, name, s.where, strings.TrimPrefix(name, registryPrefix)), s.st.Close())
		}
		if err := m.checkKept(name, s.rec); err != nil {
			return errors.Join(err, s.st.Close())
		}
		m.addKept(s)
	}
	return m.claimAll(ctx, ws, p)
}

// ensureKV attaches (making or claiming it first) the namespace w names,
// opens it and reads its tenant record.
func (m *Multi) ensureKV(ctx context.Context, c Config, p backend.Params, w nsadmin.Want, defNSID uint32) (*space, error) {
	var o nsadmin.Owned
	var err error
	if w.NSID != 0 {
		if o, err = m.mgr.Ensure(ctx, w.Name, 0); errors.Is(err, nsadmin.ErrNotFound) {
			o, err = m.mgr.Claim(ctx, w.Name, w.NSID)
		}
	} else {
		o, err = m.mgr.Ensure(ctx, w.Name, w.Size)
	}
	if err != nil {
		return nil, err
	}
	if o.Namespace.NSID == defNSID {
		return nil, fmt.Errorf("%w: %q is namespace %d, the default namespace (%s)", ErrTenantMismatch, w.Name, defNSID, c.Device)
	}
	pt, err := c.openPassthrough(p, o.Device)
	if err != nil {
		return nil, err
	}
	st, err := newStore(c, p, pt, "passthrough:"+o.Device, nil)
	if err != nil {
		return nil, err
	}
	s := &space{st: st, name: w.Name, where: st.name}
	if s.rec, _, err = loadTenantRec(ctx, pt); err != nil {
		return nil, errors.Join(fmt.Errorf("coldstore: namespace %s: %w", o.Device, err), st.Close())
	}
	return s, nil
}

// dropKV deletes the namespace recorded as name, or forgets it when this
// host only claimed it (nsadmin NA2).
func dropKV(ctx context.Context, mgr *nsadmin.Manager, name string) error {
	err := mgr.Drop(ctx, name)
	if errors.Is(err, nsadmin.ErrNotOwned) {
		err = mgr.Forget(ctx, name)
	}
	if err != nil {
		return fmt.Errorf("coldstore: drop namespace %q: %w", name, err)
	}
	return nil
}

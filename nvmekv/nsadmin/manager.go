package nsadmin

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Manager keeps named KV namespaces on one controller: it creates them,
// finds them again after a restart of the host or of the device by their
// identity (NGUID, else EUI-64), attaches them to this controller, and
// deletes only the ones its registry says it created. The registry is a
// file (RegistryPath) shared by every process that manages namespaces on
// this host, locked while one of them changes it.
type Manager struct {
	C            *Controller
	RegistryPath string
	// DeviceWait bounds the wait for a namespace's /dev/ngXnY after an
	// attachment; default 30 s.
	DeviceWait time.Duration
}

// Owned is a recorded namespace as the device has it now.
type Owned struct {
	Record    Record    // zero Name: not recorded here
	Namespace Namespace // zero NSID: not on the device any more
	Device    string    // its /dev/ngXnY when attached to a kernel controller
}

func (m *Manager) wait() time.Duration {
	if m.DeviceWait == 0 {
		return 30 * time.Second
	}
	return m.DeviceWait
}

// Ensure returns the namespace recorded as name, attached to this
// controller and with its device node: the one found by its identity when
// the registry has it (refused with ErrMismatch when it asked for another
// size or is no longer KV, ErrNotFound when it is gone from the device:
// it is never silently created again), else a new one of size bytes,
// recorded before it is attached. A size beyond the unallocated capacity
// is refused (ErrCapacity) with nothing created.
func (m *Manager) Ensure(ctx context.Context, name string, size uint64) (Owned, error) {
	if name == "" {
		return Owned{}, fmt.Errorf("nsadmin: a namespace needs a name")
	}
	r, err := lockRegistry(m.RegistryPath)
	if err != nil {
		return Owned{}, err
	}
	defer r.unlock()
	sub := m.C.info.SubNQN
	if rec := r.byName(sub, name); rec != nil {
		n, err := m.C.byID(ctx, rec.ID)
		switch {
		case err != nil:
			return Owned{Record: *rec}, fmt.Errorf("namespace %q (%s, last NSID %d): %w", name, rec.ID, rec.NSID, err)
		case !n.KV:
			return Owned{Record: *rec}, fmt.Errorf("%w: namespace %q (%s) is not a KV namespace", ErrMismatch, name, rec.ID)
		case size != 0 && size != rec.Size:
			return Owned{Record: *rec, Namespace: n}, fmt.Errorf("%w: namespace %q was created with %d bytes, %d asked (namespaces do not grow)", ErrMismatch, name, rec.Size, size)
		}
		if rec.NSID != n.NSID {
			rec.NSID = n.NSID
			if err := r.save(); err != nil {
				return Owned{}, err
			}
		}
		return m.attached(ctx, *rec, n)
	}
	nsid, err := m.C.Create(ctx, size)
	if err != nil {
		return Owned{}, err
	}
	n, err := m.C.Namespace(ctx, nsid)
	if err == nil && n.ID() == "" {
		err = fmt.Errorf("%w: namespace %d has no NGUID or EUI-64 to find it by", ErrMismatch, nsid)
	}
	if err == nil && r.byID(sub, n.ID()) != nil {
		err = fmt.Errorf("%w: the new namespace %d has the identity %s of a recorded one", ErrClaimed, nsid, n.ID())
	}
	if err != nil {
		// Not recorded, so never ours to find: delete it again.
		return Owned{}, errors.Join(err, m.C.Delete(ctx, nsid))
	}
	rec := Record{Name: name, SubNQN: sub, ID: n.ID(), NSID: nsid, Size: size, Created: true, Time: time.Now().UTC()}
	r.recs = append(r.recs, rec)
	if err := r.save(); err != nil {
		return Owned{}, errors.Join(err, m.C.Delete(ctx, nsid))
	}
	return m.attached(ctx, rec, n)
}

// attached attaches n to this controller if it is not and waits for its
// device node.
func (m *Manager) attached(ctx context.Context, rec Record, n Namespace) (Owned, error) {
	o := Owned{Record: rec, Namespace: n}
	if !n.Attached {
		if err := m.C.Attach(ctx, n.NSID, true); err != nil {
			return o, err
		}
		o.Namespace.Attached = true
	}
	if m.C.dev == "" {
		return o, nil
	}
	wctx, cancel := context.WithTimeout(ctx, m.wait())
	defer cancel()
	var err error
	o.Device, err = m.C.WaitDevice(wctx, n.NSID)
	return o, err
}

// Claim records an existing KV namespace (created by someone else) as
// name, so that Ensure finds it; it is never deleted (Drop only forgets
// it). A namespace or a name already recorded is refused (ErrClaimed).
func (m *Manager) Claim(ctx context.Context, name string, nsid uint32) (Owned, error) {
	r, err := lockRegistry(m.RegistryPath)
	if err != nil {
		return Owned{}, err
	}
	defer r.unlock()
	n, err := m.C.Namespace(ctx, nsid)
	if err != nil {
		return Owned{}, err
	}
	sub := m.C.info.SubNQN
	switch {
	case !n.KV:
		return Owned{}, fmt.Errorf("%w: namespace %d", ErrCommandSet, nsid)
	case n.ID() == "":
		return Owned{}, fmt.Errorf("%w: namespace %d has no NGUID or EUI-64 to find it by", ErrMismatch, nsid)
	case r.byName(sub, name) != nil:
		return Owned{}, fmt.Errorf("%w: the name %q is recorded already", ErrClaimed, name)
	}
	if other := r.byID(sub, n.ID()); other != nil {
		return Owned{}, fmt.Errorf("%w: namespace %d (%s) is recorded as %q", ErrClaimed, nsid, n.ID(), other.Name)
	}
	rec := Record{Name: name, SubNQN: sub, ID: n.ID(), NSID: nsid, Size: n.Size, Time: time.Now().UTC()}
	r.recs = append(r.recs, rec)
	if err := r.save(); err != nil {
		return Owned{}, err
	}
	return m.attached(ctx, rec, n)
}

// Drop deletes the namespace recorded as name, which this host created
// (ErrNotOwned for a claimed one: Forget it instead), detaching it first,
// and removes the record. A recorded namespace already gone from the
// device just loses its record.
func (m *Manager) Drop(ctx context.Context, name string) error {
	return m.drop(ctx, name, true)
}

// Forget removes the record of name and detaches its namespace from this
// controller, deleting nothing.
func (m *Manager) Forget(ctx context.Context, name string) error {
	return m.drop(ctx, name, false)
}

func (m *Manager) drop(ctx context.Context, name string, del bool) error {
	r, err := lockRegistry(m.RegistryPath)
	if err != nil {
		return err
	}
	defer r.unlock()
	sub := m.C.info.SubNQN
	rec := r.byName(sub, name)
	switch {
	case rec == nil:
		return fmt.Errorf("%w: no namespace is recorded as %q on %s", ErrNotFound, name, sub)
	case del && !rec.Created:
		return fmt.Errorf("%w: %q (%s) was claimed, not created, here; Forget it instead", ErrNotOwned, name, rec.ID)
	}
	n, err := m.C.byID(ctx, rec.ID)
	switch {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		return err
	default:
		if n.Attached {
			if err := m.C.Attach(ctx, n.NSID, false); err != nil {
				return err
			}
			if m.C.dev != "" {
				wctx, cancel := context.WithTimeout(ctx, m.wait())
				err := m.C.WaitGone(wctx, n.NSID)
				cancel()
				if err != nil {
					return err
				}
			}
		}
		if del {
			if err := m.C.Delete(ctx, n.NSID); err != nil {
				return err
			}
		}
	}
	r.remove(sub, name)
	return r.save()
}

// DeleteNSID deletes namespace nsid if this host created it (by its
// identity in the registry), else refuses with ErrNotOwned and changes
// nothing.
func (m *Manager) DeleteNSID(ctx context.Context, nsid uint32) error {
	n, err := m.C.Namespace(ctx, nsid)
	if err != nil {
		return err
	}
	r, err := lockRegistry(m.RegistryPath)
	if err != nil {
		return err
	}
	rec := r.byID(m.C.info.SubNQN, n.ID())
	r.unlock()
	if n.ID() == "" || rec == nil || !rec.Created {
		return fmt.Errorf("%w: namespace %d (%s) of %s is not in %s as created here; it is left alone", ErrNotOwned, nsid, n.ID(), m.C.info.SubNQN, m.RegistryPath)
	}
	return m.Drop(ctx, rec.Name)
}

// List returns every namespace of the controller with its record, if it
// has one, and the records whose namespace is gone (zero NSID).
func (m *Manager) List(ctx context.Context) ([]Owned, error) {
	ns, err := m.C.Namespaces(ctx)
	if err != nil {
		return nil, err
	}
	r, err := lockRegistry(m.RegistryPath)
	if err != nil {
		return nil, err
	}
	defer r.unlock()
	sub := m.C.info.SubNQN
	var out []Owned
	seen := map[string]bool{}
	for _, n := range ns {
		o := Owned{Namespace: n}
		if rec := r.byID(sub, n.ID()); rec != nil && n.ID() != "" {
			o.Record = *rec
			seen[rec.Name] = true
		}
		if n.Attached && m.C.dev != "" {
			o.Device, _ = m.C.Device(n.NSID)
		}
		out = append(out, o)
	}
	for _, rec := range r.recs {
		if rec.SubNQN == sub && !seen[rec.Name] {
			out = append(out, Owned{Record: rec})
		}
	}
	return out, nil
}

package nsadmin

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// Want is a namespace a caller is about to Ensure (Name and Size) or
// Claim (Name and NSID).
type Want struct {
	Name string
	Size uint64 // bytes for a new one; 0 takes a recorded one at its size
	NSID uint32 // a namespace to Claim; 0 for Ensure
}

// Check reports, all at once, why Ensure and Claim of each of ws would
// fail, under the registry's lock, sending nothing but Identify (NA4): a
// controller without Namespace Management (ErrNoManagement), a recorded
// namespace gone (ErrNotFound), no longer KV or asked with another size
// (ErrMismatch), a claimed namespace that is not KV (ErrCommandSet),
// missing (ErrNotFound), recorded under another name or claimed twice
// (ErrClaimed), and new namespaces together larger than the unallocated
// capacity (ErrCapacity).
func (m *Manager) Check(ctx context.Context, ws []Want) error {
	if err := m.C.needManagement(); err != nil {
		return err
	}
	info, err := m.C.Refresh(ctx)
	if err != nil {
		return err
	}
	ns, err := m.C.Namespaces(ctx)
	if err != nil {
		return err
	}
	r, err := lockRegistry(m.RegistryPath)
	if err != nil {
		return err
	}
	defer r.unlock()
	sub := info.SubNQN
	var errs []error
	var newBytes uint64
	claimed := map[uint32]string{}
	find := func(pred func(Namespace) bool) (Namespace, bool) {
		for _, n := range ns {
			if pred(n) {
				return n, true
			}
		}
		return Namespace{}, false
	}
	for _, w := range ws {
		rec := r.byName(sub, w.Name)
		switch {
		case w.NSID != 0:
			if other, dup := claimed[w.NSID]; dup {
				errs = append(errs, fmt.Errorf("%w: %q and %q both claim namespace %d of %s", ErrClaimed, other, w.Name, w.NSID, sub))
				continue
			}
			claimed[w.NSID] = w.Name
			n, ok := find(func(n Namespace) bool { return n.NSID == w.NSID })
			switch {
			case !ok:
				errs = append(errs, fmt.Errorf("%w: %q claims namespace %d, which %s does not have", ErrNotFound, w.Name, w.NSID, sub))
			case !n.KV:
				errs = append(errs, fmt.Errorf("%w: %q claims namespace %d of %s, whose command set is not KV", ErrCommandSet, w.Name, w.NSID, sub))
			case n.ID() == "":
				errs = append(errs, fmt.Errorf("%w: namespace %d has no NGUID or EUI-64 to find it by", ErrMismatch, w.NSID))
			case rec != nil && rec.ID != n.ID():
				errs = append(errs, fmt.Errorf("%w: the name %q is recorded for namespace %s, not %d", ErrClaimed, w.Name, rec.ID, w.NSID))
			default:
				if other := r.byID(sub, n.ID()); other != nil && other.Name != w.Name {
					errs = append(errs, fmt.Errorf("%w: namespace %d (%s) is recorded as %q, %q claims it", ErrClaimed, w.NSID, n.ID(), other.Name, w.Name))
				}
			}
		case rec != nil:
			n, ok := find(func(n Namespace) bool { return n.ID() == rec.ID })
			switch {
			case !ok:
				errs = append(errs, fmt.Errorf("%w: namespace %q (%s, last NSID %d) is gone from %s; it is not made again by itself: Forget it or Drop it", ErrNotFound, w.Name, rec.ID, rec.NSID, sub))
			case !n.KV:
				errs = append(errs, fmt.Errorf("%w: namespace %q (%s) is not a KV namespace", ErrMismatch, w.Name, rec.ID))
			case w.Size != 0 && w.Size != rec.Size:
				errs = append(errs, fmt.Errorf("%w: namespace %q was created with %d bytes, %d asked (namespaces do not grow)", ErrMismatch, w.Name, rec.Size, w.Size))
			}
			if ok && n.KV {
				if other, dup := claimed[n.NSID]; dup {
					errs = append(errs, fmt.Errorf("%w: %q and %q both take namespace %d of %s", ErrClaimed, other, w.Name, n.NSID, sub))
				}
				claimed[n.NSID] = w.Name
			}
		case w.Size == 0:
			errs = append(errs, fmt.Errorf("%w: no namespace is recorded as %q and no size was asked to make one", ErrNotFound, w.Name))
		default:
			newBytes += w.Size
		}
	}
	if newBytes > info.Unallocated {
		errs = append(errs, fmt.Errorf("%w: the new namespaces need %d bytes, %d of %d are unallocated on %s%s", ErrCapacity, newBytes, info.Unallocated, info.Capacity, sub, m.C.where()))
	}
	return errors.Join(errs...)
}

// Records returns the registry at path, read under its lock; a missing
// file is os.ErrNotExist, and nothing is made for it.
func Records(path string) ([]Record, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	r, err := lockRegistry(path)
	if err != nil {
		return nil, err
	}
	defer r.unlock()
	return r.recs, nil
}

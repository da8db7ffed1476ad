package coldstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/nvmekv/emu"
	"github.com/tiercache/tiercache/nvmekv/emu/volume"
)

// volumeOptions are the volume's on c's path or device.
func (c Config) volumeOptions(create bool) volume.Options {
	o := volume.Options{Path: c.Path, Capacity: c.Capacity, Create: create}
	if c.Mode == "nvme" {
		o.Path, o.NVMe = c.Device, true
	}
	return o
}

// minSpace is the smallest namespace a volume makes for c: four regions
// of the log and its superblock, whole MiB.
func (c Config) minSpace() int64 {
	return (4*c.regionBytes() + 4096 + volume.Align - 1) / volume.Align * volume.Align
}

// regionBytes is the log's region size for c (emu's default, 4 MiB).
func (c Config) regionBytes() int64 {
	if c.RegionBytes == 0 {
		return 4 << 20
	}
	return int64(c.RegionBytes)
}

// validateSpace checks an emulated store's Capacity before anything is
// made (CS6): it holds four log regions at least, and a volume Open would
// make for tenants' namespaces leaves the default namespace the smallest
// size. An existing volume is checked by Open, against what it holds.
func (c Config) validateSpace() []error {
	if c.Mode != "emulated" || c.Capacity <= 0 {
		return nil // 0: the emulator's default, or the file's or device's size
	}
	if c.Capacity < 4*c.regionBytes() {
		return []error{fmt.Errorf("%w: Capacity %d (cold.capacity) holds fewer than four %d-byte log regions (%d bytes at least)",
			ErrInvalidConfig, c.Capacity, c.regionBytes(), 4*c.regionBytes())}
	}
	if len(c.Tenants) == 0 {
		return nil
	}
	if _, err := os.Stat(c.Path); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var tenants int64
	for _, t := range c.Tenants {
		if t.Namespace == "" {
			tenants += roundMiB(t.Bytes)
		}
	}
	switch {
	case c.DefaultBytes == 0:
	case c.DefaultBytes < c.minSpace():
		return []error{fmt.Errorf("%w: DefaultBytes %d is below the smallest namespace, %d bytes (four %d-byte log regions and a superblock)",
			ErrInvalidConfig, c.DefaultBytes, c.minSpace(), c.regionBytes())}
	case roundMiB(c.DefaultBytes)+tenants > c.Capacity-volume.DataStart:
		return []error{fmt.Errorf("%w: the default namespace's %d bytes (DefaultBytes) and the tenants' %d do not fit in Capacity %d (%d for namespaces): raise cold.capacity, or lower them",
			ErrInvalidConfig, c.DefaultBytes, tenants, c.Capacity, c.Capacity-volume.DataStart)}
	default:
		return nil
	}
	if size := c.Capacity - volume.DataStart - tenants; size < c.minSpace() {
		return []error{fmt.Errorf("%w: the default namespace would have %d bytes of Capacity %d beside the tenants' %d, below the smallest namespace (%d): raise cold.capacity, or lower the tenants' cold_bytes",
			ErrInvalidConfig, size, c.Capacity, tenants, c.minSpace())}
	}
	return nil
}

// tooSmall says that tenant's cold_bytes is below minSpace.
func (c Config) tooSmall(tenant string, bytes int64) string {
	return fmt.Sprintf("tenant %q: cold_bytes %d is below the smallest namespace, %d bytes (four %d-byte log regions and a superblock)",
		tenant, bytes, c.minSpace(), c.regionBytes())
}

// openVolume opens (or makes) the volume, checks the configuration
// against it, then opens every namespace: the default one, each tenant's
// (made when missing, its keys moved from the default one, CS7), and those
// kept from tenants no longer configured (or drops them, DropRemoved).
func (m *Multi) openVolume(c Config, p backend.Params, ws []want) error {
	ctx := context.Background()
	if c.DataDir != "" && c.Mode == "emulated" {
		if err := os.MkdirAll(c.DataDir, 0o755); err != nil {
			return fmt.Errorf("coldstore: create data dir: %w", err)
		}
	}
	kind, _ := volume.Probe(c.volumeOptions(false).Path, c.Mode == "nvme")
	v, err := volume.Open(c.volumeOptions(kind == volume.Empty))
	if err != nil {
		return fmt.Errorf("coldstore: %w", err)
	}
	m.vol, m.where = v, "volume:"+v.Path()
	m.closers = append(m.closers, v.Close)
	creates, kept, err := m.planVolume(c, ws)
	if err != nil {
		return err
	}
	// Every check that needs no namespace opened has passed. The default
	// namespace is made only in a new volume, where no other namespace is
	// left to check.
	def, err := m.openDefault(c, p, creates)
	if err != nil {
		return err
	}
	m.spaces = []*space{def}
	var made []want
	for _, w := range ws {
		name := w.spaceName()
		if _, ok := v.Find(name); !ok {
			made = append(made, w)
			continue
		}
		s, err := m.openVolumeSpace(c, p, name)
		if err != nil {
			return err
		}
		s.row = w.row
		m.addSpace(s)
		if err := s.check(w); err != nil {
			return err
		}
	}
	var drop []string
	for _, name := range kept {
		s, err := m.openVolumeSpace(c, p, name)
		if err != nil {
			return err
		}
		switch {
		case s.rec.Name == "":
			err = fmt.Errorf("%w: namespace %q of %s has no tenant record (it was being made when a run stopped): drop it (tiercache tenant drop %s)",
				ErrTenantMismatch, name, v.Path(), name)
		case c.DropRemoved:
			drop = append(drop, name)
		default:
			err = m.checkKept(name, s.rec)
		}
		if err != nil || c.DropRemoved {
			if err = errors.Join(err, s.st.Close()); err != nil {
				return err
			}
			continue
		}
		m.addKept(s)
	}
	// Every check passed: now the changes.
	for _, name := range drop {
		if err := dropVolumeSpace(c, v, name); err != nil {
			return err
		}
		p.Logger.Sugar().Infof("dropped the cold namespace %q of a tenant no longer configured (DropRemoved)", name)
	}
	for _, w := range made {
		name := w.spaceName()
		if _, err := v.Create(name, w.Bytes); err != nil {
			return fmt.Errorf("coldstore: make the cold namespace of tenant %q: %w", w.Name, err)
		}
		s, err := m.openVolumeSpace(c, p, name)
		if err != nil {
			return err
		}
		s.row = w.row
		m.addSpace(s)
	}
	return m.claimAll(ctx, ws, p)
}

// spaceName is the volume namespace (or registry name) a tenant uses.
func (w want) spaceName() string {
	if w.Namespace != "" {
		return w.Namespace
	}
	return w.Name
}

// planVolume checks what needs no namespace opened: the volume has a
// default namespace (or is new), no two tenants take one namespace, no
// tenant takes the default one or a missing one, sizes match (namespaces
// do not grow), and the new namespaces fit (CS6). It returns the
// namespaces to make and the names of those no tenant takes.
func (m *Multi) planVolume(c Config, ws []want) (creates []volume.Want, kept []string, err error) {
	v := m.vol
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrTenantMismatch}, a...)...))
	}
	_, hasDefault := v.Find(defaultSpace)
	taken := map[string]string{}
	var newBytes int64
	for _, w := range ws {
		name := w.spaceName()
		if other, dup := taken[name]; dup {
			bad("tenants %q and %q both take namespace %q of %s: a namespace is one tenant's", other, w.Name, name, v.Path())
			continue
		}
		taken[name] = w.Name
		e, exists := v.Find(name)
		switch {
		case name == defaultSpace:
			bad("tenant %q takes the default namespace, which every tenant without one of its own shares", w.Name)
		case exists && w.Bytes > 0 && e.Bytes != roundMiB(w.Bytes):
			bad("tenant %q's namespace %q of %s holds %d bytes, cold_bytes asks %d (%d in whole MiB): namespaces keep the size they were made with; "+
				"to change it drop the namespace (tiercache tenant drop %s, which deletes its keys)", w.Name, name, v.Path(), e.Bytes, w.Bytes, roundMiB(w.Bytes), name)
		case exists:
		case w.Namespace != "":
			bad("tenant %q takes namespace %q, which %s does not hold", w.Name, name, v.Path())
		case w.Bytes < c.minSpace():
			bad("%s", c.tooSmall(w.Name, w.Bytes))
		default:
			creates = append(creates, volume.Want{Name: name, Bytes: w.Bytes})
			newBytes += roundMiB(w.Bytes)
		}
	}
	if !hasDefault {
		if len(v.Namespaces()) > 0 {
			bad("%s holds tenant namespaces but no default namespace: it was not made by tiercache", v.Path())
		}
		size := c.DefaultBytes
		if size == 0 {
			size = v.Capacity() - volume.DataStart - newBytes
		}
		if size < c.minSpace() {
			bad("%s: the default namespace would have %d bytes, below the smallest namespace (%d): raise cold.capacity, or lower the tenants' cold_bytes", v.Path(), size, c.minSpace())
		} else {
			creates = append([]volume.Want{{Name: defaultSpace, Bytes: size}}, creates...)
		}
	}
	for _, e := range v.Namespaces() {
		if _, ok := taken[e.Name]; !ok && e.Name != defaultSpace {
			kept = append(kept, e.Name)
		}
	}
	if err := v.Check(creates); err != nil {
		errs = append(errs, fmt.Errorf("%w: %w", ErrTenantMismatch, err))
	}
	return creates, kept, errors.Join(errs...)
}

func roundMiB(n int64) int64 { return (n + volume.Align - 1) / volume.Align * volume.Align }

// openDefault makes the default namespace when creates asks for it and
// opens it.
func (m *Multi) openDefault(c Config, p backend.Params, creates []volume.Want) (*space, error) {
	if len(creates) > 0 && creates[0].Name == defaultSpace {
		if _, err := m.vol.Create(defaultSpace, creates[0].Bytes); err != nil {
			return nil, fmt.Errorf("coldstore: make the default namespace: %w", err)
		}
	}
	return m.openVolumeSpace(c, p, defaultSpace)
}

// openVolumeSpace opens the emulated namespace on the volume's extent
// name, and reads its tenant record.
func (m *Multi) openVolumeSpace(c Config, p backend.Params, name string) (*space, error) {
	w, err := m.vol.Device(name)
	if err != nil {
		return nil, fmt.Errorf("coldstore: %w", err)
	}
	o := emu.Options{Device: w}
	if !m.vol.Fixed() {
		o.CheckpointPath = ckptPath(m.vol.Path(), name)
	}
	e, index, err := c.openEmu(p, o)
	if err != nil {
		return nil, fmt.Errorf("coldstore: open cold namespace %s: %w", w.Path(), err)
	}
	where := strings.TrimPrefix(c.Mode, "emulated")
	if where == "" {
		where = "emulated"
	}
	st, err := newStore(c, p, e, where+":"+w.Path(), index)
	if err != nil {
		return nil, err
	}
	s := &space{st: st, name: name, where: st.name}
	if name != defaultSpace {
		if s.rec, _, err = loadTenantRec(context.Background(), e); err != nil {
			return nil, errors.Join(fmt.Errorf("coldstore: namespace %s: %w", w.Path(), err), st.Close())
		}
	}
	return s, nil
}

// ckptPath is the checkpoint file of a file volume's namespace.
func ckptPath(vol, name string) string { return vol + ".ns-" + name + ".ckpt" }

// dropVolumeSpace deletes namespace name of v and its checkpoint.
func dropVolumeSpace(c Config, v *volume.Volume, name string) error {
	if err := v.Drop(name); err != nil {
		return fmt.Errorf("coldstore: drop namespace %q: %w", name, err)
	}
	if !v.Fixed() {
		os.Remove(ckptPath(v.Path(), name))
	}
	return nil
}

package volume

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/nvmekv/emu/dev"
)

// Options say which volume to open.
type Options struct {
	// Path is a regular file (created if missing), a block device, or an
	// NVM namespace's generic char device /dev/ngXnY (NVMe).
	Path string
	// NVMe opens Path as an NVM namespace through NVM passthrough
	// (dev.OpenNVMe): the namespaces are LBA ranges of it.
	NVMe bool
	// Capacity is the volume's size in bytes. A new volume is made this
	// size (0: 1 GiB for a file, the whole device otherwise); an existing
	// volume on a regular file grows to it, on a device up to the device's
	// size; less than the volume's recorded capacity is ErrShrink.
	Capacity int64
	// Create makes a new volume when Path holds none (missing, empty, or
	// its first table's bytes all zero). Without it, Open of such a path
	// fails with ErrFormat.
	Create bool
	// Sparse leaves a regular file's blocks unreserved; by default every
	// extent's blocks are reserved (fallocate) when it is made.
	Sparse bool
	// Logger defaults to zap.NewNop().
	Logger *zap.Logger
}

// Volume is a file or device divided into named extents, each an
// emulated namespace's device (Device). It is locked (flock) while open:
// one process at a time. Safe for concurrent use.
type Volume struct {
	o       Options
	d       dev.Device
	release func()
	mu      sync.Mutex
	t       table
	closed  bool
}

// defaultFileCapacity is a new file volume's size when Options.Capacity is 0.
const defaultFileCapacity = 1 << 30

// Probe reports what path holds: a volume, an emulated namespace's
// superblock ("CEMU_SB1", logstore), or nothing (missing, or a first
// block of zeros); any other content is other.
func Probe(path string, nvme bool) (Kind, error) {
	if !nvme && !exists(path) {
		return Empty, nil
	}
	d, err := openDev(path, nvme, nil)
	if err != nil {
		return Other, err
	}
	defer d.Close()
	if d.Size() < dev4K {
		return Empty, nil
	}
	b, err := dev.MapBuffer(dev4K)
	if err != nil {
		return Other, err
	}
	defer dev.UnmapBuffer(b)
	if err := d.ReadAt(b, 0); err != nil {
		return Other, err
	}
	switch {
	case isTable(b):
		return IsVolume, nil
	case binary.LittleEndian.Uint64(b) == emuMagic:
		return Namespace, nil
	}
	if d.Size() >= tableBytes+dev4K {
		if err := d.ReadAt(b, tableBytes); err == nil && isTable(b) {
			return IsVolume, nil // copy 0 torn
		}
	}
	for _, x := range b {
		if x != 0 {
			return Other, nil
		}
	}
	return Empty, nil
}

// Kind is what Probe found.
type Kind int

// What a path may hold.
const (
	Empty     Kind = iota // nothing: a new store may be made there
	IsVolume              // a volume
	Namespace             // one emulated namespace (logstore's superblock)
	Other                 // something else
)

const (
	dev4K    = 4096
	emuMagic = 0x3142535f554d4543 // "CEMU_SB1", nvmekv/emu/logstore's superblock magic
)

// Open opens the volume at o.Path, making one when o.Create says so and
// the path holds none.
func Open(o Options) (*Volume, error) {
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.Capacity < 0 {
		return nil, fmt.Errorf("volume: Capacity %d is negative", o.Capacity)
	}
	if !o.NVMe && !o.Create && !exists(o.Path) {
		return nil, fmt.Errorf("%w: %s does not exist", ErrFormat, o.Path)
	}
	d, err := openDev(o.Path, o.NVMe, o.Logger) // a missing file is created
	if err != nil {
		return nil, fmt.Errorf("volume: open %s: %w", o.Path, err)
	}
	release, busy, err := lockPath(o.Path)
	if err != nil {
		d.Close()
		if busy {
			return nil, fmt.Errorf("%w: %s is locked (a running sidecar holds it)", ErrBusy, o.Path)
		}
		return nil, fmt.Errorf("volume: lock %s: %w", o.Path, err)
	}
	v := &Volume{o: o, d: d, release: release}
	if err := v.load(); err != nil {
		v.Close()
		return nil, err
	}
	return v, nil
}

// load reads the table, or makes a new volume.
func (v *Volume) load() error {
	b, err := dev.MapBuffer(tableBytes)
	if err != nil {
		return err
	}
	defer dev.UnmapBuffer(b)
	var best *table
	var errs []error
	zero := true
	for k := range 2 {
		if v.d.Size() < int64(k+1)*tableBytes {
			break
		}
		if err := v.d.ReadAt(b, int64(k)*tableBytes); err != nil {
			return fmt.Errorf("volume: read table copy %d of %s: %w", k, v.o.Path, err)
		}
		if k == 0 {
			zero = !slices.ContainsFunc(b[:dev4K], func(x byte) bool { return x != 0 })
		}
		t, err := decode(b)
		if err != nil {
			errs = append(errs, fmt.Errorf("copy %d: %w", k, err))
			continue
		}
		if best == nil || t.gen > best.gen {
			best = &t
		}
	}
	switch {
	case best != nil:
		v.t = *best
		return v.grow()
	case (v.d.Size() == 0 || zero) && v.o.Create:
		return v.create()
	case v.d.Size() == 0 || zero:
		return fmt.Errorf("%w: %s holds no volume", ErrFormat, v.o.Path)
	}
	return fmt.Errorf("%w: %s: %w", ErrFormat, v.o.Path, errors.Join(errs...))
}

// create writes the table of a new, empty volume.
func (v *Volume) create() error {
	c := v.o.Capacity
	if c == 0 {
		c = defaultFileCapacity
		if v.d.Fixed() {
			c = v.d.Size()
		}
	}
	c = c / Align * Align
	if c < DataStart+Align {
		return fmt.Errorf("volume: capacity %d leaves no room for a namespace (at least %d bytes)", c, DataStart+Align)
	}
	if err := v.size(c); err != nil {
		return err
	}
	var id [8]byte
	rand.Read(id[:])
	v.t = table{gen: 0, capacity: c, id: binary.LittleEndian.Uint64(id[:]) | 1}
	// Both copies: the other must not be a stale volume's table.
	if err := v.write(); err != nil {
		return err
	}
	return v.write()
}

// grow takes the capacity Options ask for, when it is more than the
// table's.
func (v *Volume) grow() error {
	c := v.o.Capacity / Align * Align
	switch {
	case c == 0 || c == v.t.capacity:
		return nil
	case c < v.t.capacity:
		return fmt.Errorf("%w: %s holds %d bytes of namespaces and free space, %d asked", ErrShrink, v.o.Path, v.t.capacity, v.o.Capacity)
	}
	if err := v.size(c); err != nil {
		return err
	}
	old := v.t.capacity
	v.t.capacity = c
	if err := v.write(); err != nil {
		v.t.capacity = old
		return err
	}
	v.o.Logger.Info("volume grown", zap.String("path", v.o.Path), zap.Int64("from", old), zap.Int64("to", c))
	return nil
}

// size makes the device hold c bytes: a file is extended, a device must
// be that large.
func (v *Volume) size(c int64) error {
	if v.d.Fixed() {
		if v.d.Size() < c {
			return fmt.Errorf("%w: %s has %d bytes, %d asked", ErrCapacity, v.o.Path, v.d.Size(), c)
		}
		return nil
	}
	return v.d.Resize(c)
}

// write writes the table as the next generation's copy and syncs it.
func (v *Volume) write() error {
	b, err := dev.MapBuffer(tableBytes)
	if err != nil {
		return err
	}
	defer dev.UnmapBuffer(b)
	t := v.t
	t.gen++
	if err := t.encode(b); err != nil {
		return err
	}
	if err := v.d.WriteAt(b, int64(t.gen%2)*tableBytes); err != nil {
		return fmt.Errorf("volume: write the table of %s: %w", v.o.Path, err)
	}
	if err := v.d.Sync(); err != nil {
		return fmt.Errorf("volume: sync the table of %s: %w", v.o.Path, err)
	}
	v.t.gen = t.gen
	return nil
}

// Capacity is the volume's size in bytes.
func (v *Volume) Capacity() int64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.t.capacity
}

// Unallocated is the bytes no namespace holds, and the longest free run
// (the largest namespace Create can make now).
func (v *Volume) Unallocated() (free, largest int64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	free = v.t.capacity - DataStart
	for _, e := range v.t.ns {
		free -= e.Bytes
	}
	_, _, largest = v.t.fit(v.t.capacity+1, nil)
	return free, largest
}

// Namespaces are the volume's namespaces, by offset.
func (v *Volume) Namespaces() []Extent {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.t.ns)
}

// Find returns the namespace called name.
func (v *Volume) Find(name string) (Extent, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	i := slices.IndexFunc(v.t.ns, func(e Extent) bool { return e.Name == name })
	if i < 0 {
		return Extent{}, false
	}
	return v.t.ns[i], true
}

// Want is a namespace Create would make: its name and bytes.
type Want struct {
	Name  string
	Bytes int64
}

// Check reports, all at once, why Create of each of ws in turn would
// fail; it changes nothing.
func (v *Volume) Check(ws []Want) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	_, err := v.plan(ws)
	return err
}

// plan places ws after the namespaces there are (mu held).
func (v *Volume) plan(ws []Want) ([]Extent, error) {
	var errs []error
	var taken []Extent
	seen := map[string]bool{}
	for _, w := range ws {
		n := roundUp(w.Bytes)
		switch {
		case w.Name == "" || len(w.Name) > maxName:
			errs = append(errs, fmt.Errorf("%w: %q (1 to %d bytes)", ErrBadName, w.Name, maxName))
			continue
		case seen[w.Name] || slices.ContainsFunc(v.t.ns, func(e Extent) bool { return e.Name == w.Name }):
			errs = append(errs, fmt.Errorf("%w: %q", ErrExists, w.Name))
			continue
		case w.Bytes <= 0:
			errs = append(errs, fmt.Errorf("volume: namespace %q of %d bytes", w.Name, w.Bytes))
			continue
		case len(v.t.ns)+len(taken) >= MaxNamespaces:
			errs = append(errs, fmt.Errorf("%w: namespace %q: a volume holds %d namespaces", ErrCapacity, w.Name, MaxNamespaces))
			continue
		}
		seen[w.Name] = true
		off, ok, largest := v.t.fit(n, taken)
		if !ok {
			errs = append(errs, fmt.Errorf("%w: namespace %q needs %d bytes, the largest free run of %s is %d (capacity %d)",
				ErrCapacity, w.Name, n, v.o.Path, largest, v.t.capacity))
			continue
		}
		var id [16]byte
		rand.Read(id[:])
		taken = append(taken, Extent{Name: w.Name, ID: id, Offset: off, Bytes: n})
	}
	return taken, errors.Join(errs...)
}

// Create makes the namespace name of bytes (rounded up to whole MiB) in
// the first free run that holds it: its first block zeroed (a namespace
// dropped there before must not be found again: its emulated store's
// superblock goes), its blocks reserved on a regular file, then the table
// written (V2).
func (v *Volume) Create(name string, bytes int64) (Extent, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return Extent{}, errClosed
	}
	es, err := v.plan([]Want{{name, bytes}})
	if err != nil {
		return Extent{}, err
	}
	e := es[0]
	if !v.o.Sparse {
		if err := v.d.Reserve(e.Offset + e.Bytes); err != nil {
			return Extent{}, fmt.Errorf("volume: reserve %d bytes of %s for %q: %w", e.Bytes, v.o.Path, name, err)
		}
	}
	if err := v.zeroFirst(e); err != nil {
		return Extent{}, err
	}
	v.t.ns = append(v.t.ns, e)
	slices.SortFunc(v.t.ns, byOffset)
	if err := v.write(); err != nil {
		v.t.ns = slices.DeleteFunc(v.t.ns, func(x Extent) bool { return x.Name == name })
		return Extent{}, err
	}
	return e, nil
}

// zeroFirst zeroes e's first block and syncs it.
func (v *Volume) zeroFirst(e Extent) error {
	b, err := dev.MapBuffer(dev4K)
	if err != nil {
		return err
	}
	defer dev.UnmapBuffer(b)
	if err := v.d.WriteAt(b, e.Offset); err != nil {
		return fmt.Errorf("volume: clear the first block of %q on %s: %w", e.Name, v.o.Path, err)
	}
	return v.d.Sync()
}

// Drop deletes the namespace name: its first block zeroed (its store is
// gone for good, V2), its extent deallocated (NVM Dataset Management on
// an NVM namespace), then the table written without it.
func (v *Volume) Drop(name string) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return errClosed
	}
	i := slices.IndexFunc(v.t.ns, func(e Extent) bool { return e.Name == name })
	if i < 0 {
		return fmt.Errorf("%w: %q on %s", ErrNotFound, name, v.o.Path)
	}
	e := v.t.ns[i]
	if err := v.zeroFirst(e); err != nil {
		return err
	}
	if err := v.d.Deallocate(e.Offset, e.Bytes); err != nil {
		v.o.Logger.Warn("volume: deallocate a dropped namespace", zap.String("name", name), zap.Error(err))
	}
	v.t.ns = slices.Delete(v.t.ns, i, i+1)
	if err := v.write(); err != nil {
		v.t.ns = slices.Insert(v.t.ns, i, e)
		return err
	}
	return nil
}

// Device is namespace name's extent as a device of its own, for an
// emulated namespace (emu.Options.Device): it shares the volume's device,
// which stays open until the volume closes.
func (v *Volume) Device(name string) (*dev.Window, error) {
	e, ok := v.Find(name)
	if !ok {
		return nil, fmt.Errorf("%w: %q on %s", ErrNotFound, name, v.o.Path)
	}
	return dev.NewWindow(v.d, e.Offset, e.Bytes, fmt.Sprintf("%s#%s", v.o.Path, name))
}

// Path is the volume's file or device.
func (v *Volume) Path() string { return v.o.Path }

// Close closes the device and releases the lock; every namespace on the
// volume must be closed first. Idempotent.
func (v *Volume) Close() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return nil
	}
	v.closed = true
	err := v.d.Close()
	if v.release != nil {
		v.release()
	}
	return err
}

var errClosed = errors.New("volume: closed")

// openDev opens path as the volume's device.
func openDev(path string, nvme bool, log *zap.Logger) (dev.Device, error) {
	if nvme {
		if log == nil {
			log = zap.NewNop()
		}
		return dev.OpenNVMe(path, dev.NVMeOptions{Logger: log})
	}
	return dev.OpenFile(path)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Fixed reports a volume on a block device or an NVM namespace (a
// regular file is not).
func (v *Volume) Fixed() bool { return v.d.Fixed() }

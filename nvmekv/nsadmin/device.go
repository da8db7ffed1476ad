package nsadmin

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/tiercache/tiercache/nvmekv"
)

// CharDevice is a kernel NVMe controller's char device, /dev/nvmeX: admin
// commands go through the NVME_IOCTL_ADMIN_CMD ioctl
// (include/uapi/linux/nvme_ioctl.h; drivers/nvme/host/ioctl.c
// nvme_dev_ioctl), which needs CAP_SYS_ADMIN. Safe for concurrent use.
type CharDevice struct {
	path string
	mu   sync.Mutex
	fd   int
}

// OpenCharDevice opens /dev/nvmeX.
func OpenCharDevice(path string) (*CharDevice, error) {
	if !ctrlDevRE.MatchString(filepath.Base(path)) {
		return nil, fmt.Errorf("nsadmin: %s is not a controller's char device (/dev/nvmeX)", path)
	}
	fd, err := openCtrl(path)
	if err != nil {
		return nil, fmt.Errorf("nsadmin: open %s: %w", path, err)
	}
	return &CharDevice{path: path, fd: fd}, nil
}

var ctrlDevRE = regexp.MustCompile(`^nvme(\d+)$`)

// Admin runs an admin command through the ioctl; ctx is not consulted
// (the kernel's admin timeout bounds it).
func (d *CharDevice) Admin(_ context.Context, c nvmekv.Command, buf []byte) (uint32, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fd < 0 {
		return 0, fmt.Errorf("nsadmin: %s is closed", d.path)
	}
	return nvmekv.AdminPassthru(d.fd, c, buf)
}

// Close closes the device. Idempotent.
func (d *CharDevice) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fd < 0 {
		return nil
	}
	err := closeFd(d.fd)
	d.fd = -1
	return err
}

// Open opens a kernel controller (/dev/nvmeX) and identifies it. Close
// closes its device.
func Open(ctx context.Context, path string) (*Controller, error) {
	d, err := OpenCharDevice(path)
	if err != nil {
		return nil, err
	}
	c, err := New(ctx, d, path)
	if err != nil {
		d.Close()
		return nil, err
	}
	return c, nil
}

// Close closes the controller's char device, if it opened one.
func (c *Controller) Close() error {
	if d, ok := c.a.(*CharDevice); ok {
		return d.Close()
	}
	return nil
}

// Device returns the generic char device of namespace nsid of this
// controller, /dev/ngXnY: Linux names it after the controller instance X
// and a per-subsystem head instance Y that is not the NSID
// (drivers/nvme/host/core.c nvme_add_ns_cdev), so each /dev/ngXn* is asked
// its NSID (NVME_IOCTL_ID). A controller of a subsystem with several
// controllers and multipath has the head's node instead (ngSnY, S the
// subsystem instance), which this does not look for.
func (c *Controller) Device(nsid uint32) (string, error) {
	m := ctrlDevRE.FindStringSubmatch(filepath.Base(c.dev))
	if m == nil {
		return "", fmt.Errorf("%w: %s is reached through no kernel controller", ErrNoDevice, c.info.SubNQN)
	}
	inst, _ := strconv.Atoi(m[1])
	paths, _ := filepath.Glob(fmt.Sprintf("/dev/ng%dn*", inst))
	for _, p := range paths {
		if id, err := nsidOf(p); err == nil && id == nsid {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: no /dev/ng%dn* for namespace %d of %s", ErrNoDevice, inst, nsid, c.dev)
}

// WaitDevice is Device, retried until ctx ends: after an attachment the
// kernel scans (at once after its own passthrough, whose effects say the
// namespace inventory changes; on the Namespace Attribute Changed event
// after another host's) and creates the node.
func (c *Controller) WaitDevice(ctx context.Context, nsid uint32) (string, error) {
	for {
		p, err := c.Device(nsid)
		if err == nil || c.dev == "" {
			return p, err
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("%w (waited %v)", err, context.Cause(ctx))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// WaitGone waits until namespace nsid has no device node (after a detach
// or a delete).
func (c *Controller) WaitGone(ctx context.Context, nsid uint32) error {
	for {
		if _, err := c.Device(nsid); err != nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("nsadmin: namespace %d of %s still has a device node: %w", nsid, c.dev, context.Cause(ctx))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

package nsadmin

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/tiercache/tiercache/nvmekv"
)

// Admin runs one admin command: buf is its data, sent to the controller
// when the opcode's bit 0 says so and read into otherwise; it returns the
// completion's DW0, or a *nvmekv.StatusError for an NVMe status.
// *CharDevice (a kernel controller's /dev/nvmeX) and *nvmetcp.Host (an
// NVMe/TCP connection of its own) are Admins.
type Admin interface {
	Admin(ctx context.Context, c nvmekv.Command, buf []byte) (uint32, error)
}

// Admin opcodes and Identify CNS values of Namespace Management (NVMe Base
// Specification 2.0: Namespace Management 0Dh, Namespace Attachment 15h;
// Identify CNS 10h allocated NSIDs, 1Ah allocated NSIDs of a command set,
// 1Bh the command set specific data of an allocated NSID;
// include/linux/nvme.h).
const (
	opNSManagement = 0x0d
	opNSAttachment = 0x15

	cnsAllocatedNSList     = 0x10
	cnsIOCSAllocatedNSList = 0x1a
	cnsIOCSAllocatedNS     = 0x1b

	oacsNSManagement = 1 << 3 // Identify Controller OACS bit 3
)

// Info is what Identify Controller says about namespaces.
type Info struct {
	CNTLID        uint16
	Serial, Model string
	SubNQN        string
	NSManagement  bool   // OACS bit 3: Namespace Management and Attachment
	Capacity      uint64 // TNVMCAP, bytes (the low 64 bits of the u128)
	Unallocated   uint64 // UNVMCAP, bytes
	MaxNSID       uint32 // NN
}

// Controller manages the namespaces of one NVMe controller.
type Controller struct {
	a    Admin
	dev  string // /dev/nvmeX, or "" for an Admin that is not a kernel controller
	info Info
}

// New identifies the controller a reaches; dev is its /dev/nvmeX (for
// Device), or "" when it is not a kernel controller.
func New(ctx context.Context, a Admin, dev string) (*Controller, error) {
	c := &Controller{a: a, dev: dev}
	if _, err := c.Refresh(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Info is what the last Refresh read.
func (c *Controller) Info() Info { return c.info }

// Refresh reads Identify Controller again (UNVMCAP changes with every
// create and delete).
func (c *Controller) Refresh(ctx context.Context) (Info, error) {
	b := make([]byte, nvmekv.IdentifyBytes)
	if _, err := c.a.Admin(ctx, nvmekv.EncodeIdentify(0, nvmekv.CNSController, 0, 0), b); err != nil {
		return Info{}, fmt.Errorf("nsadmin: Identify Controller%s: %w", c.where(), err)
	}
	le := binary.LittleEndian
	c.info = Info{CNTLID: le.Uint16(b[78:]), Serial: strings.TrimRight(string(b[4:24]), " \x00"), Model: strings.TrimRight(string(b[24:64]), " \x00"),
		SubNQN: cstring(b[768:1024]), NSManagement: le.Uint16(b[256:])&oacsNSManagement != 0,
		Capacity: le.Uint64(b[280:]), Unallocated: le.Uint64(b[296:]), MaxNSID: le.Uint32(b[516:])}
	return c.info, nil
}

func cstring(b []byte) string {
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		b = b[:i]
	}
	return strings.TrimSpace(string(b))
}

func (c *Controller) where() string {
	if c.dev != "" {
		return " of " + c.dev
	}
	return ""
}

// needManagement refuses, before sending anything, on a controller that
// does not support Namespace Management: OACS bit 3 clear, or set with no
// capacity to allocate from (TNVMCAP 0, which the specification requires
// with Namespace Management; QEMU's emulated NVMe controller reports
// that, and answers Namespace Management with Invalid Opcode).
func (c *Controller) needManagement() error {
	switch {
	case !c.info.NSManagement:
		return fmt.Errorf("%w: %s%s (model %q) reports OACS bit 3 clear", ErrNoManagement, c.info.SubNQN, c.where(), c.info.Model)
	case c.info.Capacity == 0:
		return fmt.Errorf("%w: %s%s (model %q) reports Namespace Management in OACS but no NVM capacity (TNVMCAP 0)", ErrNoManagement, c.info.SubNQN, c.where(), c.info.Model)
	}
	return nil
}

// Create makes a KV namespace of size bytes (the controller may round it
// up) and returns its NSID; it is attached to nobody. A size above the
// unallocated capacity is refused before anything is sent.
func (c *Controller) Create(ctx context.Context, size uint64) (uint32, error) {
	if err := c.needManagement(); err != nil {
		return 0, err
	}
	if _, err := c.Refresh(ctx); err != nil {
		return 0, err
	}
	if size == 0 || size > c.info.Unallocated {
		return 0, fmt.Errorf("%w: %d bytes asked, %d of %d unallocated on %s%s", ErrCapacity, size, c.info.Unallocated, c.info.Capacity, c.info.SubNQN, c.where())
	}
	// Host software specified fields (4096 bytes): NSZE at byte 0, in
	// bytes for a KV namespace; NMIC, ANA group, NVM set, endurance group
	// and the KV format 0 (the KV Identify Namespace layout).
	d := make([]byte, nvmekv.IdentifyBytes)
	binary.LittleEndian.PutUint64(d, size)
	nsid, err := c.a.Admin(ctx, nvmekv.Command{Opcode: opNSManagement, CDW10: 0, CDW11: uint32(nvmekv.CSIKV) << 24}, d)
	if err != nil {
		return 0, c.statusErr("create a namespace", err)
	}
	return nsid, nil
}

// Delete deletes namespace nsid (the caller checks it may: Manager.Drop
// deletes only namespaces its registry holds).
func (c *Controller) Delete(ctx context.Context, nsid uint32) error {
	if err := c.needManagement(); err != nil {
		return err
	}
	if nsid == 0 || nsid == 0xffffffff {
		return fmt.Errorf("%w: NSID %#x", ErrNotFound, nsid)
	}
	if _, err := c.a.Admin(ctx, nvmekv.Command{Opcode: opNSManagement, NSID: nsid, CDW10: 1}, nil); err != nil {
		return c.statusErr(fmt.Sprintf("delete namespace %d", nsid), err)
	}
	return nil
}

// Attach attaches namespace nsid to this controller (Controller List of
// its own CNTLID), or detaches it.
func (c *Controller) Attach(ctx context.Context, nsid uint32, attach bool) error {
	if err := c.needManagement(); err != nil {
		return err
	}
	d := make([]byte, nvmekv.IdentifyBytes)
	binary.LittleEndian.PutUint16(d, 1)
	binary.LittleEndian.PutUint16(d[2:], c.info.CNTLID)
	sel, what := uint32(0), "attach"
	if !attach {
		sel, what = 1, "detach"
	}
	if _, err := c.a.Admin(ctx, nvmekv.Command{Opcode: opNSAttachment, NSID: nsid, CDW10: sel}, d); err != nil {
		return c.statusErr(fmt.Sprintf("%s namespace %d", what, nsid), err)
	}
	return nil
}

// statusErr gives a Namespace Management or Attachment status its
// sentinel (NVMe Base Specification 2.0, Command Specific Status Values).
func (c *Controller) statusErr(what string, err error) error {
	var se *nvmekv.StatusError
	if errors.As(err, &se) {
		var sentinel error
		switch {
		case se.SCT == 0 && se.SC == nvmekv.SCInvalidOpcode:
			sentinel = ErrNoManagement
		case se.SCT == 1 && (se.SC == 0x15 || se.SC == 0x26):
			sentinel = ErrCapacity
		case se.SCT == 1 && se.SC == 0x29, se.SCT == 1 && se.SC == 0x2c:
			sentinel = ErrCommandSet
		case se.SCT == 0 && se.SC == 0x0b:
			sentinel = ErrNotFound
		}
		if sentinel != nil {
			return fmt.Errorf("nsadmin: %s on %s%s: %w: %w", what, c.info.SubNQN, c.where(), sentinel, err)
		}
	}
	return fmt.Errorf("nsadmin: %s on %s%s: %w", what, c.info.SubNQN, c.where(), err)
}

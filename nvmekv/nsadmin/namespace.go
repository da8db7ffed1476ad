package nsadmin

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"

	"github.com/tiercache/tiercache/nvmekv"
)

// Namespace is one namespace of the subsystem as this controller sees it.
type Namespace struct {
	NSID     uint32
	KV       bool     // its command set is KV (CSI 1)
	Size     uint64   // NSZE in bytes (KV namespaces)
	Used     uint64   // NUSE in bytes (KV namespaces)
	NGUID    [16]byte // zero when the controller gives none
	EUI64    [8]byte
	Attached bool // active for this controller
}

// ID is the namespace's identity across restarts and NSID changes:
// "nguid:<32 hex digits>", else "eui64:<16 hex digits>", else "" (then it
// cannot be recognized again).
func (n Namespace) ID() string {
	switch {
	case n.NGUID != [16]byte{}:
		return "nguid:" + hex.EncodeToString(n.NGUID[:])
	case n.EUI64 != [8]byte{}:
		return "eui64:" + hex.EncodeToString(n.EUI64[:])
	}
	return ""
}

// list reads an Identify namespace list (1024 NSIDs, ascending, ended by
// 0), paging after the last NSID of a full list.
func (c *Controller) list(ctx context.Context, cns, csi uint8) ([]uint32, error) {
	var ids []uint32
	after := uint32(0)
	for {
		b := make([]byte, nvmekv.IdentifyBytes)
		if _, err := c.a.Admin(ctx, nvmekv.EncodeIdentify(after, cns, 0, csi), b); err != nil {
			return nil, fmt.Errorf("nsadmin: namespace list (Identify CNS %#02x)%s: %w", cns, c.where(), err)
		}
		n := 0
		for ; n < 1024; n++ {
			id := binary.LittleEndian.Uint32(b[4*n:])
			if id == 0 {
				break
			}
			ids = append(ids, id)
		}
		if n < 1024 {
			return ids, nil
		}
		after = ids[len(ids)-1]
	}
}

// Namespaces lists the namespaces: every allocated one on a controller
// with Namespace Management, else the active ones.
func (c *Controller) Namespaces(ctx context.Context) ([]Namespace, error) {
	active, err := c.list(ctx, nvmekv.CNSActiveNSList, 0)
	if err != nil {
		return nil, err
	}
	all, kv := active, []uint32(nil)
	if c.info.NSManagement {
		if all, err = c.list(ctx, cnsAllocatedNSList, 0); err != nil {
			return nil, err
		}
		// A controller without I/O command sets (QEMU's NVMe, with
		// Namespace Management for NVM only) answers CNS 1Ah with Invalid
		// Field: its namespaces are told apart by their descriptors.
		if kv, err = c.list(ctx, cnsIOCSAllocatedNSList, nvmekv.CSIKV); err != nil && !invalidField(err) {
			return nil, err
		}
	}
	var out []Namespace
	for _, id := range all {
		n, err := c.describe(ctx, id, slices.Contains(active, id), slices.Contains(kv, id))
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// invalidField reports an Invalid Field in Command status.
func invalidField(err error) bool {
	var se *nvmekv.StatusError
	return errors.As(err, &se) && se.SCT == 0 && se.SC == nvmekv.SCInvalidField
}

// Namespace describes one allocated namespace.
func (c *Controller) Namespace(ctx context.Context, nsid uint32) (Namespace, error) {
	ns, err := c.Namespaces(ctx)
	if err != nil {
		return Namespace{}, err
	}
	for _, n := range ns {
		if n.NSID == nsid {
			return n, nil
		}
	}
	return Namespace{}, fmt.Errorf("%w: no namespace %d on %s%s", ErrNotFound, nsid, c.info.SubNQN, c.where())
}

// describe reads a namespace's identity: for an active one its
// descriptors (CNS 03h: CSI, NGUID, EUI-64) and, if KV, its KV data (CNS
// 05h); for an allocated inactive one the KV data of an allocated NSID
// (CNS 1Bh), when the KV list holds it.
func (c *Controller) describe(ctx context.Context, nsid uint32, active, kv bool) (Namespace, error) {
	n := Namespace{NSID: nsid, Attached: active, KV: kv}
	b := make([]byte, nvmekv.IdentifyBytes)
	if active {
		if _, err := c.a.Admin(ctx, nvmekv.EncodeIdentify(nsid, nvmekv.CNSNSDescriptorList, 0, 0), b); err != nil {
			return n, fmt.Errorf("nsadmin: namespace %d descriptors%s: %w", nsid, c.where(), err)
		}
		ds, err := nvmekv.ParseNSDescriptors(b)
		if err != nil {
			return n, err
		}
		n.KV = nvmekv.CSIFromDescriptors(ds) == nvmekv.CSIKV
		for _, d := range ds {
			switch {
			case d.Type == nvmekv.NIDTNGUID && len(d.ID) == 16:
				copy(n.NGUID[:], d.ID)
			case d.Type == nvmekv.NIDTEUI64 && len(d.ID) == 8:
				copy(n.EUI64[:], d.ID)
			}
		}
	}
	if !n.KV {
		return n, nil
	}
	cns := nvmekv.CNSIOCSNamespace
	if !active {
		cns = cnsIOCSAllocatedNS
	}
	clear(b)
	if _, err := c.a.Admin(ctx, nvmekv.EncodeIdentify(nsid, cns, 0, nvmekv.CSIKV), b); err != nil {
		return n, fmt.Errorf("nsadmin: KV data of namespace %d%s: %w", nsid, c.where(), err)
	}
	kvns, err := nvmekv.ParseKVNamespace(b)
	if err != nil {
		return n, err
	}
	n.Size, n.Used = kvns.Size, kvns.Utilization
	if n.NGUID == [16]byte{} {
		copy(n.NGUID[:], b[48:64]) // NGUID in the KV Identify Namespace data
	}
	if n.EUI64 == [8]byte{} {
		copy(n.EUI64[:], b[64:72])
	}
	return n, nil
}

// byID finds the allocated namespace whose identity is id.
func (c *Controller) byID(ctx context.Context, id string) (Namespace, error) {
	ns, err := c.Namespaces(ctx)
	if err != nil {
		return Namespace{}, err
	}
	for _, n := range ns {
		if n.ID() == id {
			return n, nil
		}
	}
	return Namespace{}, fmt.Errorf("%w: no namespace %s on %s%s", ErrNotFound, id, c.info.SubNQN, c.where())
}

package tcptarget

import (
	"encoding/binary"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/nvmekv"
)

// Namespace Management (admin opcode 0Dh) and Namespace Attachment (15h),
// NVMe Base Specification 2.0, Namespace Management and Namespace Attachment commands (include/linux/nvme.h
// nvme_admin_ns_mgmt, nvme_admin_ns_attach). Both select their operation
// in CDW10[3:0] (SEL); Namespace Management takes the command set in
// CDW11[31:24] (CSI) and, to create, the host software specified fields
// as 4096 bytes of data; Namespace Attachment takes a Controller List.
const (
	adminNSManagement = 0x0d
	adminNSAttachment = 0x15

	selCreate = 0 // Namespace Management: create
	selDelete = 1 // Namespace Management: delete
	selAttach = 0 // Namespace Attachment: attach the controllers
	selDetach = 1 // Namespace Attachment: detach them
)

// Host software specified fields of a KV namespace to create, at their
// offsets in the KV Identify Namespace data (KV Command Set Specification
// 1.0, Identify Namespace data structure; nvmekv.ParseKVNamespace): NSZE
// (bytes) at 0, NMIC at 26, KVFC (the KV format index, reserved in 1.0)
// at 29, ANAGRPID at 36, NVMSETID at 44, ENDGID at 46. NSZE is at the
// same place as in the NVM layout nvme-cli's create-ns sends.
const (
	hsNSZE     = 0
	hsNMIC     = 26
	hsKVFC     = 29
	hsANAGRPID = 36
	hsNVMSETID = 44
	hsENDGID   = 46
)

// nsManagement creates or deletes a namespace.
func (c *conn) nsManagement(cmd *command) (uint16, uint64) {
	nss := c.t.nss
	if nss.managed == nil {
		return scInvalidOpcode | scDNR, 0 // OACS bit 3 is clear
	}
	switch sel := cmd.cdw(10) & 0xf; sel {
	case selCreate:
		if csi := uint8(cmd.cdw(11) >> 24); csi != nvmekv.CSIKV {
			return scIOCSNotSupported | scDNR, 0 // this subsystem only has KV namespaces
		}
		d := cmd.data
		if len(d) != nvmekv.IdentifyBytes {
			return scInvalidField | scDNR, 0
		}
		le := binary.LittleEndian
		size := le.Uint64(d[hsNSZE:])
		switch {
		case size == 0 || size > 1<<62:
			return scInvalidField | scDNR, 0
		case d[hsNMIC]&1 != 0:
			return scInvalidField | scDNR, 0 // shared namespaces: CMIC says one controller per namespace
		case d[hsKVFC] != 0:
			return scInvalidFormat | scDNR, 0 // one KV format
		case le.Uint32(d[hsANAGRPID:]) != 0 || le.Uint16(d[hsNVMSETID:]) != 0 || le.Uint16(d[hsENDGID:]) != 0:
			return scInvalidField | scDNR, 0 // no ANA groups, NVM sets or endurance groups
		}
		nsid, st := nss.create(int64(size))
		if st != scSuccess {
			c.t.log.Info("tcptarget: namespace create refused", zap.String("host", c.ctrl.hostNQN), zap.Uint64("bytes", size), zap.Uint16("status", st))
			return st, 0
		}
		rec, _ := nss.lookup(nsid)
		c.t.log.Info("tcptarget: namespace created", zap.Uint32("nsid", nsid), zap.Int64("bytes", rec.Size), zap.String("host", c.ctrl.hostNQN))
		return scSuccess, uint64(nsid) // DW0: the NSID created
	case selDelete:
		nsid := cmd.nsid()
		if nsid == 0 || nsid > nss.maxNSID() && nsid != nsidAll {
			return scInvalidNS | scDNR, 0
		}
		hosts, st := nss.remove(nsid)
		if st != scSuccess {
			return st, 0
		}
		c.t.log.Info("tcptarget: namespace deleted", zap.Uint32("nsid", nsid), zap.String("host", c.ctrl.hostNQN))
		c.t.nsChanged(hosts, nsid)
		return scSuccess, 0
	default:
		return scInvalidField | scDNR, 0
	}
}

// nsAttachment attaches or detaches the controllers of a Controller List.
// A namespace is attached to a host: every controller that host connects
// sees it, including those it connects later (the dynamic controller
// model gives a host a new controller each time), so the attachment
// outlives the controller named in the list.
func (c *conn) nsAttachment(cmd *command) uint16 {
	nss := c.t.nss
	if nss.managed == nil {
		return scInvalidOpcode | scDNR
	}
	sel := cmd.cdw(10) & 0xf
	if sel != selAttach && sel != selDetach {
		return scInvalidField | scDNR
	}
	nsid := cmd.nsid()
	if nsid == 0 || nsid > nss.maxNSID() {
		return scInvalidNS | scDNR
	}
	d := cmd.data
	if len(d) < 2 {
		return scCtrlListInvalid | scDNR
	}
	n := int(binary.LittleEndian.Uint16(d))
	if n == 0 || n > 2047 || len(d) < 2+2*n {
		return scCtrlListInvalid | scDNR
	}
	host := ""
	for i := range n {
		ct := c.t.controller(binary.LittleEndian.Uint16(d[2+2*i:]))
		switch {
		case ct == nil:
			return scCtrlListInvalid | scDNR
		case host != "" && ct.hostNQN != host:
			return scNSIsPrivate | scDNR // two hosts for a private namespace
		}
		host = ct.hostNQN
	}
	if st := nss.attach(nsid, host, sel == selAttach); st != scSuccess {
		return st
	}
	c.t.log.Info("tcptarget: namespace attachment", zap.Uint32("nsid", nsid), zap.Bool("attached", sel == selAttach), zap.String("to", host), zap.String("by", c.ctrl.hostNQN))
	c.t.nsChanged([]string{host}, nsid)
	return scSuccess
}

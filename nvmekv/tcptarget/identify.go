package tcptarget

import (
	"encoding/binary"
	"slices"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/nvmetcp"
)

// Identify CNS values beyond nvmekv's (NVMe Base Specification 2.0,
// Identify command, CNS values; include/linux/nvme.h NVME_ID_CNS_*).
const (
	nsidKV                 = 1 // the fixed namespace of a target without Namespace Management
	nsidAll                = 0xffffffff
	cnsIOCSActiveNSList    = 0x07 // active namespaces of the command set in CDW11.CSI
	cnsAllocatedNSList     = 0x10
	cnsAllocatedNS         = 0x11 // Identify Namespace (NVM) of an allocated NSID
	cnsNSControllers       = 0x12 // controllers attached to NSID
	cnsControllers         = 0x13 // controllers of the NVM subsystem
	cnsIOCSAllocatedNSList = 0x1a
	cnsIOCSAllocatedNS     = 0x1b // I/O Command Set specific Identify Namespace of an allocated NSID
	cnsIOCSCombinations    = 0x1c // I/O Command Set data structure
)

// identify answers Identify (CNS at CDW10[7:0], CNTID at CDW10[31:16],
// CSI at CDW11[31:24]; NVMe Base Specification 2.0, Identify command).
// Every answer is 4096 bytes. An NSID no namespace has (up to NN) is
// inactive: its namespace data is zeros; a namespace is active for the
// controllers of the hosts it is attached to.
func (c *conn) identify(cmd *command) (uint16, []byte) {
	cns, cntid, csi, nsid := uint8(cmd.cdw(10)), uint16(cmd.cdw(10)>>16), uint8(cmd.cdw(11)>>24), cmd.nsid()
	if cmd.sgl.Len == 0 {
		return scSGLLengthInvalid | scDNR, nil
	}
	b := make([]byte, nvmekv.IdentifyBytes)
	nss, host := c.t.nss, c.ctrl.hostNQN
	valid := nsid >= 1 && nsid <= nss.maxNSID()
	rec, allocated := nss.lookup(nsid)
	active := allocated && (rec.AllHosts || slices.Contains(rec.Hosts, host))
	switch cns {
	case nvmekv.CNSController:
		c.identifyController(b)
	case nvmekv.CNSNamespace, cnsAllocatedNS:
		// NVM Identify Namespace: a KV namespace has none (Invalid I/O
		// Command Set); an inactive or unallocated NSID reads zeros.
		if nsid == nsidAll {
			break
		}
		if !valid {
			return scInvalidNS | scDNR, nil
		}
		if active || allocated && cns == cnsAllocatedNS {
			return scInvalidIOCS | scDNR, nil
		}
	case nvmekv.CNSActiveNSList, cnsIOCSActiveNSList, cnsAllocatedNSList, cnsIOCSAllocatedNSList:
		if nsid >= nsidAll-1 {
			return scInvalidNS | scDNR, nil
		}
		perCSI := cns == cnsIOCSActiveNSList || cns == cnsIOCSAllocatedNSList
		if perCSI && csi != nvmekv.CSIKV {
			if csi != nvmekv.CSINVM {
				return scInvalidField | scDNR, nil
			}
			break // no NVM namespaces
		}
		for i, id := range nss.list(nsid, host, cns == cnsAllocatedNSList || cns == cnsIOCSAllocatedNSList) {
			if i == 1024 {
				break
			}
			binary.LittleEndian.PutUint32(b[4*i:], id)
		}
	case nvmekv.CNSNSDescriptorList:
		if !active {
			return scInvalidNS | scDNR, nil
		}
		putNSDescriptors(b, &rec)
	case nvmekv.CNSIOCSNamespace, cnsIOCSAllocatedNS:
		if !valid {
			return scInvalidNS | scDNR, nil
		}
		if csi != nvmekv.CSIKV {
			if allocated {
				return scInvalidIOCS | scDNR, nil // the namespace is not of that command set
			}
			return scInvalidField | scDNR, nil
		}
		if active || allocated && cns == cnsIOCSAllocatedNS {
			c.kvNamespace(b, &rec)
		}
	case nvmekv.CNSIOCSController:
		// NVM (CSI 0): zeros, no NVM-specific limits (the 6.1 host asks at
		// every scan, nvme_init_non_mdts_limits). KV (CSI 1): the KV
		// controller data has no field this target sets.
		if csi != nvmekv.CSINVM && csi != nvmekv.CSIKV {
			return scInvalidField | scDNR, nil
		}
	case nvmekv.CNSIndependentNS:
		if !valid {
			return scInvalidNS | scDNR, nil
		}
		if active {
			// struct nvme_id_ns_cs_indep: NSTAT at byte 14, bit 0 = namespace
			// ready; without it the host ignores the namespace
			// (nvme_ns_info_from_id_cs_indep, info->is_ready).
			b[14] = 0x01
		}
	case cnsNSControllers:
		if !allocated {
			return scInvalidNS | scDNR, nil
		}
		putControllerList(b, c.t.controllerIDs(cntid, func(h string) bool { return rec.AllHosts || slices.Contains(rec.Hosts, h) }))
	case cnsControllers:
		putControllerList(b, c.t.controllerIDs(cntid, func(string) bool { return true }))
	case cnsIOCSCombinations:
		// I/O Command Set data structure: 512 vectors of 8 bytes; vector 0
		// = NVM (bit 0) and KV (bit 1) together.
		binary.LittleEndian.PutUint64(b, 1<<nvmekv.CSINVM|1<<nvmekv.CSIKV)
	default:
		return scInvalidField | scDNR, nil
	}
	return scSuccess, b
}

// putControllerList writes a Controller List (NVMe Base Specification 2.0,
// Controller List: the number of identifiers, u16, then that many u16
// controller identifiers, ascending; at most 2047).
func putControllerList(b []byte, ids []uint16) {
	ids = ids[:min(len(ids), 2047)]
	binary.LittleEndian.PutUint16(b, uint16(len(ids)))
	for i, id := range ids {
		binary.LittleEndian.PutUint16(b[2+2*i:], id)
	}
}

// Identify Controller bits of Namespace Management (NVMe Base
// Specification 2.0, Identify Controller data structure).
const (
	oacsNSManagement = 1 << 3 // OACS: Namespace Management and Attachment supported
	oaesNSAttribute  = 1 << 8 // OAES: Namespace Attribute Notices
)

// identifyController fills Identify Controller data (NVMe Base
// Specification, Identify Controller Data Structure, and the Fabrics
// fields at 1792; struct nvme_id_ctrl, with the values the Linux host
// checks in drivers/nvme/host/core.c nvme_init_identify and
// drivers/nvme/host/fabrics.c).
func (c *conn) identifyController(b []byte) {
	o, le := &c.t.opts, binary.LittleEndian
	pad := func(dst []byte, s string) {
		for i := range dst {
			dst[i] = ' '
		}
		copy(dst, s)
	}
	pad(b[4:24], o.Serial)
	pad(b[24:64], o.Model)
	pad(b[64:72], "1.0")
	b[76] = 0 // CMIC: one port; namespaces are private to one host
	b[77] = o.mdts()
	le.PutUint16(b[78:], c.ctrl.id)
	le.PutUint32(b[80:], versionValue)
	// CTRATT 0. OAES: Namespace Attribute Notices where namespaces change
	// (Namespace Management); the host then enables them and keeps an
	// Asynchronous Event Request outstanding (nvme_enable_aen).
	managed := c.t.nss.managed != nil
	if managed {
		le.PutUint32(b[92:], oaesNSAttribute)
	}
	b[111] = 1 // CNTRLTYPE: I/O controller
	if managed {
		le.PutUint16(b[256:], oacsNSManagement) // OACS
	}
	b[258] = 3 // ACL: Abort Command Limit (0's based)
	b[259] = aerLimit - 1
	b[261] = 0x02 // LPA bit 1: Commands Supported and Effects log
	b[262] = 0    // ELPE: one Error Information entry (0's based)
	if total, free := c.t.nss.capacity(); managed {
		le.PutUint64(b[280:], uint64(total)) // TNVMCAP (u128, bytes)
		le.PutUint64(b[296:], uint64(free))  // UNVMCAP (u128, bytes)
	}
	le.PutUint16(b[320:], 10)                       // KAS: keep-alive granularity 100 ms × 10 (nvmet NVMET_KAS); fabrics need it ≠ 0
	b[512] = 0x66                                   // SQES: 64-byte entries
	b[513] = 0x44                                   // CQES: 16-byte entries
	le.PutUint16(b[514:], uint16(o.QueueEntries))   // MAXCMD (the 6.1 host clamps sqsize to MAXCMD-1)
	le.PutUint32(b[516:], c.t.nss.maxNSID())        // NN
	le.PutUint32(b[536:], 0x00100001)               // SGLS: SGLs supported (no alignment), SGL Offset (bit 20)
	copy(b[768:768+nvmetcp.NQNFieldBytes-1], o.NQN) // SUBNQN
	le.PutUint32(b[1792:], o.ioccsz())              // IOCCSZ
	le.PutUint32(b[1796:], nvmetcp.CQEBytes/16)     // IORCSZ: responses carry only the CQE
	le.PutUint16(b[1800:], 0)                       // ICDOFF 0: in-capsule data right after the SQE
	b[1802] = 0                                     // FCATT: dynamic controller model
	b[1803] = 1                                     // MSDBD: one SGL data block descriptor
}

// putNSDescriptors fills the Namespace Identification Descriptor list: the
// NGUID (managed namespaces), a UUID unique to subsystem and namespace
// (6.1 nvme_init_ns_head rejects duplicate IDs) and the CSI descriptor
// saying KV (NIDT 4, NIDL 1), which a host in multi-command-set mode
// requires (nvme_identify_ns_descs).
func putNSDescriptors(b []byte, r *nsRecord) {
	off := 0
	put := func(t uint8, id []byte) {
		b[off], b[off+1] = t, uint8(len(id))
		copy(b[off+4:], id)
		off += 4 + len(id)
	}
	if r.NGUID != (hexID16{}) {
		put(nvmekv.NIDTNGUID, r.NGUID[:])
	}
	put(nvmekv.NIDTUUID, r.UUID[:])
	put(nvmekv.NIDTCSI, []byte{nvmekv.CSIKV})
}

// kvNamespace fills the KV Identify Namespace data (CNS 05h/1Bh, CSI 1)
// with one KV format: 16-byte keys, MaxValueBytes values; NSZE is the
// namespace's size, NGUID its identifier.
func (c *conn) kvNamespace(b []byte, r *nsRecord) {
	e, release := c.t.nss.acquire(r.NSID, "", true)
	if e == nil {
		return
	}
	lim := e.ns.Limits()
	release()
	n := nvmekv.KVNamespace{Size: uint64(r.Size), Utilization: lim.Utilization,
		Formats: []nvmekv.KVFormat{{MaxKeyLen: nvmekv.MaxKeyLen, MaxValueLen: uint32(c.t.opts.MaxValueBytes), MaxKeys: uint32(min(lim.MaxKeys, 1<<32-1))}}}
	nvmekv.PutKVNamespace(b, &n)
	copy(b[48:64], r.NGUID[:]) // NGUID
}

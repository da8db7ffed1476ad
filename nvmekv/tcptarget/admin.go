package tcptarget

import (
	"encoding/binary"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/nvmetcp"
)

// Admin opcodes (NVMe Base Specification, Admin Command Set;
// include/linux/nvme.h enum nvme_admin_opcode).
const (
	adminGetLogPage  = 0x02
	adminIdentify    = 0x06
	adminAbort       = 0x08
	adminSetFeatures = 0x09
	adminGetFeatures = 0x0a
	adminAER         = 0x0c
	adminKeepAlive   = 0x18

	aerLimit = 4 // AERL+1 held Asynchronous Event Requests
)

// Feature identifiers (NVMe Base Specification, Feature Identifiers;
// include/linux/nvme.h NVME_FEAT_*).
const (
	featNumQueues = 0x07
	featAsyncEvt  = 0x0b
	featKATO      = 0x0f
	featIOCSProf  = 0x19 // I/O Command Set Profile
	// featKVConfig is the KV Command Set's Key Value Configuration
	// feature. CDW11 bit 0 is EDNEK, Error on Delete of Non-Existent Key:
	// set, a Delete of a missing key completes with KV Key Does Not Exist
	// (87h); clear, it completes successfully. Bits 31:1 are reserved.
	// (NVMe Key Value Command Set Specification 1.0, Set Features, Key
	// Value Configuration; libnvme names FID 20h NVME_FEAT_FID_KEY_VALUE.)
	featKVConfig  = 0x20
	kvConfigEDNEK = 1 << 0
	// kvConfigDefault: EDNEK set, what the namespace does on its own (the
	// kvconform suite's Delete of a missing key expects 87h).
	kvConfigDefault = kvConfigEDNEK
)

// admin executes an admin command on the admin queue.
func (c *conn) admin(cmd *command) {
	ct := c.ctrl
	ct.armKeepAlive()
	op := cmd.opcode()
	if !ct.ready() && op != adminKeepAlive {
		c.respond(cmd, scCmdSeqError|scDNR, 0, nil) // the host enables the controller (CC.EN) first
		return
	}
	switch op {
	case adminIdentify:
		st, data := c.identify(cmd)
		c.respond(cmd, st, 0, fit(data, cmd.sgl.Len, st))
	case adminGetLogPage:
		st, data := c.getLogPage(cmd)
		c.respond(cmd, st, 0, fit(data, cmd.sgl.Len, st))
	case adminSetFeatures:
		st, dw0 := c.setFeatures(cmd)
		c.respond(cmd, st, dw0, nil)
	case adminGetFeatures:
		st, dw0 := c.getFeatures(cmd)
		c.respond(cmd, st, dw0, nil)
	case adminKeepAlive:
		c.respond(cmd, scSuccess, 0, nil)
	case adminAbort:
		c.respond(cmd, scSuccess, 1, nil) // DW0 bit 0: the command was not aborted
	case adminAER:
		// Held: no event is ever reported (OAES 0), so it completes only
		// when the controller goes away. It keeps its in-flight slot.
		ct.mu.Lock()
		held := ct.aers
		if held < aerLimit {
			ct.aers++
		}
		ct.mu.Unlock()
		if held >= aerLimit {
			c.respond(cmd, 0x105|scDNR, 0, nil) // Asynchronous Event Request Limit Exceeded
		}
	default:
		c.respond(cmd, scInvalidOpcode|scDNR, 0, nil)
	}
}

// fit trims data to the host's buffer (the SGL length); nothing on error.
func fit(data []byte, n uint32, st uint16) []byte {
	if st != scSuccess {
		return nil
	}
	if int(n) < len(data) {
		return data[:n]
	}
	return data
}

// identify answers Identify (CNS at CDW10[7:0], CNTID at CDW10[31:16],
// CSI at CDW11[31:24]; NVMe Base Specification, Identify command, CNS
// values). Every answer is 4096 bytes.
func (c *conn) identify(cmd *command) (uint16, []byte) {
	cns, csi, nsid := uint8(cmd.cdw(10)), uint8(cmd.cdw(11)>>24), cmd.nsid()
	if cmd.sgl.Len == 0 {
		return scSGLLengthInvalid | scDNR, nil
	}
	b := make([]byte, nvmekv.IdentifyBytes)
	ours := nsid == nsidKV
	switch cns {
	case nvmekv.CNSController:
		c.identifyController(b)
	case nvmekv.CNSNamespace: // NVM Identify Namespace: zeros for a namespace of another command set
		if !ours && nsid != nsidAll {
			return scInvalidNS | scDNR, nil
		}
	case nvmekv.CNSActiveNSList, cnsIOCSActiveNSList:
		if nsid >= nsidAll-1 {
			return scInvalidNS | scDNR, nil
		}
		if cns == cnsIOCSActiveNSList && csi != nvmekv.CSIKV {
			if csi != nvmekv.CSINVM {
				return scInvalidField | scDNR, nil
			}
			break // no NVM namespaces
		}
		if nsid < nsidKV {
			binary.LittleEndian.PutUint32(b, nsidKV)
		}
	case nvmekv.CNSNSDescriptorList:
		if !ours {
			return scInvalidNS | scDNR, nil
		}
		c.nsDescriptors(b)
	case nvmekv.CNSIOCSNamespace:
		if !ours {
			return scInvalidNS | scDNR, nil
		}
		if csi != nvmekv.CSIKV {
			return scInvalidField | scDNR, nil // the namespace is not of that command set
		}
		c.kvNamespace(b)
	case nvmekv.CNSIOCSController:
		// NVM (CSI 0): zeros, no NVM-specific limits (the 6.1 host asks at
		// every scan, nvme_init_non_mdts_limits). KV (CSI 1): the KV
		// controller data has no field this target sets.
		if csi != nvmekv.CSINVM && csi != nvmekv.CSIKV {
			return scInvalidField | scDNR, nil
		}
	case nvmekv.CNSIndependentNS:
		if !ours {
			return scInvalidNS | scDNR, nil
		}
		// struct nvme_id_ns_cs_indep: NSTAT at byte 14, bit 0 = namespace
		// ready; without it the host ignores the namespace
		// (nvme_ns_info_from_id_cs_indep, info->is_ready).
		b[14] = 0x01
	case cnsIOCSCombinations:
		// I/O Command Set data structure: 512 vectors of 8 bytes; vector 0
		// = NVM (bit 0) and KV (bit 1) together.
		binary.LittleEndian.PutUint64(b, 1<<nvmekv.CSINVM|1<<nvmekv.CSIKV)
	default:
		return scInvalidField | scDNR, nil
	}
	return scSuccess, b
}

const (
	nsidKV              = 1
	nsidAll             = 0xffffffff
	cnsIOCSActiveNSList = 0x07 // active namespaces of the command set in CDW11.CSI
	cnsIOCSCombinations = 0x1c // I/O Command Set data structure
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
	b[73] = 0 // CMIC: one port, one controller per host association
	b[77] = o.mdts()
	le.PutUint16(b[78:], c.ctrl.id)
	le.PutUint32(b[80:], versionValue)
	// OAES 0 (no events, so the host sends no AER), CTRATT 0.
	b[111] = 1 // CNTRLTYPE: I/O controller
	b[258] = 3 // ACL: Abort Command Limit (0's based)
	b[259] = aerLimit - 1
	b[261] = 0x02                                   // LPA bit 1: Commands Supported and Effects log
	b[262] = 0                                      // ELPE: one Error Information entry (0's based)
	le.PutUint16(b[320:], 10)                       // KAS: keep-alive granularity 100 ms × 10 (nvmet NVMET_KAS); fabrics need it ≠ 0
	b[512] = 0x66                                   // SQES: 64-byte entries
	b[513] = 0x44                                   // CQES: 16-byte entries
	le.PutUint16(b[514:], uint16(o.QueueEntries))   // MAXCMD (the 6.1 host clamps sqsize to MAXCMD-1)
	le.PutUint32(b[516:], nsidKV)                   // NN
	le.PutUint32(b[536:], 0x00100001)               // SGLS: SGLs supported (no alignment), SGL Offset (bit 20)
	copy(b[768:768+nvmetcp.NQNFieldBytes-1], o.NQN) // SUBNQN
	le.PutUint32(b[1792:], o.ioccsz())              // IOCCSZ
	le.PutUint32(b[1796:], nvmetcp.CQEBytes/16)     // IORCSZ: responses carry only the CQE
	le.PutUint16(b[1800:], 0)                       // ICDOFF 0: in-capsule data right after the SQE
	b[1802] = 0                                     // FCATT: dynamic controller model
	b[1803] = 1                                     // MSDBD: one SGL data block descriptor
}

// nsDescriptors fills the Namespace Identification Descriptor list: a
// UUID unique to subsystem and namespace (6.1 nvme_init_ns_head rejects
// duplicate IDs) and the CSI descriptor saying KV (NIDT 4, NIDL 1), which
// a host in multi-command-set mode requires (nvme_identify_ns_descs).
func (c *conn) nsDescriptors(b []byte) {
	u := nsUUID(c.t.opts.NQN, nsidKV)
	b[0], b[1] = nvmekv.NIDTUUID, 16
	copy(b[4:20], u[:])
	b[20], b[21] = nvmekv.NIDTCSI, 1
	b[24] = nvmekv.CSIKV
}

// kvNamespace fills the KV Identify Namespace data (CNS 05h, CSI 1) with
// one KV format: 16-byte keys, MaxValueBytes values.
func (c *conn) kvNamespace(b []byte) {
	lim := c.t.opts.Namespace.Limits()
	n := nvmekv.KVNamespace{Size: lim.Capacity, Utilization: lim.Utilization,
		Formats: []nvmekv.KVFormat{{MaxKeyLen: nvmekv.MaxKeyLen, MaxValueLen: uint32(c.t.opts.MaxValueBytes), MaxKeys: uint32(min(lim.MaxKeys, 1<<32-1))}}}
	nvmekv.PutKVNamespace(b, &n)
	u := nsUUID(c.t.opts.NQN, nsidKV)
	copy(b[48:64], u[:]) // NGUID
}

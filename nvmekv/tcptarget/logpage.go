package tcptarget

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/tiercache/tiercache/nvmekv"
)

// Log page identifiers (NVMe Base Specification, Log Page Identifiers;
// include/linux/nvme.h NVME_LOG_*).
const (
	logError     = 0x01
	logSMART     = 0x02
	logChangedNS = 0x04
	logEffects   = 0x05
)

// Commands Supported and Effects entry bits (NVMe Base Specification,
// Commands Supported and Effects Data Structure; NVME_CMD_EFFECTS_*):
// CSUPP bit 0, LBCC bit 1 (the command may change the namespace's
// content), NIC bit 3. No I/O command has anything beyond CSUPP|LBCC, so
// the host does not print "unusual effects"
// (drivers/nvme/host/core.c nvme_command_effects).
const (
	effCSUPP = 1 << 0
	effLBCC  = 1 << 1
	effNIC   = 1 << 3 // Namespace Inventory Change
)

// getLogPage answers Get Log Page (LID at CDW10[7:0], NUMDL CDW10[31:16],
// NUMDU CDW11[15:0], LPOL/LPOU CDW12/13, CSI CDW14[31:24]): the page from
// byte offset LPO, (NUMD+1)·4 bytes.
func (c *conn) getLogPage(cmd *command) (uint16, []byte) {
	lid, csi := uint8(cmd.cdw(10)), uint8(cmd.cdw(14)>>24)
	numd := uint64(cmd.cdw(10)>>16) | uint64(cmd.cdw(11)&0xffff)<<16
	n := (numd + 1) * 4
	off := uint64(cmd.cdw(12)) | uint64(cmd.cdw(13))<<32
	if n > uint64(cmd.sgl.Len) || off%4 != 0 {
		return scInvalidField | scDNR, nil
	}
	var page []byte
	switch lid {
	case logError:
		page = make([]byte, 64) // one empty Error Information entry (ELPE 0)
	case logSMART:
		page = c.smart()
	case logChangedNS:
		page = c.ctrl.changedNSLog(cmd.cdw(10)&(1<<15) != 0)
	case logEffects:
		var ok bool
		if page, ok = effects(csi, c.t.nss.managed != nil); !ok {
			return scInvalidField | scDNR, nil
		}
	default:
		return scInvalidLogPage | scDNR, nil
	}
	out := make([]byte, n)
	if off < uint64(len(page)) {
		copy(out, page[off:])
	}
	return scSuccess, out
}

// effects is the Commands Supported and Effects log for command set csi:
// ACS (admin, u32 × 256 at 0) and IOCS (I/O, u32 × 256 at 1024). For CSI 1
// it lists the KV commands; the Linux host reads it for every namespace
// of a CSI other than NVM and drops the namespace if that fails
// (nvme_alloc_ns_head → nvme_get_effects_log).
func effects(csi uint8, managed bool) ([]byte, bool) {
	if csi != nvmekv.CSINVM && csi != nvmekv.CSIKV {
		return nil, false
	}
	b := make([]byte, 4096)
	le := binary.LittleEndian
	for _, op := range []uint8{adminGetLogPage, adminIdentify, adminAbort, adminSetFeatures, adminGetFeatures, adminAER, adminKeepAlive} {
		le.PutUint32(b[4*int(op):], effCSUPP)
	}
	if managed {
		// NIC: the command may change the namespace inventory; the Linux
		// host rescans after passing one through (nvme_passthru_end).
		le.PutUint32(b[4*adminNSManagement:], effCSUPP|effNIC)
		le.PutUint32(b[4*adminNSAttachment:], effCSUPP|effNIC)
	}
	if csi == nvmekv.CSIKV {
		for op, e := range map[nvmekv.Opcode]uint32{
			nvmekv.OpFlush: effCSUPP, nvmekv.OpStore: effCSUPP | effLBCC, nvmekv.OpRetrieve: effCSUPP,
			nvmekv.OpList: effCSUPP, nvmekv.OpDelete: effCSUPP | effLBCC, nvmekv.OpExist: effCSUPP,
		} {
			le.PutUint32(b[1024+4*int(op):], e)
		}
	}
	return b, true
}

// smart is the SMART / Health Information log (512 bytes): composite
// temperature 293 K at byte 1, available spare 100% at 3 (threshold 10%
// at 4), host read and write commands (u128) at 64 and 80.
func (c *conn) smart() []byte {
	b := make([]byte, 512)
	le := binary.LittleEndian
	le.PutUint16(b[1:], 293)
	b[3], b[4] = 100, 10
	le.PutUint64(b[64:], c.t.st.reads.Load())
	le.PutUint64(b[80:], c.t.st.writes.Load())
	return b
}

// nsUUID is a stable RFC 9562 version 8 UUID for namespace nsid of the
// subsystem nqn.
func nsUUID(nqn string, nsid uint32) [16]byte {
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], nsid)
	s := sha256.Sum256(append([]byte(nqn+"\x00"), n[:]...))
	var u [16]byte
	copy(u[:], s[:16])
	u[6] = u[6]&0x0f | 0x80
	u[8] = u[8]&0x3f | 0x80
	return u
}

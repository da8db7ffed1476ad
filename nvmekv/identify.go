package nvmekv

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// Admin Identify (opcode 0x06): CDW10[7:0] = CNS, CDW10[31:16] = CNTID,
// CDW11[31:24] = CSI; the data is always 4096 bytes (NVMe Base
// Specification, Identify command; KV Command Set 1.0, §4.1.5, Figure 35;
// SPDK cdw11.identify).
const (
	AdminOpIdentify uint8 = 0x06

	CNSNamespace        uint8 = 0x00 // Identify Namespace (NVM)
	CNSController       uint8 = 0x01 // Identify Controller
	CNSActiveNSList     uint8 = 0x02
	CNSNSDescriptorList uint8 = 0x03 // Namespace Identification Descriptor list (carries the CSI)
	CNSIOCSNamespace    uint8 = 0x05 // I/O Command Set specific Namespace (CSI in CDW11)
	CNSIOCSController   uint8 = 0x06 // I/O Command Set specific Controller
	CNSIndependentNS    uint8 = 0x08 // I/O Command Set Independent Namespace
	IdentifyBytes             = 4096

	CSINVM uint8 = 0x00
	CSIKV  uint8 = 0x01
	CSIZNS uint8 = 0x02

	// Namespace Identification Descriptor types (NIDT).
	NIDTEUI64 uint8 = 0x01
	NIDTNGUID uint8 = 0x02
	NIDTUUID  uint8 = 0x03
	NIDTCSI   uint8 = 0x04
)

// EncodeIdentify builds an admin Identify command.
func EncodeIdentify(nsid uint32, cns uint8, cntid uint16, csi uint8) Command {
	return Command{Opcode: AdminOpIdentify, NSID: nsid, CDW10: uint32(cns) | uint32(cntid)<<16, CDW11: uint32(csi) << 24}
}

// NSDescriptor is one Namespace Identification Descriptor.
type NSDescriptor struct {
	Type uint8
	ID   []byte // aliases the parsed buffer
}

// ParseNSDescriptors parses the 4096-byte CNS 03h data: {NIDT u8, NIDL u8,
// rsvd u16, NID[NIDL]} repeated, ended by NIDT 0. Entries that run past the
// buffer end the parse with ErrShortBuffer (with what was parsed so far).
func ParseNSDescriptors(b []byte) ([]NSDescriptor, error) {
	var out []NSDescriptor
	for off := 0; off+4 <= len(b); {
		t, l := b[off], int(b[off+1])
		if t == 0 {
			return out, nil
		}
		if off+4+l > len(b) {
			return out, fmt.Errorf("%w: namespace descriptor at byte %d (type %d, length %d) runs past the %d-byte buffer", ErrShortBuffer, off, t, l, len(b))
		}
		out = append(out, NSDescriptor{Type: t, ID: b[off+4 : off+4+l]})
		off += 4 + l
	}
	return out, nil
}

// CSIFromDescriptors returns the Command Set Identifier of a descriptor
// list. A controller that reports no CSI descriptor predates I/O command
// sets and its namespaces are NVM (CSI 0).
func CSIFromDescriptors(ds []NSDescriptor) uint8 {
	for _, d := range ds {
		if d.Type == NIDTCSI && len(d.ID) >= 1 {
			return d.ID[0]
		}
	}
	return CSINVM
}

// KVFormat is one KV Format descriptor (16 bytes at 72+16i of the KV
// Identify Namespace data; SPDK "Figure 42", xNVMe "Figure 40").
type KVFormat struct {
	MaxKeyLen   uint16 // KVKML (≤ 16)
	AFO         uint8  // additional format options (bits 1:0 relative performance)
	MaxValueLen uint32 // KVVML, bytes
	MaxKeys     uint32 // MNKS, 0 = no maximum indicated
}

// KVNamespace is the parsed KV Identify Namespace data (CNS 05h, CSI 1).
type KVNamespace struct {
	Size        uint64 // NSZE, bytes
	Utilization uint64 // NUSE, bytes
	NSFeat      uint8
	NKVF        uint8 // number of KV formats, 0's based (SPDK)
	KVFC        uint8 // bits 3:0 = format in use (spec 1.3; reserved in 1.0c)
	NOVG        uint32
	Formats     []KVFormat
}

// Format returns the KV format in use (KVFC[3:0], 0 when absent).
func (n *KVNamespace) Format() KVFormat {
	i := int(n.KVFC & 0xf)
	if i < len(n.Formats) {
		return n.Formats[i]
	}
	if len(n.Formats) > 0 {
		return n.Formats[0]
	}
	return KVFormat{}
}

// ParseKVNamespace parses the 4096-byte KV Identify Namespace data (KV
// Command Set 1.0, §4.1.5.1, Figures 36–37; xNVMe struct
// xnvme_spec_kvs_idfy_ns). KVFC at byte 29 is SPDK's, for a later revision;
// 1.0 reserves that byte.
func ParseKVNamespace(b []byte) (KVNamespace, error) {
	if len(b) < 72+16 {
		return KVNamespace{}, fmt.Errorf("%w: KV identify namespace data is %d bytes, need at least 88", ErrShortBuffer, len(b))
	}
	le := binary.LittleEndian
	n := KVNamespace{Size: le.Uint64(b[0:]), Utilization: le.Uint64(b[16:]), NSFeat: b[24], NKVF: b[25], KVFC: b[29], NOVG: le.Uint32(b[32:])}
	count := int(n.NKVF) + 1
	if count > 16 {
		count = 16
	}
	for i := 0; i < count && 72+16*(i+1) <= len(b); i++ {
		f := b[72+16*i:]
		n.Formats = append(n.Formats, KVFormat{MaxKeyLen: le.Uint16(f[0:]), AFO: f[3], MaxValueLen: le.Uint32(f[4:]), MaxKeys: le.Uint32(f[8:])})
	}
	return n, nil
}

// PutKVNamespace is the inverse of ParseKVNamespace (the emulated controller
// answers Identify with it).
func PutKVNamespace(b []byte, n *KVNamespace) {
	le := binary.LittleEndian
	le.PutUint64(b[0:], n.Size)
	le.PutUint64(b[16:], n.Utilization)
	b[24], b[25], b[29] = n.NSFeat, n.NKVF, n.KVFC
	le.PutUint32(b[32:], n.NOVG)
	for i, f := range n.Formats {
		if i == 16 {
			break
		}
		d := b[72+16*i:]
		le.PutUint16(d[0:], f.MaxKeyLen)
		d[3] = f.AFO
		le.PutUint32(d[4:], f.MaxValueLen)
		le.PutUint32(d[8:], f.MaxKeys)
	}
}

// Controller is the part of Identify Controller (CNS 01h) the tests print.
type Controller struct {
	VID, SSVID uint16
	Serial     string // SN, bytes 4..23
	Model      string // MN, bytes 24..63
	Firmware   string // FR, bytes 64..71
	CNTLID     uint16 // byte 78
	Version    uint32 // VER, byte 80
	NN         uint32 // number of namespaces, byte 516
	MDTS       uint8  // byte 77: largest transfer, 2^MDTS units of CAP.MPSMIN (0 = no limit)
	CTRATT     uint32 // bytes 96..99: controller attributes (bit 15 = extended LBA formats, CNS 05h/CSI 0 answers)
	ONCS       uint16 // bytes 520..521: optional NVM commands supported (bit 2 = Dataset Management)
}

// CtrattELBAS is CTRATT bit 15, Extended LBA Formats Supported: the
// controller answers Identify CNS 05h for the NVM command set (NVMe Base
// Specification, Identify Controller; Linux include/linux/nvme.h
// NVME_CTRL_ATTR_ELBAS).
const CtrattELBAS = 1 << 15

// ParseController parses Identify Controller data (NVMe base spec figure "Identify Controller Data Structure").
func ParseController(b []byte) (Controller, error) {
	if len(b) < 520 {
		return Controller{}, fmt.Errorf("%w: identify controller data is %d bytes, need 520", ErrShortBuffer, len(b))
	}
	le := binary.LittleEndian
	var oncs uint16
	if len(b) >= 522 {
		oncs = le.Uint16(b[520:])
	}
	return Controller{ONCS: oncs, CTRATT: le.Uint32(b[96:]),
		VID: le.Uint16(b[0:]), SSVID: le.Uint16(b[2:]),
		Serial:   trimID(b[4:24]),
		Model:    trimID(b[24:64]),
		Firmware: trimID(b[64:72]),
		MDTS:     b[77], CNTLID: le.Uint16(b[78:]), Version: le.Uint32(b[80:]), NN: le.Uint32(b[516:]),
	}, nil
}

// NVMNamespace is the part of the NVM Identify Namespace (CNS 00h) used by
// the raw read/write helpers.
type NVMNamespace struct {
	NSZE, NCAP, NUSE uint64 // logical blocks
	FLBAS            uint8  // byte 26: bits 3:0 (and 6:5) = LBA format index
	DLFEAT           uint8  // byte 33: bits 2:0 = 001b: a deallocated block reads as zeros
	NLBAF            uint8  // byte 25: 0's based
	DPS              uint8  // byte 29: bits 2:0 = protection information type enabled (0 = none)
	NSATTR           uint8  // byte 99: bit 0 = the namespace is write protected
	BlockBytes       uint32 // 1 << LBADS of the format in use
	MetadataBytes    uint16 // MS of the format in use: metadata bytes per block (0 = none)
	LBAF             int    // index of the format in use
}

// ParseNVMNamespace parses Identify Namespace (NVM) data; LBA formats are
// 4 bytes each at 128 (MS u16, LBADS u8, RP u8; NVM Command Set
// Specification, Identify Namespace data structure, LBA Format Data
// Structure). The format in use is FLBAS bits 3:0, with bits 6:5 as its
// high bits when there are more than 16 formats.
func ParseNVMNamespace(b []byte) (NVMNamespace, error) {
	if len(b) < 192 {
		return NVMNamespace{}, fmt.Errorf("%w: identify namespace data is %d bytes, need 192", ErrShortBuffer, len(b))
	}
	le := binary.LittleEndian
	n := NVMNamespace{NSZE: le.Uint64(b[0:]), NCAP: le.Uint64(b[8:]), NUSE: le.Uint64(b[16:]), NLBAF: b[25], FLBAS: b[26],
		DPS: b[29], DLFEAT: b[33], NSATTR: b[99]}
	idx := int(n.FLBAS&0xf) | int(n.FLBAS>>5&0x3)<<4
	n.LBAF = idx
	if 128+4*idx+4 <= len(b) {
		n.MetadataBytes = le.Uint16(b[128+4*idx:])
		lbads := b[128+4*idx+2]
		if lbads >= 9 && lbads < 32 {
			n.BlockBytes = 1 << lbads
		}
	}
	return n, nil
}

// ExtendedLBA reports FLBAS bit 4: the format's metadata is transferred
// at the end of each logical block's data (an extended LBA), not in a
// separate buffer.
func (n *NVMNamespace) ExtendedLBA() bool { return n.FLBAS&0x10 != 0 }

// WriteProtected reports NSATTR bit 0.
func (n *NVMNamespace) WriteProtected() bool { return n.NSATTR&1 != 0 }

// trimID trims the space (or NUL) padding of an ASCII identify field.
func trimID(b []byte) string { return strings.TrimRight(string(b), " \x00") }

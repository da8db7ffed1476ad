package nvmekv

import (
	"encoding/binary"
	"fmt"
)

// NVMNamespaceIOCS is the I/O Command Set specific Identify Namespace data
// of the NVM command set (Identify CNS 05h with CSI 00h; NVM Express NVM
// Command Set Specification, "I/O Command Set Specific Identify Namespace
// Data Structure", and its Extended LBA Format Data Structure; Linux
// include/linux/nvme.h struct nvme_id_ns_nvm). A controller answers it when
// Identify Controller CTRATT has CtrattELBAS.
type NVMNamespaceIOCS struct {
	LBSTM uint64     // bytes 0..7: Logical Block Storage Tag Mask
	PIC   uint8      // byte 8: Protection Information Capabilities
	ELBAF [64]uint32 // bytes 12..267: Extended LBA Format n, one per LBA format of CNS 00h
}

// ELBAF field layout: bits 6:0 Storage Tag Size (STS, bits of the storage
// tag in the protection information), bits 8:7 Protection Information
// Format (PIF: 00b 16b Guard, 01b 32b Guard, 10b 64b Guard).
const (
	elbafSTSMask  = 0x7f
	elbafPIFShift = 7
	elbafPIFMask  = 0x3
)

// StorageTagBits is the STS of LBA format i (0 = no storage tag).
func (n *NVMNamespaceIOCS) StorageTagBits(i int) int {
	if i < 0 || i >= len(n.ELBAF) {
		return 0
	}
	return int(n.ELBAF[i] & elbafSTSMask)
}

// GuardFormat is the PIF of LBA format i: 0 = 16-bit guard, 1 = 32-bit,
// 2 = 64-bit.
func (n *NVMNamespaceIOCS) GuardFormat(i int) int {
	if i < 0 || i >= len(n.ELBAF) {
		return 0
	}
	return int(n.ELBAF[i] >> elbafPIFShift & elbafPIFMask)
}

// ParseNVMNamespaceIOCS parses CNS 05h/CSI 00h data.
func ParseNVMNamespaceIOCS(b []byte) (NVMNamespaceIOCS, error) {
	if len(b) < 12+4*64 {
		return NVMNamespaceIOCS{}, fmt.Errorf("%w: NVM command set identify namespace data is %d bytes, need %d", ErrShortBuffer, len(b), 12+4*64)
	}
	le := binary.LittleEndian
	n := NVMNamespaceIOCS{LBSTM: le.Uint64(b[0:]), PIC: b[8]}
	for i := range n.ELBAF {
		n.ELBAF[i] = le.Uint32(b[12+4*i:])
	}
	return n, nil
}

// NVMControllerIOCS is the I/O Command Set specific Identify Controller
// data of the NVM command set (Identify CNS 06h with CSI 00h; NVM Command
// Set Specification, "I/O Command Set Specific Identify Controller Data
// Structure"; Linux struct nvme_id_ctrl_nvm), limits of Dataset
// Management among them. 0 in a limit means none is reported.
type NVMControllerIOCS struct {
	VSL   uint8  // byte 0: Verify Size Limit
	WZSL  uint8  // byte 1: Write Zeroes Size Limit
	WUSL  uint8  // byte 2: Write Uncorrectable Size Limit
	DMRL  uint8  // byte 3: Dataset Management Ranges Limit (ranges per command)
	DMRSL uint32 // bytes 4..7: Dataset Management Range Size Limit (logical blocks per range)
	DMSL  uint64 // bytes 8..15: Dataset Management Size Limit (logical blocks per command)
}

// ParseNVMControllerIOCS parses CNS 06h/CSI 00h data.
func ParseNVMControllerIOCS(b []byte) (NVMControllerIOCS, error) {
	if len(b) < 16 {
		return NVMControllerIOCS{}, fmt.Errorf("%w: NVM command set identify controller data is %d bytes, need 16", ErrShortBuffer, len(b))
	}
	le := binary.LittleEndian
	return NVMControllerIOCS{VSL: b[0], WZSL: b[1], WUSL: b[2], DMRL: b[3], DMRSL: le.Uint32(b[4:]), DMSL: le.Uint64(b[8:])}, nil
}

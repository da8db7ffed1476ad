package nvmekv

import (
	"encoding/binary"
	"fmt"
)

// NVMOpDSM is the NVM command set's Dataset Management (opcode 09h, NVM
// Command Set Specification, Dataset Management command).
const NVMOpDSM uint8 = 0x09

// DSMRangeBytes is the size of one Dataset Management range (Context
// Attributes u32, Length in logical blocks u32, Starting LBA u64).
const DSMRangeBytes = 16

// dsmDeallocate is CDW11 bit 2, Attribute – Deallocate (AD).
const dsmDeallocate = 1 << 2

// EncodeDSMDeallocate builds a Dataset Management command that deallocates
// the nr ranges (1..256) held in its data buffer (CDW10[7:0] = NR, 0's
// based; CDW11 = AD). Fill the buffer with PutDSMRange.
func EncodeDSMDeallocate(nsid uint32, nr int) Command {
	return Command{Opcode: NVMOpDSM, NSID: nsid, CDW10: uint32(nr-1) & 0xff, CDW11: dsmDeallocate}
}

// PutDSMRange writes range i (slba, nlb blocks) into a DSM data buffer.
func PutDSMRange(b []byte, i int, slba uint64, nlb uint32) {
	r := b[i*DSMRangeBytes:]
	le := binary.LittleEndian
	le.PutUint32(r[0:], 0) // context attributes: none
	le.PutUint32(r[4:], nlb)
	le.PutUint64(r[8:], slba)
}

// IOCommand runs one I/O command c synchronously on fd (a /dev/ngXnY)
// with the NVME_IOCTL_IO_CMD ioctl (include/uapi/linux/nvme_ioctl.h;
// drivers/nvme/host/ioctl.c nvme_user_cmd), data buffer buf. A non-zero
// NVMe status is returned as a *StatusError, an ioctl failure as its errno.
func IOCommand(fd int, c Command, buf []byte) error {
	pc := PassthruCmd(UringCmdFrom(&c, 0, 0))
	res, err := ioctlPassthru(fd, NVMeIoctlIOCmd, &pc, buf)
	if err != nil {
		return fmt.Errorf("nvmekv: I/O command %#x: %w", c.Opcode, err)
	}
	if res != 0 {
		return statusFromRes(Opcode(c.Opcode), res)
	}
	return nil
}

// OpenNVMeFd opens a /dev/ngXnY read-write (for raw NVM use).
func OpenNVMeFd(path string) (int, error) { return openRW(path) }

// NamespaceID returns the namespace id of an open NVMe namespace device.
func NamespaceID(fd int) (uint32, error) { return ioctlNVMeID(fd) }

package nvmekv

import (
	"encoding/binary"
	"unsafe"
)

// ioctl and uring_cmd numbers: _IOWR('N', nr, 72-byte struct) =
// 3<<30 | 72<<16 | 'N'<<8 | nr (include/uapi/linux/nvme_ioctl.h; which
// device takes which: drivers/nvme/host/ioctl.c).
const (
	NVMeURingCmdIO    uint32 = 0xC0484E80 // NVME_URING_CMD_IO, on /dev/ngXnY
	NVMeURingCmdIOVec uint32 = 0xC0484E81 // NVME_URING_CMD_IO_VEC
	NVMeURingCmdAdmin uint32 = 0xC0484E82 // NVME_URING_CMD_ADMIN, on /dev/nvmeX only
	NVMeIoctlID       uint32 = 0x00004E40 // NVME_IOCTL_ID: returns the nsid
	NVMeIoctlAdminCmd uint32 = 0xC0484E41 // NVME_IOCTL_ADMIN_CMD, also accepted on /dev/ngXnY
	NVMeIoctlIOCmd    uint32 = 0xC0484E43 // NVME_IOCTL_IO_CMD
)

// UringCmd mirrors struct nvme_uring_cmd (72 bytes,
// include/uapi/linux/nvme_ioctl.h). It is
// host-endian: the kernel applies cpu_to_le32 to every cdw.
type UringCmd struct {
	Opcode      uint8  // 0
	Flags       uint8  // 1: must be 0
	Rsvd1       uint16 // 2
	NSID        uint32 // 4
	CDW2        uint32 // 8
	CDW3        uint32 // 12
	Metadata    uint64 // 16: user pointer
	Addr        uint64 // 24: user data pointer
	MetadataLen uint32 // 32
	DataLen     uint32 // 36: bytes
	CDW10       uint32 // 40
	CDW11       uint32 // 44
	CDW12       uint32 // 48
	CDW13       uint32 // 52
	CDW14       uint32 // 56
	CDW15       uint32 // 60
	TimeoutMs   uint32 // 64: 0 = driver default
	Rsvd2       uint32 // 68
}

// PassthruCmd mirrors struct nvme_passthru_cmd (72 bytes), the argument of
// NVME_IOCTL_ADMIN_CMD / NVME_IOCTL_IO_CMD: nvme_uring_cmd with the
// completion's DW0 in Result instead of rsvd2.
type PassthruCmd UringCmd

var (
	_ [unsafe.Sizeof(UringCmd{}) - 72]byte
	_ [72 - unsafe.Sizeof(UringCmd{})]byte
	_ [unsafe.Sizeof(PassthruCmd{}) - 72]byte
	_ [72 - unsafe.Sizeof(PassthruCmd{})]byte
)

// UringCmdFrom converts a 64-byte command into the kernel's form, with the
// data buffer at address addr of dataLen bytes (DPTR, MPTR and CID are the
// kernel's; flags must be 0).
func UringCmdFrom(c *Command, addr uint64, dataLen uint32) UringCmd {
	return UringCmd{
		Opcode: c.Opcode, NSID: c.NSID, CDW2: c.CDW2, CDW3: c.CDW3,
		Addr: addr, DataLen: dataLen,
		CDW10: c.CDW10, CDW11: c.CDW11, CDW12: c.CDW12, CDW13: c.CDW13, CDW14: c.CDW14, CDW15: c.CDW15,
	}
}

// MarshalTo writes the 72 bytes of u, host-endian, at the start of dst
// (the 80-byte cmd area of a 128-byte SQE, at SQE byte 48). Bytes 72..79 are zeroed.
func (u *UringCmd) MarshalTo(dst *[80]byte) {
	ne := binary.NativeEndian
	dst[0], dst[1] = u.Opcode, u.Flags
	ne.PutUint16(dst[2:], u.Rsvd1)
	ne.PutUint32(dst[4:], u.NSID)
	ne.PutUint32(dst[8:], u.CDW2)
	ne.PutUint32(dst[12:], u.CDW3)
	ne.PutUint64(dst[16:], u.Metadata)
	ne.PutUint64(dst[24:], u.Addr)
	ne.PutUint32(dst[32:], u.MetadataLen)
	ne.PutUint32(dst[36:], u.DataLen)
	for i, v := range [...]uint32{u.CDW10, u.CDW11, u.CDW12, u.CDW13, u.CDW14, u.CDW15, u.TimeoutMs, u.Rsvd2} {
		ne.PutUint32(dst[40+4*i:], v)
	}
	clear(dst[72:])
}

package nvmekv

import (
	"encoding/binary"
	"fmt"
	"unsafe"
)

// Opcode is an NVMe I/O command opcode of the KV command set (CSI 1):
// NVMe KV Command Set Specification 1.0, §3.2, Figure 5 (xNVMe
// XNVME_SPEC_KV_OPC_*, SPDK SPDK_NVME_OPC_KV_*).
type Opcode uint8

const (
	OpFlush    Opcode = 0x00
	OpStore    Opcode = 0x01 // host→controller; NVM Write's opcode on a CSI 0 namespace
	OpRetrieve Opcode = 0x02 // controller→host; NVM Read's opcode on a CSI 0 namespace
	OpList     Opcode = 0x06
	OpDelete   Opcode = 0x10
	OpExist    Opcode = 0x14
)

func (o Opcode) String() string {
	switch o {
	case OpFlush:
		return "Flush"
	case OpStore:
		return "Store"
	case OpRetrieve:
		return "Retrieve"
	case OpList:
		return "List"
	case OpDelete:
		return "Delete"
	case OpExist:
		return "Exist"
	}
	return fmt.Sprintf("opcode %#02x", uint8(o))
}

// IsKV reports whether o is one of the KV opcodes refused on a non-KV namespace.
func (o Opcode) IsKV() bool {
	switch o {
	case OpStore, OpRetrieve, OpList, OpDelete, OpExist:
		return true
	}
	return false
}

// Store options, CDW11 bits 15:8 (KV Command Set 1.0, §3.2.5, Figure 29;
// Retrieve options: §3.2.3, Figure 19).
const (
	StoreMustExist    uint8 = 0x01 // "don't store if key not exists" (SIKE), failure SC 0x87
	StoreMustNotExist uint8 = 0x02 // "don't store if key exists" (SINKE), failure SC 0x89
	StoreNoCompress   uint8 = 0x04 // SPDK (spec 1.3) "DONT_COMPRESS"; xNVMe (1.0c) calls it COMPRESS. Leave 0.
	RetrieveRaw       uint8 = 0x01 // Retrieve option bit 0
)

// MaxKeyLen is the largest device key of the KV command set (SPDK_NVME_KV_KEY_MAX_LEN).
const MaxKeyLen = 16

// Command mirrors the 64-byte NVMe submission queue entry (NVMe Base
// Specification, Common Command Format; KV Command Set 1.0, §3.1).
// The KV fields live in CDW2/3 (key bytes 0..7), CDW10 (value size / host
// buffer size), CDW11 (KL, options) and CDW14/15 (key bytes 8..15).
type Command struct {
	Opcode uint8  // 0: CDW0[7:0]
	Flags  uint8  // 1: FUSE/PSDT, must be 0 through Linux passthrough
	CID    uint16 // 2: command identifier (set by the kernel)
	NSID   uint32 // 4
	CDW2   uint32 // 8: KV key bytes 0..3
	CDW3   uint32 // 12: KV key bytes 4..7
	MPTR   uint64 // 16: metadata pointer (unused by KV)
	PRP1   uint64 // 24: DPTR (filled by the kernel)
	PRP2   uint64 // 32
	CDW10  uint32 // 40: Store value size / Retrieve, List host buffer size
	CDW11  uint32 // 44: [7:0] key length, [15:8] options
	CDW12  uint32 // 48
	CDW13  uint32 // 52
	CDW14  uint32 // 56: KV key bytes 8..11
	CDW15  uint32 // 60: KV key bytes 12..15
}

var (
	_ [unsafe.Sizeof(Command{}) - 64]byte
	_ [64 - unsafe.Sizeof(Command{})]byte
)

// Bytes returns the command as the 64 little-endian bytes the controller sees.
func (c *Command) Bytes() [64]byte {
	var b [64]byte
	le := binary.LittleEndian
	b[0], b[1] = c.Opcode, c.Flags
	le.PutUint16(b[2:], c.CID)
	le.PutUint32(b[4:], c.NSID)
	le.PutUint32(b[8:], c.CDW2)
	le.PutUint32(b[12:], c.CDW3)
	le.PutUint64(b[16:], c.MPTR)
	le.PutUint64(b[24:], c.PRP1)
	le.PutUint64(b[32:], c.PRP2)
	for i, v := range [...]uint32{c.CDW10, c.CDW11, c.CDW12, c.CDW13, c.CDW14, c.CDW15} {
		le.PutUint32(b[40+4*i:], v)
	}
	return b
}

// ParseCommand is the inverse of Bytes.
func ParseCommand(b *[64]byte) Command {
	le := binary.LittleEndian
	return Command{
		Opcode: b[0], Flags: b[1], CID: le.Uint16(b[2:]), NSID: le.Uint32(b[4:]),
		CDW2: le.Uint32(b[8:]), CDW3: le.Uint32(b[12:]),
		MPTR: le.Uint64(b[16:]), PRP1: le.Uint64(b[24:]), PRP2: le.Uint64(b[32:]),
		CDW10: le.Uint32(b[40:]), CDW11: le.Uint32(b[44:]), CDW12: le.Uint32(b[48:]),
		CDW13: le.Uint32(b[52:]), CDW14: le.Uint32(b[56:]), CDW15: le.Uint32(b[60:]),
	}
}

// KeyLen is the key length field, CDW11[7:0].
func (c *Command) KeyLen() int { return int(c.CDW11 & 0xff) }

// Options is the Store/Retrieve option byte, CDW11[15:8].
func (c *Command) Options() uint8 { return uint8(c.CDW11 >> 8) }

// checkKey validates a device key for op (List accepts an empty key).
func checkKey(op Opcode, key []byte) error {
	if len(key) > MaxKeyLen || (len(key) == 0 && op != OpList) {
		return fmt.Errorf("%w: %s key is %d bytes, the KV command set takes 1..%d", ErrInvalidKeySize, op, len(key), MaxKeyLen)
	}
	return nil
}

func kvCommand(op Opcode, nsid uint32, key []byte, cdw10 uint32, opts uint8) (Command, error) {
	if err := checkKey(op, key); err != nil {
		return Command{}, err
	}
	c := Command{Opcode: uint8(op), NSID: nsid, CDW10: cdw10, CDW11: uint32(len(key)) | uint32(opts)<<8}
	PackKey(&c, key)
	return c, nil
}

// EncodeStore builds a Store of valueSize bytes; opts is a set of Store* options.
func EncodeStore(nsid uint32, key []byte, valueSize uint32, opts uint8) (Command, error) {
	if opts&(StoreMustExist|StoreMustNotExist) == StoreMustExist|StoreMustNotExist {
		return Command{}, fmt.Errorf("%w: Store options must-exist and must-not-exist are incompatible", ErrBadOptions)
	}
	return kvCommand(OpStore, nsid, key, valueSize, opts)
}

// EncodeRetrieve builds a Retrieve into a host buffer of bufSize bytes.
func EncodeRetrieve(nsid uint32, key []byte, bufSize uint32, opts uint8) (Command, error) {
	return kvCommand(OpRetrieve, nsid, key, bufSize, opts)
}

// EncodeDelete builds a Delete.
func EncodeDelete(nsid uint32, key []byte) (Command, error) {
	return kvCommand(OpDelete, nsid, key, 0, 0)
}

// EncodeExist builds an Exist.
func EncodeExist(nsid uint32, key []byte) (Command, error) {
	return kvCommand(OpExist, nsid, key, 0, 0)
}

// EncodeList builds a List starting at start (empty = from the beginning)
// into a host buffer of bufSize bytes.
func EncodeList(nsid uint32, start []byte, bufSize uint32) (Command, error) {
	return kvCommand(OpList, nsid, start, bufSize, 0)
}

// EncodeFlush builds an NVMe Flush (opcode 0, same on every command set).
func EncodeFlush(nsid uint32) Command { return Command{Opcode: uint8(OpFlush), NSID: nsid} }

// NVM command set opcodes (CSI 0), used only by the raw passthrough helpers
// for the QEMU guest tests (NVM Express NVM Command Set; fio engines/nvme.c).
const (
	NVMOpFlush uint8 = 0x00
	NVMOpWrite uint8 = 0x01
	NVMOpRead  uint8 = 0x02
)

// EncodeNVMRead builds an NVM Read of nlb blocks at slba (CDW10/11 = SLBA,
// CDW12[15:0] = NLB, 0's based).
func EncodeNVMRead(nsid uint32, slba uint64, nlb uint32) Command {
	return nvmRW(NVMOpRead, nsid, slba, nlb)
}

// EncodeNVMWrite builds an NVM Write of nlb blocks at slba.
func EncodeNVMWrite(nsid uint32, slba uint64, nlb uint32) Command {
	return nvmRW(NVMOpWrite, nsid, slba, nlb)
}

func nvmRW(op uint8, nsid uint32, slba uint64, nlb uint32) Command {
	c := Command{Opcode: op, NSID: nsid, CDW10: uint32(slba), CDW11: uint32(slba >> 32)}
	if nlb > 0 {
		c.CDW12 = (nlb - 1) & 0xffff
	}
	return c
}

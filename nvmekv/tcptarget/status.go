package tcptarget

import (
	"context"
	"errors"

	"github.com/tiercache/tiercache/nvmekv"
)

// Completion status field values without the phase bit: SC in bits 7:0,
// SCT in 10:8, DNR bit 14 (NVMe Base Specification, Completion Queue Entry
// Status Field; include/linux/nvme.h enum, whose constants already include
// the SCT).
const (
	scSuccess            uint16 = 0x000
	scInvalidOpcode      uint16 = 0x001 // Invalid Command Opcode
	scInvalidField       uint16 = 0x002 // Invalid Field in Command
	scInternal           uint16 = 0x006 // Internal Error
	scInvalidNS          uint16 = 0x00B // Invalid Namespace or Format
	scCmdSeqError        uint16 = 0x00C // Command Sequence Error
	scSGLLengthInvalid   uint16 = 0x00F // Data SGL Length Invalid
	scSGLTypeInvalid     uint16 = 0x011 // SGL Descriptor Type Invalid
	scAERLimit           uint16 = 0x105 // SCT 1: Asynchronous Event Request Limit Exceeded
	scInvalidLogPage     uint16 = 0x109 // SCT 1: Invalid Log Page
	scInvalidFormat      uint16 = 0x10A // SCT 1: Invalid Format
	scNSInsufficientCap  uint16 = 0x115 // SCT 1: Namespace Insufficient Capacity
	scNSIDUnavailable    uint16 = 0x116 // SCT 1: Namespace Identifier Unavailable
	scNSAlreadyAttached  uint16 = 0x118 // SCT 1: Namespace Already Attached
	scNSIsPrivate        uint16 = 0x119 // SCT 1: Namespace Is Private
	scNSNotAttached      uint16 = 0x11A // SCT 1: Namespace Not Attached
	scCtrlListInvalid    uint16 = 0x11C // SCT 1: Controller List Invalid
	scIOCSNotSupported   uint16 = 0x129 // SCT 1: I/O Command Set Not Supported
	scIOCSCombination    uint16 = 0x12B // SCT 1: I/O Command Set Combination Rejected
	scInvalidIOCS        uint16 = 0x12C // SCT 1: Invalid I/O Command Set (libnvme NVME_SC_INVALID_IOCS)
	scAuthRequired       uint16 = 0x191 // SCT 1 (Fabrics): Authentication Required
	scConnectFormat      uint16 = 0x180 // SCT 1 (Fabrics): Incompatible Format
	scConnectCtrlBusy    uint16 = 0x181 // Controller Busy
	scConnectInvalidPar  uint16 = 0x182 // Connect Invalid Parameters
	scConnectInvalidHost uint16 = 0x184 // Connect Invalid Host
	scDNR                uint16 = 0x4000
)

// kvStatus is a KV command set status (SCT 0, KV Command Set 1.0 §3.1
// Figure 4) with DNR.
func kvStatus(sc uint8) uint16 { return uint16(sc) | scDNR }

// statusOf turns the outcome of a namespace command into a completion
// status: a *nvmekv.StatusError keeps its SCT/SC/DNR; the nvmekv
// sentinels the encoder or a namespace returns map to their KV status
// codes; anything else (an I/O error of the store) is Internal Error.
func statusOf(err error) uint16 {
	if err == nil {
		return scSuccess
	}
	var se *nvmekv.StatusError
	if errors.As(err, &se) {
		s := uint16(se.SC) | uint16(se.SCT&7)<<8 | uint16(se.CRD&3)<<11
		if se.DNR {
			s |= scDNR
		}
		return s
	}
	switch {
	case errors.Is(err, nvmekv.ErrInvalidKeySize):
		return kvStatus(nvmekv.SCInvalidKeySize)
	case errors.Is(err, nvmekv.ErrInvalidValueSize):
		return kvStatus(nvmekv.SCInvalidValueSize)
	case errors.Is(err, nvmekv.ErrKeyNotFound):
		return kvStatus(nvmekv.SCKeyNotExists)
	case errors.Is(err, nvmekv.ErrKeyExists):
		return kvStatus(nvmekv.SCKeyExists)
	case errors.Is(err, nvmekv.ErrCapacityExceeded):
		return kvStatus(nvmekv.SCCapacityExceeded)
	case errors.Is(err, nvmekv.ErrUnrecovered):
		return kvStatus(nvmekv.SCUnrecovered)
	case errors.Is(err, nvmekv.ErrBadOptions):
		return scInvalidField | scDNR
	case errors.Is(err, nvmekv.ErrClosed), errors.Is(err, context.Canceled):
		return uint16(nvmekv.SCNamespaceNotReady) // Namespace Not Ready, retryable
	}
	return scInternal
}

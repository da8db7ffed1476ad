package nvmekv

import (
	"errors"
	"fmt"
)

// Sentinel errors. A command's failure is a *StatusError (or a wrapped
// errno); errors.Is(err, ErrKeyNotFound) etc. work on both.
var (
	// ErrKeyNotFound: KV Key Does Not Exist (SC 0x87), or a KV-level miss
	// (collision, expired record, stale chunk).
	ErrKeyNotFound = errors.New("nvmekv: key not found")
	// ErrKeyExists: Key Exists (SC 0x89), a must-not-exist Store found the key.
	ErrKeyExists = errors.New("nvmekv: key exists")
	// ErrCapacityExceeded: Capacity Exceeded (SC 0x81).
	ErrCapacityExceeded = errors.New("nvmekv: capacity exceeded")
	// ErrInvalidValueSize: Invalid Value Size (SC 0x85), or a value larger
	// than the KV layer's configured maximum.
	ErrInvalidValueSize = errors.New("nvmekv: invalid value size")
	// ErrInvalidKeySize: Invalid Key Size (SC 0x86), or a key outside 1..16
	// bytes (device) / 1..MaxKeyBytes (KV layer).
	ErrInvalidKeySize = errors.New("nvmekv: invalid key size")
	// ErrUnrecovered: Unrecovered Error (SC 0x88), or a record whose CRC does
	// not match.
	ErrUnrecovered = errors.New("nvmekv: unrecovered error")
	// ErrNotKV: the namespace's command set is not KV (CSI != 1); KV opcodes
	// are refused because Store is NVM Write's opcode.
	ErrNotKV = errors.New("nvmekv: namespace is not a KV namespace")
	// ErrClosed: the namespace or KV is closed.
	ErrClosed = errors.New("nvmekv: closed")
	// ErrBadOptions: Options.Validate found a problem.
	ErrBadOptions = errors.New("nvmekv: invalid options")
	// ErrShortBuffer: a List or Identify buffer is malformed or too small.
	ErrShortBuffer = errors.New("nvmekv: malformed or short buffer")
	// ErrCanceled: a command did not run because an earlier command of its
	// linked chain failed (io_uring's -ECANCELED).
	ErrCanceled = errors.New("nvmekv: canceled, an earlier command of the chain failed")
)

// StatusError is a completion with a non-zero NVMe status: cqe.res =
// (SCT<<8)|SC | CRD | MORE | DNR, the CQE status field without its phase bit
// (drivers/nvme/host/nvme.h nvme_try_complete_req).
type StatusError struct {
	Op    Opcode // the command that failed
	Admin bool   // Op is an admin opcode
	SCT   uint8  // status code type (0 = generic)
	SC    uint8  // status code
	CRD   uint8  // command retry delay (0..3)
	More  bool   // more status information in the error log page
	DNR   bool   // do not retry
}

// Status bit positions in cqe.res (libnvme enum nvme_status_field).
const (
	statusSCMask   = 0xff
	statusSCTShift = 8
	statusSCTMask  = 0x7
	statusCRDShift = 11
	statusCRDMask  = 0x3
	statusMore     = 0x2000
	statusDNR      = 0x4000
)

// KV status codes (KV Command Set 1.0, §3.1, Figure 4), matched with SCT 0
// as xNVMe, SPDK and libnvme define them; 00h-06h are the Base
// Specification's generic status values.
const (
	SCSuccess            uint8 = 0x00
	SCInvalidOpcode      uint8 = 0x01
	SCInvalidField       uint8 = 0x02
	SCInternal           uint8 = 0x06
	SCCapacityExceeded   uint8 = 0x81
	SCNamespaceNotReady  uint8 = 0x82
	SCReservationConflct uint8 = 0x83
	SCFormatInProgress   uint8 = 0x84
	SCInvalidValueSize   uint8 = 0x85
	SCInvalidKeySize     uint8 = 0x86
	SCKeyNotExists       uint8 = 0x87
	SCUnrecovered        uint8 = 0x88
	SCKeyExists          uint8 = 0x89
)

// Status encodes (SCT, SC, DNR) as the kernel reports it in cqe.res.
func Status(sct, sc uint8, dnr bool) int32 {
	r := int32(sc) | int32(sct&statusSCTMask)<<statusSCTShift
	if dnr {
		r |= statusDNR
	}
	return r
}

// statusFromRes splits a positive cqe.res into its fields.
func statusFromRes(op Opcode, res int32) *StatusError {
	return &StatusError{
		Op:   op,
		SC:   uint8(res & statusSCMask),
		SCT:  uint8((res >> statusSCTShift) & statusSCTMask),
		CRD:  uint8((res >> statusCRDShift) & statusCRDMask),
		More: res&statusMore != 0,
		DNR:  res&statusDNR != 0,
	}
}

func (e *StatusError) Error() string {
	op := e.Op.String()
	if e.Admin {
		op = fmt.Sprintf("admin command %#02x", uint8(e.Op))
	}
	return fmt.Sprintf("nvmekv: %s failed with NVMe status SCT %#x SC %#x (%s)%s%s",
		op, e.SCT, e.SC, e.name(), flag(e.DNR, ", do not retry"), flag(e.More, ", more info in the error log"))
}

// AdminStatus is the outcome of admin command opcode from its completion
// status (cqe.res form: SC | SCT<<8 | CRD | MORE | DNR): nil for 0, else
// a *StatusError.
func AdminStatus(opcode uint8, res int32) error {
	if res == 0 {
		return nil
	}
	e := statusFromRes(Opcode(opcode), res)
	e.Admin = true
	return e
}

func flag(b bool, s string) string {
	if b {
		return s
	}
	return ""
}

func (e *StatusError) name() string {
	switch e.SCT { // NVMe Base Specification, Status Code Type values of the completion's Status field
	case 0:
	case 1:
		if e.Admin {
			return adminStatusName(e.SC)
		}
		return "command specific status"
	case 2:
		return "media and data integrity error"
	case 3:
		return "path related status"
	case 7:
		return "vendor specific status"
	default:
		return "reserved status code type"
	}
	switch e.SC {
	case 0x80:
		// Generic SC 0x80 is LBA Out of Range in the NVM Command Set
		// Specification's command-set-specific generic statuses; the KV
		// set's list (KV Command Set 1.0, Figure 4) starts at 0x81.
		return "LBA out of range (an NVM status: is this a KV namespace?)"
	case SCInvalidOpcode:
		return "invalid opcode"
	case SCInvalidField:
		return "invalid field in command"
	case SCInternal:
		return "internal error"
	case SCCapacityExceeded:
		return "capacity exceeded"
	case SCNamespaceNotReady:
		return "namespace not ready"
	case SCReservationConflct:
		return "reservation conflict"
	case SCFormatInProgress:
		return "format in progress"
	case SCInvalidValueSize:
		return "invalid value size"
	case SCInvalidKeySize:
		return "invalid key size"
	case SCKeyNotExists:
		return "key does not exist"
	case SCUnrecovered:
		return "unrecovered error"
	case SCKeyExists:
		return "key exists"
	}
	return "unknown status"
}

// Unwrap maps the KV status codes to the package sentinels.
func (e *StatusError) Unwrap() error {
	if e.SCT != 0 {
		return nil
	}
	switch e.SC {
	case SCCapacityExceeded:
		return ErrCapacityExceeded
	case SCInvalidValueSize:
		return ErrInvalidValueSize
	case SCInvalidKeySize:
		return ErrInvalidKeySize
	case SCKeyNotExists:
		return ErrKeyNotFound
	case SCUnrecovered:
		return ErrUnrecovered
	case SCKeyExists:
		return ErrKeyExists
	}
	return nil
}

// adminStatusName names the command specific statuses of the admin
// commands nvmekv sends (NVMe Base Specification 2.0, Command Specific
// Status Values; include/linux/nvme.h NVME_SC_*, with SCT 1).
func adminStatusName(sc uint8) string {
	switch sc {
	case 0x09:
		return "invalid log page"
	case 0x0a:
		return "invalid format"
	case 0x15:
		return "namespace insufficient capacity"
	case 0x16:
		return "namespace identifier unavailable"
	case 0x18:
		return "namespace already attached"
	case 0x19:
		return "namespace is private"
	case 0x1a:
		return "namespace not attached"
	case 0x1c:
		return "controller list invalid"
	case 0x29:
		return "I/O command set not supported"
	case 0x2c:
		return "invalid I/O command set"
	case 0x91:
		return "authentication required"
	}
	return "command specific status"
}

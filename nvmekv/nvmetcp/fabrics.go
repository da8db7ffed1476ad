package nvmetcp

import (
	"bytes"
	"encoding/binary"
)

// Fabrics commands: opcode 0x7F, FCTYPE at SQE byte 4 (NVMe Base
// Specification 2.0, Fabrics Command Set; include/linux/nvme.h enum
// nvmf_capsule_command).
const (
	OpFabrics       = 0x7f
	FCPropertySet   = 0x00
	FCConnect       = 0x01
	FCPropertyGet   = 0x04
	FCAuthSend      = 0x05 // Authentication Send: host → controller data (FCTYPE bit 0)
	FCAuthReceive   = 0x06 // Authentication Receive: controller → host data
	CntlidAny       = 0xffff
	ConnectAuthATR  = 1 << 17 // Connect response DW0: Authentication Transaction Required (NVME_CONNECT_AUTHREQ_ATR)
	ConnectAuthASCR = 1 << 18 // Connect response DW0: Authentication and Secure Channel Required (NVME_CONNECT_AUTHREQ_ASCR)
)

// Controller registers reached through Property Get/Set (NVMe Base
// Specification, Controller Registers; include/linux/nvme.h NVME_REG_*).
const (
	RegCAP  = 0x00
	RegVS   = 0x08
	RegCC   = 0x14
	RegCSTS = 0x1c

	// CCEnable is the CC a Linux host writes to enable a controller with
	// every I/O command set (CSS 110b), 4 KiB pages, 64-byte SQEs and
	// 16-byte CQEs (drivers/nvme/host/core.c nvme_enable_ctrl).
	CCEnable   = 0x00460061
	CCDisabled = 0x00460060
	CSTSReady  = 1 << 0
)

// FabricsSQE is a Fabrics command of type fctype.
func FabricsSQE(fctype uint8) [SQEBytes]byte {
	var s [SQEBytes]byte
	s[0], s[4] = OpFabrics, fctype
	return s
}

// ConnectParams are a Connect command's fields (struct
// nvmf_connect_command: RECFMT at 40, QID at 42, SQSIZE (0's based) at 44,
// CATTR at 46, KATO (ms) at 48) and its 1024-byte data (struct
// nvmf_connect_data: HOSTID at 0, CNTLID at 16, SUBNQN at 256, HOSTNQN at
// 512).
type ConnectParams struct {
	QID, SQSize, CNTLID uint16
	KATOMs              uint32
	HostID              [16]byte
	SubNQN, HostNQN     string
}

// ConnectCommand builds the Connect SQE and its data.
func ConnectCommand(p ConnectParams) ([SQEBytes]byte, []byte) {
	s := FabricsSQE(FCConnect)
	le := binary.LittleEndian
	le.PutUint16(s[42:], p.QID)
	le.PutUint16(s[44:], p.SQSize)
	le.PutUint32(s[48:], p.KATOMs)
	d := make([]byte, ConnectBytes)
	copy(d, p.HostID[:])
	le.PutUint16(d[16:], p.CNTLID)
	copy(d[256:256+NQNFieldBytes-1], p.SubNQN)
	copy(d[512:512+NQNFieldBytes-1], p.HostNQN)
	return s, d
}

// ParseConnectData reads the identities of Connect data.
func ParseConnectData(d []byte) (hostID [16]byte, cntlid uint16, subNQN, hostNQN string) {
	copy(hostID[:], d[0:16])
	return hostID, binary.LittleEndian.Uint16(d[16:]), CString(d[256:512]), CString(d[512:768])
}

// CString is a NUL-terminated string field.
func CString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// Authentication Send and Receive (NVMe Base Specification 2.0,
// Authentication Send/Receive commands; struct nvmf_auth_send_command):
// SPSP0 at SQE byte 41, SPSP1 at 42, SECP at 43, TL (Send) or AL (Receive)
// at 44. DH-HMAC-CHAP uses SECP E9h with SPSP0 = SPSP1 = 01h.
const (
	AuthSECPDHCHAP = 0xe9
	AuthSPSP       = 0x01
)

// AuthSQE builds an Authentication Send (send true, n = TL) or Receive
// (n = AL) command for DH-HMAC-CHAP.
func AuthSQE(send bool, n uint32) [SQEBytes]byte {
	s := FabricsSQE(FCAuthReceive)
	if send {
		s[4] = FCAuthSend
	}
	s[41], s[42], s[43] = AuthSPSP, AuthSPSP, AuthSECPDHCHAP
	binary.LittleEndian.PutUint32(s[44:], n)
	return s
}

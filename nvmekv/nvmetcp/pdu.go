package nvmetcp

import (
	"encoding/binary"
)

// NVMe/TCP PDU types and flags (NVM Express TCP Transport Specification
// 1.0, §3.6 "PDU Types"; include/linux/nvme-tcp.h enum nvme_tcp_pdu_type,
// enum nvme_tcp_pdu_flags).
const (
	PDUICReq       uint8 = 0x00
	PDUICResp      uint8 = 0x01
	PDUH2CTermReq  uint8 = 0x02
	PDUC2HTermReq  uint8 = 0x03
	PDUCapsuleCmd  uint8 = 0x04
	PDUCapsuleResp uint8 = 0x05
	PDUH2CData     uint8 = 0x06
	PDUC2HData     uint8 = 0x07
	PDUR2T         uint8 = 0x09

	FlagHDGST       uint8 = 0x01 // header digest present
	FlagDDGST       uint8 = 0x02 // data digest present
	FlagDataLast    uint8 = 0x04 // last data PDU of the command (or of the R2T)
	FlagDataSuccess uint8 = 0x08 // C2HData: no CapsuleResp follows
)

// Header lengths (HLEN) of each PDU type: sizeof(struct nvme_tcp_*_pdu) in
// include/linux/nvme-tcp.h; the common header (CH) is 8 bytes.
const (
	CHBytes       = 8
	ICBytes       = 128 // ICReq, ICResp
	CmdHdrBytes   = 72  // CH + 64-byte SQE
	RespBytes     = 24  // CH + 16-byte CQE
	DataHdrBytes  = 24  // H2CData, C2HData, R2T
	TermHdrBytes  = 24  // H2CTermReq, C2HTermReq
	TermMaxBytes  = 152 // TermReq with up to 128 bytes of the offending header
	SQEBytes      = 64
	CQEBytes      = 16
	ConnectBytes  = 1024 // struct nvmf_connect_data
	NQNFieldBytes = 256
)

// Fatal error status of a TermReq (TCP Transport Specification §3.6.2.6,
// Figure 27; include/linux/nvme-tcp.h enum nvme_tcp_fatal_error_status).
const (
	FESInvalidHeader     uint16 = 0x01
	FESPDUSequence       uint16 = 0x02
	FESHeaderDigest      uint16 = 0x03
	FESDataOutOfRange    uint16 = 0x04
	FESR2TLimitExceeded  uint16 = 0x05
	FESUnsupportedParams uint16 = 0x06
)

// Header is a PDU's common header (struct nvme_tcp_hdr).
type Header struct {
	Type  uint8
	Flags uint8
	HLen  uint8
	PDO   uint8
	PLen  uint32
}

// ParseHeader reads the 8-byte common header at the start of b.
func ParseHeader(b []byte) Header {
	return Header{Type: b[0], Flags: b[1], HLen: b[2], PDO: b[3], PLen: binary.LittleEndian.Uint32(b[4:])}
}

// Put writes h at the start of b.
func (h Header) Put(b []byte) {
	b[0], b[1], b[2], b[3] = h.Type, h.Flags, h.HLen, h.PDO
	binary.LittleEndian.PutUint32(b[4:], h.PLen)
}

// ICReq builds the host's 128-byte ICReq as the Linux host sends it
// (drivers/nvme/host/tcp.c nvme_tcp_init_connection): PFV 0, HPDA 0, no
// digests, MAXR2T 0.
func ICReq() []byte {
	b := make([]byte, ICBytes)
	Header{Type: PDUICReq, HLen: ICBytes, PLen: ICBytes}.Put(b)
	return b
}

// ICResp builds the 128-byte ICResp (TCP Transport Specification §3.6.2.3,
// Figure 21; struct nvme_tcp_icresp_pdu): PFV 0, CPDA 0, no digests,
// MAXH2CDATA. The Linux host checks every field (drivers/nvme/host/tcp.c
// nvme_tcp_init_connection): plen 128, pfv 0, cpda 0, the digest bits
// equal to its request, maxdata ≥ 4096 and a multiple of 4.
func ICResp(maxH2CData uint32) []byte {
	b := make([]byte, ICBytes)
	Header{Type: PDUICResp, HLen: ICBytes, PLen: ICBytes}.Put(b)
	// 8: pfv u16 = 0, 10: cpda = 0, 11: digest = 0
	binary.LittleEndian.PutUint32(b[12:], maxH2CData)
	return b
}

// PutResp writes a 24-byte CapsuleResp: CH then the CQE (NVMe Base
// Specification, Common Completion Queue Entry: DW0/DW1 result at 0, SQ
// head at 8, SQ id at 10, CID at 12, status (SF<<1 | phase) at 14;
// struct nvme_completion).
func PutResp(b []byte, cid uint16, result uint64, sqHead, sqID uint16, status uint16) {
	Header{Type: PDUCapsuleResp, HLen: RespBytes, PLen: RespBytes}.Put(b)
	le := binary.LittleEndian
	le.PutUint64(b[8:], result)
	le.PutUint16(b[16:], sqHead)
	le.PutUint16(b[18:], sqID)
	le.PutUint16(b[20:], cid)
	le.PutUint16(b[22:], status<<1)
}

// PutDataHdr writes the 24-byte header of a C2HData, H2CData or R2T
// (struct nvme_tcp_data_pdu / nvme_tcp_r2t_pdu): CID at 8, TTAG at 10,
// offset at 12, length at 16. pdo is 24 for a data PDU, 0 for R2T.
func PutDataHdr(b []byte, typ, flags uint8, cid, ttag uint16, off, n uint32) {
	pdo := uint8(DataHdrBytes)
	plen := uint32(DataHdrBytes) + n
	if typ == PDUR2T {
		pdo, plen = 0, DataHdrBytes
	}
	Header{Type: typ, Flags: flags, HLen: DataHdrBytes, PDO: pdo, PLen: plen}.Put(b)
	le := binary.LittleEndian
	le.PutUint16(b[8:], cid)
	le.PutUint16(b[10:], ttag)
	le.PutUint32(b[12:], off)
	le.PutUint32(b[16:], n)
	le.PutUint32(b[20:], 0)
}

// TermReq builds a C2HTermReq (TCP Transport Specification §3.6.2.6;
// struct nvme_tcp_term_pdu): FES at 8, FEI at 10, then up to 128 bytes of
// the PDU header that caused it.
func TermReq(fes uint16, fei uint32, offending []byte) []byte {
	if len(offending) > TermMaxBytes-TermHdrBytes {
		offending = offending[:TermMaxBytes-TermHdrBytes]
	}
	b := make([]byte, TermHdrBytes+len(offending))
	Header{Type: PDUC2HTermReq, HLen: TermHdrBytes, PLen: uint32(len(b))}.Put(b)
	binary.LittleEndian.PutUint16(b[8:], fes)
	binary.LittleEndian.PutUint32(b[10:], fei)
	copy(b[TermHdrBytes:], offending)
	return b
}

// SGL descriptor of a command (NVMe Base Specification, SGL Descriptor
// Format; struct nvme_sgl_desc at SQE byte 24: address u64, length u32,
// 3 reserved bytes, type at byte 39 = descriptor type << 4 | subtype).
const (
	SGLOffset    = 24
	SGLInCapsule = 0x01 // Data Block descriptor, Offset subtype: data in the capsule (nvme_tcp_set_sg_inline)
	SGLTransport = 0x5A // Transport SGL Data Block, Transport-specific subtype: data by C2HData / R2T+H2CData (nvme_tcp_set_sg_host_data)

	// SQEFlagsSGL is PSDT = 01b (SGL for data), what the Linux host sets
	// in every command (NVME_CMD_SGL_METABUF, nvme_tcp_map_data).
	SQEFlagsSGL = 0x40
)

// SGL is a command's data descriptor.
type SGL struct {
	Addr uint64
	Len  uint32
	Type uint8
}

// ParseSGL reads the data descriptor of a 64-byte SQE.
func ParseSGL(sqe []byte) SGL {
	le := binary.LittleEndian
	return SGL{Addr: le.Uint64(sqe[SGLOffset:]), Len: le.Uint32(sqe[SGLOffset+8:]), Type: sqe[SGLOffset+15]}
}

package dhchap

import (
	"encoding/binary"
	"fmt"
)

// Message kinds (NVMe Base Specification 2.0, §8.13, DH-HMAC-CHAP
// messages; include/linux/nvme.h: AUTH_TYPE 00h common / 01h DH-HMAC-CHAP,
// AUTH_ID the message). Every message starts with AUTH_TYPE, AUTH_ID, two
// reserved bytes and T_ID (le16), the transaction identifier.
const (
	TypeCommon = 0x00
	TypeDHCHAP = 0x01

	IDNegotiate = 0x00
	IDChallenge = 0x01
	IDReply     = 0x02
	IDSuccess1  = 0x03
	IDSuccess2  = 0x04
	IDFailure2  = 0xf0
	IDFailure1  = 0xf1

	// AuthIDDHCHAP is the authentication protocol identifier of a
	// Negotiate protocol descriptor (NVME_AUTH_DHCHAP_AUTH_ID).
	AuthIDDHCHAP = 0x01
)

// Reason code explanations of a Failure message (RESCODE 01h "failed";
// include/linux/nvme.h NVME_AUTH_DHCHAP_FAILURE_*).
const (
	ReasonFailed           = 0x01 // authentication failed (wrong response)
	ReasonNotUsable        = 0x02
	ReasonConcatMismatch   = 0x03 // secure channel concatenation refused
	ReasonHashUnusable     = 0x04
	ReasonDHGroupUnusable  = 0x05
	ReasonIncorrectPayload = 0x06
	ReasonIncorrectMessage = 0x07
)

// ReasonText names a reason code explanation.
func ReasonText(r uint8) string {
	switch r {
	case ReasonFailed:
		return "authentication failed"
	case ReasonNotUsable:
		return "authentication not usable"
	case ReasonConcatMismatch:
		return "secure channel concatenation mismatch"
	case ReasonHashUnusable:
		return "hash function not usable"
	case ReasonDHGroupUnusable:
		return "DH group not usable"
	case ReasonIncorrectPayload:
		return "incorrect payload"
	case ReasonIncorrectMessage:
		return "incorrect protocol message"
	}
	return fmt.Sprintf("reason %#x", r)
}

// headerBytes: AUTH_TYPE, AUTH_ID, reserved, T_ID.
const headerBytes = 6

// Header is the part every message has.
type Header struct {
	Type, ID uint8
	TID      uint16
}

// ParseHeader reads a message's header.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < headerBytes {
		return Header{}, fmt.Errorf("%w: %d bytes, shorter than a message header", ErrBadMessage, len(b))
	}
	return Header{Type: b[0], ID: b[1], TID: binary.LittleEndian.Uint16(b[4:])}, nil
}

func putHeader(b []byte, typ, id uint8, tid uint16) {
	b[0], b[1] = typ, id
	binary.LittleEndian.PutUint16(b[4:], tid)
}

// Negotiate is the host's first message (struct
// nvmf_auth_dhchap_negotiate_data): SC_C at 6, NAPD at 7, then NAPD
// 64-byte protocol descriptors {AUTHID, reserved, HALEN, DHLEN, IDLIST[60]}
// whose IDLIST holds HALEN hash identifiers from byte 0 and DHLEN DH
// group identifiers from byte 30.
type Negotiate struct {
	TID    uint16
	SCC    uint8 // secure channel concatenation: 0 = none
	Hashes []HashID
	Groups []DHGroup
}

const descriptorBytes = 64

// Marshal encodes n with one DH-HMAC-CHAP descriptor.
func (n *Negotiate) Marshal() []byte {
	b := make([]byte, 8+descriptorBytes)
	putHeader(b, TypeCommon, IDNegotiate, n.TID)
	b[6], b[7] = n.SCC, 1
	d := b[8:]
	d[0], d[2], d[3] = AuthIDDHCHAP, uint8(len(n.Hashes)), uint8(len(n.Groups))
	for i, h := range n.Hashes {
		d[4+i] = uint8(h)
	}
	for i, g := range n.Groups {
		d[4+30+i] = uint8(g)
	}
	return b
}

// ParseNegotiate decodes a Negotiate; the reason code explanation says
// why one is refused.
func ParseNegotiate(b []byte) (Negotiate, uint8, error) {
	if len(b) < 8+descriptorBytes {
		return Negotiate{}, ReasonIncorrectPayload, fmt.Errorf("%w: Negotiate of %d bytes", ErrBadMessage, len(b))
	}
	n := Negotiate{TID: binary.LittleEndian.Uint16(b[4:]), SCC: b[6]}
	napd := int(b[7])
	if napd < 1 || len(b) < 8+napd*descriptorBytes {
		return n, ReasonIncorrectPayload, fmt.Errorf("%w: Negotiate with %d protocol descriptors in %d bytes", ErrBadMessage, napd, len(b))
	}
	for i := range napd {
		d := b[8+i*descriptorBytes:]
		if d[0] != AuthIDDHCHAP {
			continue
		}
		halen, dhlen := int(d[2]), int(d[3])
		if halen > 30 || dhlen > 30 {
			return n, ReasonIncorrectPayload, fmt.Errorf("%w: Negotiate lists %d hashes and %d DH groups", ErrBadMessage, halen, dhlen)
		}
		for _, h := range d[4 : 4+halen] {
			n.Hashes = append(n.Hashes, HashID(h))
		}
		for _, g := range d[4+30 : 4+30+dhlen] {
			n.Groups = append(n.Groups, DHGroup(g))
		}
		return n, 0, nil
	}
	return n, ReasonNotUsable, fmt.Errorf("%w: Negotiate offers no DH-HMAC-CHAP descriptor", ErrBadMessage)
}

// Challenge is the controller's (struct nvmf_auth_dhchap_challenge_data):
// HL at 6, HASHID at 8, DHGID at 9, DHVLEN at 10, SEQNUM at 12, then HL
// bytes of challenge C1 and DHVLEN bytes of the controller's DH value.
type Challenge struct {
	TID   uint16
	Hash  HashID
	Group DHGroup
	Seq   uint32
	C     []byte
	DHV   []byte
}

// Marshal encodes c.
func (c *Challenge) Marshal() []byte {
	b := make([]byte, 16+len(c.C)+len(c.DHV))
	putHeader(b, TypeDHCHAP, IDChallenge, c.TID)
	b[6], b[8], b[9] = uint8(len(c.C)), uint8(c.Hash), uint8(c.Group)
	binary.LittleEndian.PutUint16(b[10:], uint16(len(c.DHV)))
	binary.LittleEndian.PutUint32(b[12:], c.Seq)
	copy(b[16:], c.C)
	copy(b[16+len(c.C):], c.DHV)
	return b
}

// ParseChallenge decodes a Challenge.
func ParseChallenge(b []byte) (Challenge, error) {
	if len(b) < 16 {
		return Challenge{}, fmt.Errorf("%w: Challenge of %d bytes", ErrBadMessage, len(b))
	}
	c := Challenge{TID: binary.LittleEndian.Uint16(b[4:]), Hash: HashID(b[8]), Group: DHGroup(b[9]), Seq: binary.LittleEndian.Uint32(b[12:])}
	hl, dhvlen := int(b[6]), int(binary.LittleEndian.Uint16(b[10:]))
	if hl != c.Hash.Len() || len(b) < 16+hl+dhvlen {
		return c, fmt.Errorf("%w: Challenge with hash %d, HL %d, DHVLEN %d in %d bytes", ErrBadMessage, c.Hash, hl, dhvlen, len(b))
	}
	c.C = append([]byte(nil), b[16:16+hl]...)
	c.DHV = append([]byte(nil), b[16+hl:16+hl+dhvlen]...)
	return c, nil
}

// Reply is the host's (struct nvmf_auth_dhchap_reply_data): HL at 6,
// CVALID at 8, DHVLEN at 10, SEQNUM at 12 (S2; 0 = no controller
// authentication), then HL bytes of response R1, HL bytes of challenge C2
// (meaningful when CVALID is 1) and DHVLEN bytes of the host's DH value.
type Reply struct {
	TID uint16
	R   []byte
	C2  []byte // nil: the host does not authenticate the controller
	Seq uint32
	DHV []byte
}

// Marshal encodes r.
func (r *Reply) Marshal() []byte {
	hl := len(r.R)
	b := make([]byte, 16+2*hl+len(r.DHV))
	putHeader(b, TypeDHCHAP, IDReply, r.TID)
	b[6] = uint8(hl)
	if r.C2 != nil {
		b[8] = 1
	}
	binary.LittleEndian.PutUint16(b[10:], uint16(len(r.DHV)))
	binary.LittleEndian.PutUint32(b[12:], r.Seq)
	copy(b[16:], r.R)
	copy(b[16+hl:], r.C2)
	copy(b[16+2*hl:], r.DHV)
	return b
}

// ParseReply decodes a Reply whose responses are hl bytes.
func ParseReply(b []byte, hl int) (Reply, error) {
	if len(b) < 16 {
		return Reply{}, fmt.Errorf("%w: Reply of %d bytes", ErrBadMessage, len(b))
	}
	r := Reply{TID: binary.LittleEndian.Uint16(b[4:]), Seq: binary.LittleEndian.Uint32(b[12:])}
	dhvlen := int(binary.LittleEndian.Uint16(b[10:]))
	if int(b[6]) != hl || len(b) < 16+2*hl+dhvlen {
		return r, fmt.Errorf("%w: Reply with HL %d (want %d), DHVLEN %d in %d bytes", ErrBadMessage, b[6], hl, dhvlen, len(b))
	}
	r.R = append([]byte(nil), b[16:16+hl]...)
	if b[8]&1 != 0 {
		r.C2 = append([]byte(nil), b[16+hl:16+2*hl]...)
	}
	r.DHV = append([]byte(nil), b[16+2*hl:16+2*hl+dhvlen]...)
	return r, nil
}

// Success1 is the controller's (struct nvmf_auth_dhchap_success1_data):
// HL at 6, RVALID at 8, then HL bytes of response R2 when RVALID is 1.
type Success1 struct {
	TID uint16
	HL  int
	R2  []byte // nil: no controller response
}

// Marshal encodes s.
func (s *Success1) Marshal() []byte {
	b := make([]byte, 16+len(s.R2))
	putHeader(b, TypeDHCHAP, IDSuccess1, s.TID)
	b[6] = uint8(s.HL)
	if s.R2 != nil {
		b[8] = 1
		copy(b[16:], s.R2)
	}
	return b
}

// ParseSuccess1 decodes a Success1.
func ParseSuccess1(b []byte) (Success1, error) {
	if len(b) < 16 {
		return Success1{}, fmt.Errorf("%w: Success1 of %d bytes", ErrBadMessage, len(b))
	}
	s := Success1{TID: binary.LittleEndian.Uint16(b[4:]), HL: int(b[6])}
	if b[8]&1 != 0 {
		if len(b) < 16+s.HL {
			return s, fmt.Errorf("%w: Success1 with a %d-byte response in %d bytes", ErrBadMessage, s.HL, len(b))
		}
		s.R2 = append([]byte(nil), b[16:16+s.HL]...)
	}
	return s, nil
}

// Success2 is the host's last message after it checked R2 (16 bytes).
func Success2(tid uint16) []byte {
	b := make([]byte, 16)
	putHeader(b, TypeDHCHAP, IDSuccess2, tid)
	return b
}

// Failure is a Failure1 (controller) or Failure2 (host) message (struct
// nvmf_auth_dhchap_failure_data): RESCODE at 6 (01h, failed), RESCODE_EXP
// at 7.
type Failure struct {
	ID     uint8 // IDFailure1 or IDFailure2
	TID    uint16
	Reason uint8 // the explanation: Reason*
}

// Marshal encodes f.
func (f *Failure) Marshal() []byte {
	b := make([]byte, 8)
	putHeader(b, TypeCommon, f.ID, f.TID)
	b[6], b[7] = 0x01, f.Reason
	return b
}

// ParseFailure decodes a Failure message.
func ParseFailure(b []byte) (Failure, error) {
	if len(b) < 8 {
		return Failure{}, fmt.Errorf("%w: Failure of %d bytes", ErrBadMessage, len(b))
	}
	return Failure{ID: b[1], TID: binary.LittleEndian.Uint16(b[4:]), Reason: b[7]}, nil
}

package dhchap

import (
	"crypto/hmac"
	"encoding/binary"
	"io"
)

// Response computes a DH-HMAC-CHAP response (NVMe Base Specification 2.0,
// §8.13; the kernel's host and target compute the same bytes:
// drivers/nvme/host/auth.c nvme_auth_dhchap_setup_host_response and
// _setup_ctrl_response, drivers/nvme/target/auth.c nvmet_auth_host_hash
// and nvmet_auth_ctrl_hash):
//
//	R = HMAC_H(Kt, Ca || le32(seq) || le16(tid) || 00h || role || nqnA || 00h || nqnB)
//
// H is the negotiated hash; Kt the transformed key (Secret.Transformed);
// role "HostHost" with (nqnA, nqnB) = (host NQN, subsystem NQN) for the
// host's response, "Controller" with (subsystem NQN, host NQN) for the
// controller's. Ca is the challenge itself without a DH exchange
// (sessionKey nil), else the augmented challenge HMAC_H(H(sessionKey), C).
func Response(h HashID, kt, challenge []byte, seq uint32, tid uint16, role, nqnA, nqnB string, sessionKey []byte) []byte {
	ca := challenge
	if sessionKey != nil {
		ca = augmented(h, sessionKey, challenge)
	}
	m := hmac.New(h.New(), kt)
	m.Write(ca)
	var b [6]byte
	binary.LittleEndian.PutUint32(b[0:], seq)
	binary.LittleEndian.PutUint16(b[4:], tid)
	m.Write(b[:])
	m.Write([]byte{0})
	io.WriteString(m, role)
	io.WriteString(m, nqnA)
	m.Write([]byte{0})
	io.WriteString(m, nqnB)
	return m.Sum(nil)
}

// Roles of Response.
const (
	RoleHost       = "HostHost"
	RoleController = "Controller"
)

// augmented is HMAC_H(H(sessionKey), C)
// (drivers/nvme/common/auth.c nvme_auth_augmented_challenge).
func augmented(h HashID, sessionKey, challenge []byte) []byte {
	d := h.New()()
	d.Write(sessionKey)
	m := hmac.New(h.New(), d.Sum(nil))
	m.Write(challenge)
	return m.Sum(nil)
}

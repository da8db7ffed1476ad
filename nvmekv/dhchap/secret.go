package dhchap

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"strings"
)

// HashID is a DH-HMAC-CHAP hash function identifier (NVMe Base
// Specification 2.0, §8.13; include/linux/nvme.h NVME_AUTH_HASH_*).
type HashID uint8

const (
	SHA256 HashID = 0x01
	SHA384 HashID = 0x02
	SHA512 HashID = 0x03
)

// New returns the hash function, or nil for an unknown identifier.
func (h HashID) New() func() hash.Hash {
	switch h {
	case SHA256:
		return sha256.New
	case SHA384:
		return sha512.New384
	case SHA512:
		return sha512.New
	}
	return nil
}

// Len is the digest length in bytes (0 for an unknown identifier).
func (h HashID) Len() int {
	return map[HashID]int{SHA256: 32, SHA384: 48, SHA512: 64}[h]
}

// String is the HMAC's name as the kernel prints it ("hmac(sha256)", ...).
func (h HashID) String() string {
	switch h {
	case SHA256:
		return "hmac(sha256)"
	case SHA384:
		return "hmac(sha384)"
	case SHA512:
		return "hmac(sha512)"
	}
	return fmt.Sprintf("hash-%d", uint8(h))
}

// ParseHash reads "sha256", "sha384" or "sha512" (or the HMAC names).
func ParseHash(s string) (HashID, error) {
	for _, h := range []HashID{SHA256, SHA384, SHA512} {
		if s == h.String() || "hmac("+s+")" == h.String() {
			return h, nil
		}
	}
	return 0, fmt.Errorf("%w: hash %q (want sha256, sha384 or sha512)", ErrUnsupported, s)
}

// Secret is a DH-HMAC-CHAP secret: the key and the hash its transform
// uses (0 = the key is used as it is).
type Secret struct {
	Transform HashID // 0, SHA256, SHA384 or SHA512
	Key       []byte // 32, 48 or 64 bytes
}

// secretPrefix starts the secret representation of the NVMe Base
// Specification 2.0 (§8.13.5.8 "Secret representation"), as the
// Linux kernel parses it (drivers/nvme/common/auth.c nvme_auth_parse_key,
// nvme_auth_extract_key) and nvme-cli prints it (gen-dhchap-key):
// "DHHC-1:hh:" then base64 of the key followed by its CRC-32
// (little-endian), then ":". hh is 00 (no transform) or the hash of the
// transform: 01 SHA-256 with a 32-byte key, 02 SHA-384 with 48, 03
// SHA-512 with 64.
const secretPrefix = "DHHC-1:"

// ParseSecret reads the secret representation "DHHC-1:hh:<base64>:".
// Errors never contain the key.
func ParseSecret(s string) (Secret, error) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, secretPrefix) || len(s) < len(secretPrefix)+4 || s[len(secretPrefix)+2] != ':' || !strings.HasSuffix(s, ":") {
		return Secret{}, fmt.Errorf("%w: want DHHC-1:hh:<base64 key and CRC-32>: (nvme gen-dhchap-key prints one)", ErrBadSecret)
	}
	var t HashID
	switch s[len(secretPrefix) : len(secretPrefix)+2] {
	case "00":
	case "01":
		t = SHA256
	case "02":
		t = SHA384
	case "03":
		t = SHA512
	default:
		return Secret{}, fmt.Errorf("%w: hash indicator %q is not 00, 01, 02 or 03", ErrBadSecret, s[len(secretPrefix):len(secretPrefix)+2])
	}
	b, err := base64.StdEncoding.DecodeString(s[len(secretPrefix)+3 : len(s)-1])
	if err != nil {
		return Secret{}, fmt.Errorf("%w: the key is not base64", ErrBadSecret)
	}
	if n := len(b) - 4; n != 32 && n != 48 && n != 64 {
		return Secret{}, fmt.Errorf("%w: a %d-byte key, want 32, 48 or 64 bytes and a CRC-32", ErrBadSecret, len(b)-4)
	}
	key, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.ChecksumIEEE(key) != sum {
		return Secret{}, fmt.Errorf("%w: the key's CRC-32 does not match (mistyped?)", ErrBadSecret)
	}
	if t != 0 && len(key) != t.Len() {
		return Secret{}, fmt.Errorf("%w: hash indicator %02x takes a %d-byte key, this one has %d", ErrBadSecret, uint8(t), t.Len(), len(key))
	}
	return Secret{Transform: t, Key: key}, nil
}

// String is the secret's representation (it contains the key).
func (s Secret) String() string {
	b := binary.LittleEndian.AppendUint32(append([]byte(nil), s.Key...), crc32.ChecksumIEEE(s.Key))
	return fmt.Sprintf("%s%02x:%s:", secretPrefix, uint8(s.Transform), base64.StdEncoding.EncodeToString(b))
}

// GenerateSecret draws a key of the transform's length (32 bytes when
// t is 0) from rnd (crypto/rand when nil).
func GenerateSecret(t HashID, rnd io.Reader) (Secret, error) {
	n := 32
	if t != 0 {
		if n = t.Len(); n == 0 {
			return Secret{}, fmt.Errorf("%w: hash %d", ErrUnsupported, t)
		}
	}
	if rnd == nil {
		rnd = rand.Reader
	}
	key := make([]byte, n)
	if _, err := io.ReadFull(rnd, key); err != nil {
		return Secret{}, fmt.Errorf("dhchap: draw a key: %w", err)
	}
	return Secret{Transform: t, Key: key}, nil
}

// Transformed is the key the responses are computed with: the key itself,
// or HMAC(key, NQN || "NVMe-over-Fabrics") with the transform's hash,
// where NQN is the host NQN for a host secret and the subsystem NQN for
// a controller secret (NVMe Base Specification 2.0, §8.13;
// drivers/nvme/common/auth.c nvme_auth_transform_key).
func (s Secret) Transformed(nqn string) []byte {
	if s.Transform == 0 {
		return append([]byte(nil), s.Key...)
	}
	m := hmac.New(s.Transform.New(), s.Key)
	io.WriteString(m, nqn)
	io.WriteString(m, "NVMe-over-Fabrics")
	return m.Sum(nil)
}

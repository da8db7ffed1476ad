package dhchap

import (
	"crypto/rand"
	"fmt"
	"io"
	"math/big"
	"sync"
)

// DHGroup is a DH-HMAC-CHAP Diffie-Hellman group identifier (NVMe Base
// Specification 2.0, §8.13; include/linux/nvme.h NVME_AUTH_DHGROUP_*):
// NullDH is no exchange at all (the response is over the bare challenge).
type DHGroup uint8

const (
	NullDH    DHGroup = 0x00
	FFDHE2048 DHGroup = 0x01
	FFDHE3072 DHGroup = 0x02
	FFDHE4096 DHGroup = 0x03
	FFDHE6144 DHGroup = 0x04
	FFDHE8192 DHGroup = 0x05
)

// group is one RFC 7919 group: its prime and the short secret exponent
// length RFC 7919 Appendix A recommends for it ("peers ... that want to
// optimize their key exchange with a short exponent (Section 5.2) should
// choose a secret key of at least N bits").
type group struct {
	p       *big.Int
	pm1     *big.Int // p-1
	bytes   int      // length of p, of public values and of the session key
	expBits int
}

var (
	groupsOnce sync.Once
	groups     map[DHGroup]*group
)

func groupOf(g DHGroup) (*group, error) {
	groupsOnce.Do(func() {
		groups = map[DHGroup]*group{}
		exp := map[DHGroup]int{FFDHE2048: 225, FFDHE3072: 275, FFDHE4096: 325, FFDHE6144: 375, FFDHE8192: 400}
		for id, h := range ffdhePrimes {
			p, _ := new(big.Int).SetString(h, 16)
			groups[id] = &group{p: p, pm1: new(big.Int).Sub(p, big.NewInt(1)), bytes: (p.BitLen() + 7) / 8, expBits: exp[id]}
		}
	})
	gr := groups[g]
	if gr == nil {
		return nil, fmt.Errorf("%w: DH group %d", ErrUnsupported, g)
	}
	return gr, nil
}

// Bits is the size of the group's prime (0 for NullDH or an unknown group).
func (g DHGroup) Bits() int {
	if gr, err := groupOf(g); err == nil {
		return gr.p.BitLen()
	}
	return 0
}

// String is the group's name as nvme-cli and the kernel print it
// (drivers/nvme/common/auth.c dhgroup_map).
func (g DHGroup) String() string {
	switch g {
	case NullDH:
		return "null"
	case FFDHE2048, FFDHE3072, FFDHE4096, FFDHE6144, FFDHE8192:
		return fmt.Sprintf("ffdhe%d", g.Bits())
	}
	return fmt.Sprintf("dhgroup-%d", uint8(g))
}

// ParseDHGroup reads a group name ("null", "ffdhe2048", ...).
func ParseDHGroup(s string) (DHGroup, error) {
	for _, g := range []DHGroup{NullDH, FFDHE2048, FFDHE3072, FFDHE4096, FFDHE6144, FFDHE8192} {
		if g.String() == s {
			return g, nil
		}
	}
	return 0, fmt.Errorf("%w: DH group %q (want null or ffdhe2048, ffdhe3072, ffdhe4096, ffdhe6144, ffdhe8192)", ErrUnsupported, s)
}

// KeyPair is one side's ephemeral Diffie-Hellman key in a group.
type KeyPair struct {
	g      *group
	x      *big.Int
	Public []byte // g^x mod p, big-endian, as long as p
}

// NewKeyPair draws a secret exponent of the group's recommended length
// from rnd (crypto/rand when nil) and computes the public value 2^x mod p.
func NewKeyPair(g DHGroup, rnd io.Reader) (*KeyPair, error) {
	gr, err := groupOf(g)
	if err != nil {
		return nil, err
	}
	if rnd == nil {
		rnd = rand.Reader
	}
	max := new(big.Int).Lsh(big.NewInt(1), uint(gr.expBits))
	x, err := rand.Int(rnd, max)
	if err != nil {
		return nil, fmt.Errorf("dhchap: draw a DH secret: %w", err)
	}
	x.SetBit(x, gr.expBits-1, 1) // full length, never 0 or 1
	y := new(big.Int).Exp(big.NewInt(2), x, gr.p)
	return &KeyPair{g: gr, x: x, Public: y.FillBytes(make([]byte, gr.bytes))}, nil
}

// Shared checks the peer's public value (1 < Y < p-1, RFC 7919 §5.1) and
// returns the session key Y^x mod p, big-endian and as long as p (the
// form the Linux kernel's DH computes: crypto/dh.c, mpi_write_to_sgl pads
// with leading zeros).
func (k *KeyPair) Shared(peer []byte) ([]byte, error) {
	if len(peer) != k.g.bytes {
		return nil, fmt.Errorf("%w: the peer's DH value is %d bytes, the group's %d", ErrBadMessage, len(peer), k.g.bytes)
	}
	y := new(big.Int).SetBytes(peer)
	if y.Cmp(big.NewInt(1)) <= 0 || y.Cmp(k.g.pm1) >= 0 {
		return nil, fmt.Errorf("%w: the peer's DH value is outside 1 < Y < p-1", ErrBadMessage)
	}
	z := new(big.Int).Exp(y, k.x, k.g.p)
	return z.FillBytes(make([]byte, k.g.bytes)), nil
}

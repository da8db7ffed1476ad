package dhchap

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math/big"
	"strings"
	"testing"
)

const (
	testHostNQN = "nqn.2014-08.org.nvmexpress:uuid:test-host"
	testSubNQN  = "nqn.2026-12.io.tiercache:test"
)

func mustSecret(t *testing.T, s string) Secret {
	t.Helper()
	k, err := ParseSecret(s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestSecretRepresentation (D1): the representation nvme-cli 2.3 prints
// for a known key parses to that key and prints back the same; nvme-cli's
// transformed key (gen-dhchap-key --hmac=1 prints HMAC-SHA-256(key, NQN
// || "NVMe-over-Fabrics")) is Secret.Transformed's; malformed secrets are
// refused without the key in the message.
func TestSecretRepresentation(t *testing.T) {
	key, _ := hex.DecodeString("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
	// nvme gen-dhchap-key --secret=0001...1f --hmac=0 --nqn=...test-host
	const plain = "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:"
	s := mustSecret(t, plain)
	if s.Transform != 0 || !bytes.Equal(s.Key, key) || s.String() != plain {
		t.Fatalf("parsed %+v, prints %q", s, s.String())
	}
	// nvme gen-dhchap-key --secret=0001...1f --hmac=1 --nqn=...test-host
	nvmeCLI := mustSecret(t, "DHHC-1:01:pWf2+Dwk8mNFJyGdUfZxxqKO7E/XIf+1Surt0BwBeDuogeMu:")
	if got := (Secret{Transform: SHA256, Key: key}).Transformed(testHostNQN); !bytes.Equal(got, nvmeCLI.Key) {
		t.Fatalf("transformed %x, nvme-cli %x", got, nvmeCLI.Key)
	}
	if got := s.Transformed(testHostNQN); !bytes.Equal(got, key) {
		t.Fatal("hash indicator 00 must use the key as it is")
	}
	for _, bad := range []string{
		"", "DHHC-1:00", "DHHC-2:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:",
		"DHHC-1:04:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:",
		"DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaS:", // CRC off by one
		"DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR",  // no final colon
		"DHHC-1:02:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:", // SHA-384 wants 48 bytes
		"DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh%KfiaR:",
		"DHHC-1:00:AAECAw==:",
	} {
		_, err := ParseSecret(bad)
		if !errors.Is(err, ErrBadSecret) {
			t.Errorf("ParseSecret(%q) = %v, want ErrBadSecret", bad, err)
		} else if strings.Contains(err.Error(), "AAECAwQF") {
			t.Errorf("the error repeats the key: %v", err)
		}
	}
	for _, h := range []HashID{0, SHA256, SHA384, SHA512} {
		g, err := GenerateSecret(h, nil)
		if err != nil {
			t.Fatal(err)
		}
		if back := mustSecret(t, g.String()); back.Transform != h || !bytes.Equal(back.Key, g.Key) {
			t.Fatalf("generated %v does not round-trip", h)
		}
	}
}

// TestGroupsAreRFC7919 (D2): each prime is RFC 7919's construction
// p = 2^b - 2^(b-64) + {[2^(b-130) e] + X} * 2^64 - 1 with the RFC's X,
// (a mistyped digit anywhere else breaks it), and for the groups up to
// 4096 bits p and (p-1)/2 are prime (the larger ones take seconds).
func TestGroupsAreRFC7919(t *testing.T) {
	xs := map[DHGroup]int64{FFDHE2048: 560316, FFDHE3072: 2625351, FFDHE4096: 5736041, FFDHE6144: 15705020, FFDHE8192: 10965728}
	for g, x := range xs {
		gr, err := groupOf(g)
		if err != nil {
			t.Fatal(err)
		}
		b := gr.p.BitLen()
		one := big.NewInt(1)
		p := new(big.Int).Lsh(one, uint(b))
		p.Sub(p, new(big.Int).Lsh(one, uint(b-64)))
		m := eFloor(b - 130)
		m.Add(m, big.NewInt(x))
		p.Add(p, m.Lsh(m, 64))
		p.Sub(p, one)
		if p.Cmp(gr.p) != 0 {
			t.Fatalf("%s is not RFC 7919's construction with X = %d", g, x)
		}
		if b > 4096 {
			continue
		}
		q := new(big.Int).Rsh(gr.p, 1)
		if !gr.p.ProbablyPrime(0) || !q.ProbablyPrime(0) {
			t.Fatalf("%s: p or (p-1)/2 is not prime", g)
		}
	}
}

// eFloor is floor(2^k · e), from the series e = Σ 1/n! with 64 guard bits.
func eFloor(k int) *big.Int {
	s, f, one := new(big.Int), big.NewInt(1), new(big.Int).Lsh(big.NewInt(1), uint(k+64))
	for n := int64(1); ; n++ {
		t := new(big.Int).Quo(one, f)
		if t.Sign() == 0 {
			break
		}
		s.Add(s, t)
		f.Mul(f, big.NewInt(n))
	}
	return s.Rsh(s, 64)
}

// TestKeyAgreement: both sides of every group derive the same session
// key, as long as p; a public value of 1 or p-1 is refused.
func TestKeyAgreement(t *testing.T) {
	for _, g := range []DHGroup{FFDHE2048, FFDHE3072, FFDHE4096, FFDHE6144, FFDHE8192} {
		a, err := NewKeyPair(g, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := NewKeyPair(g, nil)
		ka, err1 := a.Shared(b.Public)
		kb, err2 := b.Shared(a.Public)
		if err1 != nil || err2 != nil || !bytes.Equal(ka, kb) || len(ka)*8 != g.Bits() {
			t.Fatalf("%s: %v %v, %d-byte keys equal %v", g, err1, err2, len(ka), bytes.Equal(ka, kb))
		}
		one := make([]byte, len(a.Public))
		one[len(one)-1] = 1
		pm1 := a.g.pm1.FillBytes(make([]byte, len(a.Public)))
		for _, bad := range [][]byte{one, pm1, a.Public[1:]} {
			if _, err := a.Shared(bad); !errors.Is(err, ErrBadMessage) {
				t.Fatalf("%s: a bad peer value accepted (%v)", g, err)
			}
		}
	}
}

// run is one transaction between Authenticate and a Transaction.
func run(t *testing.T, host, ctrl Config) (*Transaction, error) {
	t.Helper()
	tr := NewTransaction(ctrl)
	var pending []byte
	err := Authenticate(host, 7,
		func(b []byte) error { tr.Send(b); return nil },
		func() ([]byte, error) { pending = tr.Receive(); return pending, nil })
	return tr, err
}

// TestTransaction (D3): the host's and the controller's sides agree with
// and without a DH exchange, one way and both ways; a wrong host key, a
// wrong controller key, no shared hash or group and a TLS request fail on
// the side that should notice, and the controller never counts them as
// authenticated.
func TestTransaction(t *testing.T) {
	hk, _ := GenerateSecret(SHA256, nil)
	ck, _ := GenerateSecret(SHA512, nil)
	other, _ := GenerateSecret(SHA256, nil)
	base := Config{SubNQN: testSubNQN, HostNQN: testHostNQN, HostKey: hk}
	with := func(f func(c *Config)) Config { c := base; f(&c); return c }
	for _, tc := range []struct {
		name       string
		host, ctrl Config
		hostErr    error
		ok         bool
	}{
		{"null DH, one way", with(func(c *Config) { c.Groups = []DHGroup{NullDH} }), base, nil, true},
		{"ffdhe2048, one way", base, base, nil, true},
		{"ffdhe3072 SHA-384, both ways", with(func(c *Config) { c.CtrlKey = &ck }),
			with(func(c *Config) { c.CtrlKey = &ck; c.Hashes = []HashID{SHA384}; c.Groups = []DHGroup{FFDHE3072} }), nil, true},
		{"wrong host key", with(func(c *Config) { c.HostKey = other }), base, ErrRefused, false},
		{"wrong controller key", with(func(c *Config) { c.CtrlKey = &other }), with(func(c *Config) { c.CtrlKey = &ck }), ErrControllerAuth, false},
		{"controller without a controller key", with(func(c *Config) { c.CtrlKey = &ck }), base, ErrRefused, false},
		{"no shared hash", with(func(c *Config) { c.Hashes = []HashID{SHA512} }), with(func(c *Config) { c.Hashes = []HashID{SHA256} }), ErrRefused, false},
		{"no shared group", with(func(c *Config) { c.Groups = []DHGroup{NullDH} }), with(func(c *Config) { c.Groups = []DHGroup{FFDHE2048} }), ErrRefused, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := run(t, tc.host, tc.ctrl)
			if tc.hostErr == nil && err != nil || tc.hostErr != nil && !errors.Is(err, tc.hostErr) {
				t.Fatalf("host: %v, want %v", err, tc.hostErr)
			}
			if tr.Authenticated() != tc.ok {
				failed, why := tr.Failed()
				t.Fatalf("controller authenticated %v, want %v (failed %v: %v)", tr.Authenticated(), tc.ok, failed, why)
			}
		})
	}
	// A TLS (secure channel concatenation) request is refused.
	tr := NewTransaction(base)
	n := Negotiate{TID: 1, SCC: 1, Hashes: DefaultHashes, Groups: DefaultGroups}
	tr.Send(n.Marshal())
	if f, err := ParseFailure(tr.Receive()); err != nil || f.ID != IDFailure1 || f.Reason != ReasonConcatMismatch || tr.Authenticated() {
		t.Fatalf("secure channel concatenation: %+v %v", f, err)
	}
	// Out of sequence: a Reply before any Challenge, then a Receive.
	tr = NewTransaction(base)
	tr.Send((&Reply{TID: 0, R: make([]byte, 32)}).Marshal())
	if f, _ := ParseFailure(tr.Receive()); f.ID != IDFailure1 || f.Reason != ReasonIncorrectMessage {
		t.Fatalf("a Reply out of sequence: %+v", f)
	}
}

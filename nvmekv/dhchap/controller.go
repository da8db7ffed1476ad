package dhchap

import (
	"crypto/hmac"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
)

// Config is one side's part in a DH-HMAC-CHAP transaction between a host
// (HostNQN) and a subsystem (SubNQN).
type Config struct {
	SubNQN, HostNQN string
	// HostKey is the host's secret: the host proves it knows it.
	HostKey Secret
	// CtrlKey, when set, is the controller's secret: the host asks the
	// controller to prove it knows it (bidirectional authentication).
	// On the controller side it is what it answers with when asked.
	CtrlKey *Secret
	// Hashes and Groups are the acceptable hash functions and DH groups in
	// order of preference; defaults DefaultHashes and DefaultGroups. The
	// controller picks its first that the host offers.
	Hashes []HashID
	Groups []DHGroup
	// Rand defaults to crypto/rand.
	Rand io.Reader
}

// DefaultHashes and DefaultGroups are what a Config without its own lists
// accepts: every hash and group the protocol defines, the cheapest first
// (the Linux host offers all of them: drivers/nvme/host/auth.c
// nvme_auth_set_dhchap_negotiate_data).
var (
	DefaultHashes = []HashID{SHA256, SHA384, SHA512}
	DefaultGroups = []DHGroup{FFDHE2048, FFDHE3072, FFDHE4096, FFDHE6144, FFDHE8192, NullDH}
)

func (c *Config) defaults() {
	if len(c.Hashes) == 0 {
		c.Hashes = DefaultHashes
	}
	if len(c.Groups) == 0 {
		c.Groups = DefaultGroups
	}
	if c.Rand == nil {
		c.Rand = rand.Reader
	}
}

// Controller steps: which message comes next.
const (
	stepNegotiate = iota // waiting for the host's Negotiate
	stepChallenge        // the next Receive returns the Challenge
	stepReply            // waiting for the host's Reply
	stepSuccess1         // the next Receive returns Success1
	stepSuccess2         // waiting for the host's Success2
	stepFailure1         // the next Receive returns Failure1
	stepDone             // authenticated
	stepFailed           // failed; nothing more
)

// Transaction is the controller's side of DH-HMAC-CHAP on one queue
// (NVMe Base Specification 2.0, §8.13): Send takes what the host sends
// with Authentication Send, Receive answers Authentication Receive. A
// failed check is not a command error: the next Receive returns Failure1
// and the transaction is over (Failed). A Negotiate restarts it
// (re-authentication). Not safe for concurrent use.
type Transaction struct {
	cfg    Config
	step   int
	reason uint8 // Failure1's explanation
	tid    uint16
	hash   HashID
	group  DHGroup
	kp     *KeyPair
	s1     uint32
	c1     []byte
	c2     []byte
	s2     uint32
	sess   []byte
	err    error // why it failed
}

// NewTransaction starts the controller's side; cfg.HostKey must be set.
func NewTransaction(cfg Config) *Transaction {
	cfg.defaults()
	return &Transaction{cfg: cfg}
}

// Authenticated reports that the host proved its key (and, if it asked,
// that it accepted the controller's response).
func (t *Transaction) Authenticated() bool { return t.step == stepDone }

// Done reports that the transaction is over: authenticated, or failed
// with Failure1 sent (or the host's Failure2 received).
func (t *Transaction) Done() bool { return t.step == stepDone || t.step == stepFailed }

// Failed reports that the transaction ended in failure, and why.
func (t *Transaction) Failed() (bool, error) {
	return t.step == stepFailed || t.step == stepFailure1, t.err
}

// Selected is the hash and DH group the controller chose (after Negotiate).
func (t *Transaction) Selected() (HashID, DHGroup) { return t.hash, t.group }

func (t *Transaction) fail(reason uint8, err error) {
	t.step, t.reason, t.err = stepFailure1, reason, err
}

// Send processes a message the host sent.
func (t *Transaction) Send(b []byte) {
	h, err := ParseHeader(b)
	if err != nil {
		t.fail(ReasonIncorrectPayload, err)
		return
	}
	if h.Type == TypeCommon && h.ID == IDNegotiate {
		t.negotiate(b)
		return
	}
	if h.Type == TypeCommon && h.ID == IDFailure2 {
		f, _ := ParseFailure(b)
		t.step, t.err = stepFailed, fmt.Errorf("%w: the host ended the transaction: %s", ErrRefused, ReasonText(f.Reason))
		return
	}
	if h.TID != t.tid {
		t.fail(ReasonIncorrectPayload, fmt.Errorf("%w: transaction %d, expected %d", ErrBadMessage, h.TID, t.tid))
		return
	}
	switch {
	case h.Type == TypeDHCHAP && h.ID == IDReply && t.step == stepReply:
		t.reply(b)
	case h.Type == TypeDHCHAP && h.ID == IDSuccess2 && t.step == stepSuccess2:
		t.step = stepDone
	default:
		t.fail(ReasonIncorrectMessage, fmt.Errorf("%w: message %#x/%#x out of sequence", ErrBadMessage, h.Type, h.ID))
	}
}

func (t *Transaction) negotiate(b []byte) {
	*t = Transaction{cfg: t.cfg}
	n, reason, err := ParseNegotiate(b)
	t.tid = n.TID
	switch {
	case err != nil:
		t.fail(reason, err)
		return
	case n.SCC != 0:
		t.fail(ReasonConcatMismatch, fmt.Errorf("%w: secure channel concatenation (TLS) requested", ErrUnsupported))
		return
	}
	t.hash = pick(t.cfg.Hashes, n.Hashes)
	if t.hash == 0 {
		t.fail(ReasonHashUnusable, fmt.Errorf("%w: the host offers hashes %v, the controller takes %v", ErrUnsupported, n.Hashes, t.cfg.Hashes))
		return
	}
	t.group = 0xff
	for _, g := range t.cfg.Groups {
		if slices.Contains(n.Groups, g) {
			t.group = g
			break
		}
	}
	if t.group == 0xff {
		t.fail(ReasonDHGroupUnusable, fmt.Errorf("%w: the host offers DH groups %v, the controller takes %v", ErrUnsupported, n.Groups, t.cfg.Groups))
		return
	}
	t.step = stepChallenge
}

// pick is the first of ours that theirs contains (0 if none).
func pick(ours, theirs []HashID) HashID {
	for _, h := range ours {
		if slices.Contains(theirs, h) {
			return h
		}
	}
	return 0
}

// Receive returns the message the host's Authentication Receive gets.
func (t *Transaction) Receive() []byte {
	switch t.step {
	case stepChallenge:
		if b, err := t.challenge(); err == nil {
			return b
		} else {
			t.fail(ReasonFailed, err)
		}
	case stepSuccess1:
		s := Success1{TID: t.tid, HL: t.hash.Len()}
		if t.c2 != nil {
			if t.cfg.CtrlKey == nil {
				t.fail(ReasonFailed, fmt.Errorf("%w: the host asks the controller to authenticate and no controller secret is configured for it", ErrRefused))
				break
			}
			s.R2 = Response(t.hash, t.cfg.CtrlKey.Transformed(t.cfg.SubNQN), t.c2, t.s2, t.tid, RoleController, t.cfg.SubNQN, t.cfg.HostNQN, t.sess)
			t.step = stepSuccess2
		} else {
			t.step = stepDone
		}
		return s.Marshal()
	case stepNegotiate, stepReply, stepSuccess2, stepDone, stepFailed:
		t.fail(ReasonIncorrectMessage, fmt.Errorf("%w: Authentication Receive with no message due", ErrBadMessage))
	}
	f := Failure{ID: IDFailure1, TID: t.tid, Reason: t.reason}
	t.step = stepFailed
	return f.Marshal()
}

func (t *Transaction) challenge() ([]byte, error) {
	t.c1 = make([]byte, t.hash.Len())
	var s [4]byte
	if _, err := io.ReadFull(t.cfg.Rand, t.c1); err != nil {
		return nil, err
	}
	for t.s1 == 0 {
		if _, err := io.ReadFull(t.cfg.Rand, s[:]); err != nil {
			return nil, err
		}
		t.s1 = binary.LittleEndian.Uint32(s[:])
	}
	c := Challenge{TID: t.tid, Hash: t.hash, Group: t.group, Seq: t.s1, C: t.c1}
	if t.group != NullDH {
		kp, err := NewKeyPair(t.group, t.cfg.Rand)
		if err != nil {
			return nil, err
		}
		t.kp, c.DHV = kp, kp.Public
	}
	t.step = stepReply
	return c.Marshal(), nil
}

func (t *Transaction) reply(b []byte) {
	r, err := ParseReply(b, t.hash.Len())
	if err != nil {
		t.fail(ReasonIncorrectPayload, err)
		return
	}
	switch {
	case t.kp != nil && len(r.DHV) == 0, t.kp == nil && len(r.DHV) != 0:
		t.fail(ReasonIncorrectPayload, fmt.Errorf("%w: a %d-byte DH value for DH group %s", ErrBadMessage, len(r.DHV), t.group))
		return
	case t.kp != nil:
		if t.sess, err = t.kp.Shared(r.DHV); err != nil {
			t.fail(ReasonDHGroupUnusable, err)
			return
		}
	}
	want := Response(t.hash, t.cfg.HostKey.Transformed(t.cfg.HostNQN), t.c1, t.s1, t.tid, RoleHost, t.cfg.HostNQN, t.cfg.SubNQN, t.sess)
	if !hmac.Equal(want, r.R) {
		t.fail(ReasonFailed, fmt.Errorf("%w: the host's response does not match its secret", ErrRefused))
		return
	}
	if r.C2 != nil && r.Seq != 0 {
		t.c2, t.s2 = r.C2, r.Seq
	}
	t.step = stepSuccess1
}

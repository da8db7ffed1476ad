package dhchap

import (
	"crypto/hmac"
	"encoding/binary"
	"fmt"
	"io"
)

// Authenticate runs the host's side of one DH-HMAC-CHAP transaction
// (NVMe Base Specification 2.0, §8.13) with transaction identifier tid:
// send carries a message with Authentication Send, receive fetches one
// with Authentication Receive. It authenticates the controller too when
// cfg.CtrlKey is set. A refusal by the controller is ErrRefused with its
// reason; a controller that fails its own proof gets Failure2 and the
// error wraps ErrControllerAuth.
func Authenticate(cfg Config, tid uint16, send func([]byte) error, receive func() ([]byte, error)) error {
	cfg.defaults()
	n := Negotiate{TID: tid, Hashes: cfg.Hashes, Groups: cfg.Groups}
	if err := send(n.Marshal()); err != nil {
		return err
	}
	b, err := receive()
	if err != nil {
		return err
	}
	if err := refused(b, IDChallenge); err != nil {
		return err
	}
	c, err := ParseChallenge(b)
	if err != nil {
		return err
	}
	fail2 := func(reason uint8, err error) error {
		f := Failure{ID: IDFailure2, TID: tid, Reason: reason}
		send(f.Marshal())
		return err
	}
	if c.TID != tid || c.Hash.New() == nil {
		return fail2(ReasonIncorrectPayload, fmt.Errorf("%w: Challenge for transaction %d with hash %d", ErrBadMessage, c.TID, c.Hash))
	}
	r := Reply{TID: tid}
	var sess []byte
	if c.Group != NullDH {
		kp, err := NewKeyPair(c.Group, cfg.Rand)
		if err != nil {
			return fail2(ReasonDHGroupUnusable, err)
		}
		if sess, err = kp.Shared(c.DHV); err != nil {
			return fail2(ReasonDHGroupUnusable, err)
		}
		r.DHV = kp.Public
	} else if len(c.DHV) != 0 {
		return fail2(ReasonIncorrectPayload, fmt.Errorf("%w: a DH value with the null DH group", ErrBadMessage))
	}
	r.R = Response(c.Hash, cfg.HostKey.Transformed(cfg.HostNQN), c.C, c.Seq, tid, RoleHost, cfg.HostNQN, cfg.SubNQN, sess)
	if cfg.CtrlKey != nil {
		r.C2 = make([]byte, c.Hash.Len())
		var s [4]byte
		for r.Seq == 0 {
			if _, err := io.ReadFull(cfg.Rand, s[:]); err != nil {
				return err
			}
			r.Seq = binary.LittleEndian.Uint32(s[:])
		}
		if _, err := io.ReadFull(cfg.Rand, r.C2); err != nil {
			return err
		}
	}
	if err := send(r.Marshal()); err != nil {
		return err
	}
	if b, err = receive(); err != nil {
		return err
	}
	if err := refused(b, IDSuccess1); err != nil {
		return err
	}
	s1, err := ParseSuccess1(b)
	if err != nil {
		return err
	}
	if cfg.CtrlKey == nil {
		return nil
	}
	want := Response(c.Hash, cfg.CtrlKey.Transformed(cfg.SubNQN), r.C2, r.Seq, tid, RoleController, cfg.SubNQN, cfg.HostNQN, sess)
	if s1.R2 == nil || !hmac.Equal(want, s1.R2) {
		return fail2(ReasonFailed, fmt.Errorf("%w: its response does not match the controller secret", ErrControllerAuth))
	}
	return send(Success2(tid))
}

// refused turns a Failure1 (or any message other than want) into an error.
func refused(b []byte, want uint8) error {
	h, err := ParseHeader(b)
	if err != nil {
		return err
	}
	if h.Type == TypeCommon && h.ID == IDFailure1 {
		f, _ := ParseFailure(b)
		return fmt.Errorf("%w: %s", ErrRefused, ReasonText(f.Reason))
	}
	if h.Type != TypeDHCHAP || h.ID != want {
		return fmt.Errorf("%w: message %#x/%#x, want %#x", ErrBadMessage, h.Type, h.ID, want)
	}
	return nil
}

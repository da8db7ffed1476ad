package tcptarget

import (
	"encoding/binary"
	"fmt"
	"net"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/nvmekv/dhchap"
	"github.com/tiercache/tiercache/nvmekv/nvmetcp"
)

// HostAuth is one host allowed to connect to the subsystem.
type HostAuth struct {
	// NQN is the host's NQN (what its Connect carries).
	NQN string
	// Secret, when set, makes the host authenticate every queue with
	// DH-HMAC-CHAP (NVMe Base Specification 2.0, §8.13) before any other
	// command: the Connect response asks for it (ATR), and until then
	// every command but Authentication Send/Receive answers
	// Authentication Required.
	Secret *dhchap.Secret
	// CtrlSecret is what the controller proves it knows when the host
	// asks (bidirectional authentication; the host's dhchap_ctrl_secret).
	CtrlSecret *dhchap.Secret
}

// host returns the allow-list entry of nqn: (nil, true) when any host may
// connect (no list), (nil, false) when nqn is not allowed.
func (t *Target) host(nqn string) (*HostAuth, bool) {
	if len(t.opts.Hosts) == 0 {
		return nil, true
	}
	for i := range t.opts.Hosts {
		if t.opts.Hosts[i].NQN == nqn {
			return &t.opts.Hosts[i], true
		}
	}
	return nil, false
}

// AuthRequired reports that every host that may connect must
// authenticate: a list of hosts, each with a Secret.
func (o *Options) AuthRequired() bool {
	return len(o.Hosts) > 0 && !slices.ContainsFunc(o.Hosts, func(h HostAuth) bool { return h.Secret == nil })
}

// validateHosts checks the allow list.
func (o *Options) validateHosts(bad func(string, ...any)) {
	seen := map[string]bool{}
	for _, h := range o.Hosts {
		switch {
		case h.NQN == "" || len(h.NQN) > nvmetcp.NQNFieldBytes-1:
			bad("host NQN %q must be 1..%d bytes", h.NQN, nvmetcp.NQNFieldBytes-1)
		case seen[h.NQN]:
			bad("host %s is listed twice", h.NQN)
		case h.CtrlSecret != nil && h.Secret == nil:
			bad("host %s has a controller secret but no host secret", h.NQN)
		}
		seen[h.NQN] = true
	}
}

// loopbackOnly checks a listener's address: without AuthRequired the
// target serves loopback addresses only (any host that reaches the port
// could otherwise read, overwrite and delete every namespace).
func (t *Target) loopbackOnly(ln net.Listener) error {
	if t.opts.AuthRequired() {
		return nil
	}
	if a, ok := ln.Addr().(*net.TCPAddr); ok && !a.IP.IsLoopback() {
		return fmt.Errorf("%w: %s is not a loopback address and not every allowed host has a DH-HMAC-CHAP secret (Options.Hosts); any host that reaches it could read, overwrite and delete every namespace", ErrInsecure, a)
	}
	return nil
}

// startAuth arms a queue's authentication after its Connect: the
// transaction and the deadline by which it must succeed.
func (c *conn) startAuth(h *HostAuth) {
	c.auth = dhchap.NewTransaction(dhchap.Config{SubNQN: c.t.opts.NQN, HostNQN: h.NQN, HostKey: *h.Secret, CtrlKey: h.CtrlSecret,
		Hashes: c.t.opts.AuthHashes, Groups: c.t.opts.AuthGroups})
	c.authDeadline = time.AfterFunc(c.t.opts.AuthTimeout, func() {
		if !c.authed.Load() {
			c.t.log.Warn("tcptarget: queue not authenticated in time, closing it", zap.String("host", h.NQN),
				zap.String("remote", c.nc.RemoteAddr().String()), zap.Duration("after", c.t.opts.AuthTimeout))
			c.nc.Close()
		}
	})
}

// endAuth counts a queue that ends without having authenticated or failed
// to (a host without a secret closes right after Connect; one that stays
// is closed at the deadline).
func (c *conn) endAuth() {
	if c.authDeadline != nil {
		c.authDeadline.Stop()
	}
	if c.auth != nil && !c.authed.Load() && !c.authFailed {
		c.t.st.authMissing.Add(1)
		c.t.log.Warn("tcptarget: queue closed without authenticating", zap.String("host", c.ctrl.hostNQN), zap.Uint16("qid", c.qid),
			zap.String("remote", c.nc.RemoteAddr().String()))
	}
}

// authPending reports that the queue must authenticate before cmd runs.
func (c *conn) authPending(cmd *command) bool {
	if c.auth == nil || c.authed.Load() {
		return false
	}
	if cmd.opcode() == nvmetcp.OpFabrics && (cmd.sqe[4] == nvmetcp.FCAuthSend || cmd.sqe[4] == nvmetcp.FCAuthReceive) {
		return false
	}
	c.t.st.authRequired.Add(1)
	return true
}

// authCommand runs Authentication Send (the host's message in the data,
// TL bytes) or Receive (the controller's next message, at most AL bytes):
// SECP E9h, SPSP0 = SPSP1 = 01h (DH-HMAC-CHAP) at SQE bytes 43, 41, 42,
// TL/AL at 44 (struct nvmf_auth_send_command). A failed transaction is
// not a command error: the host learns it from Failure1, then the queue
// is closed.
func (c *conn) authCommand(cmd *command) {
	s := cmd.sqe
	n := binary.LittleEndian.Uint32(s[44:])
	send := s[4] == nvmetcp.FCAuthSend
	switch {
	case c.auth == nil:
		c.respond(cmd, scCmdSeqError|scDNR, 0, nil) // nothing to authenticate
		return
	case s[43] != nvmetcp.AuthSECPDHCHAP || s[41] != nvmetcp.AuthSPSP || s[42] != nvmetcp.AuthSPSP || n == 0 || n != cmd.sgl.Len:
		c.respond(cmd, scInvalidField|scDNR, 0, nil)
		return
	}
	if send {
		c.auth.Send(cmd.data)
		c.authProgress()
		c.respond(cmd, scSuccess, 0, nil)
		c.authEnd()
		return
	}
	msg := c.auth.Receive()
	if len(msg) > int(n) {
		c.respond(cmd, scInvalidField|scDNR, 0, nil)
		c.t.st.authFailed.Add(1)
		c.nc.Close()
		return
	}
	c.authProgress()
	c.respond(cmd, scSuccess, 0, msg)
	c.authEnd()
}

// authProgress counts the transaction's outcome (before the command's
// completion, so a host that sees it sees the count).
func (c *conn) authProgress() {
	if c.auth.Authenticated() && !c.authed.Load() {
		c.authed.Store(true)
		c.authDeadline.Stop()
		c.t.st.authOK.Add(1)
		h, g := c.auth.Selected()
		c.t.log.Debug("tcptarget: queue authenticated", zap.String("host", c.ctrl.hostNQN), zap.Uint16("qid", c.qid), zap.Stringer("hash", h), zap.Stringer("dhgroup", g))
		return
	}
	failed, why := c.auth.Failed()
	if !failed {
		return
	}
	if !c.authFailed {
		c.authFailed = true
		c.t.st.authFailed.Add(1)
		c.t.log.Warn("tcptarget: DH-HMAC-CHAP authentication failed", zap.String("host", c.ctrl.hostNQN), zap.Uint16("qid", c.qid),
			zap.String("remote", c.nc.RemoteAddr().String()), zap.Error(why))
	}
}

// authEnd closes a queue whose transaction failed and is over (Failure1
// sent, or the host's Failure2 received), as nvmet_ctrl_fatal_error does.
func (c *conn) authEnd() {
	if failed, _ := c.auth.Failed(); failed && c.auth.Done() {
		c.nc.Close()
	}
}

package tcptarget

import (
	"encoding/binary"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/nvmekv/nvmetcp"
)

// fabrics executes a Fabrics command.
func (c *conn) fabrics(cmd *command) {
	switch cmd.sqe[4] {
	case nvmetcp.FCConnect:
		st, res := c.connect(cmd)
		c.respond(cmd, st, res, nil)
	case nvmetcp.FCPropertyGet:
		st, v := c.propGet(cmd)
		c.respond(cmd, st, v, nil)
	case nvmetcp.FCPropertySet:
		c.respond(cmd, c.propSet(cmd), 0, nil)
	case nvmetcp.FCAuthSend, nvmetcp.FCAuthReceive:
		c.authCommand(cmd)
	default:
		c.respond(cmd, scInvalidOpcode|scDNR, 0, nil)
	}
	if c.qid == 0 && c.ctrl != nil {
		c.ctrl.armKeepAlive()
	}
}

// connectAttr is a Connect response DW0 for Connect Invalid Parameters:
// IATTR bit 16 (0 = the field is in the SQE, 1 = in the data) and IPO, the
// byte offset of the bad field (NVMe over Fabrics, Connect Response;
// drivers/nvme/target/fabrics-cmd.c).
func connectAttr(inData bool, off uint16) uint64 {
	v := uint64(off)
	if inData {
		v |= 1 << 16
	}
	return v
}

// connect handles Connect (struct nvmf_connect_command: RECFMT at 40, QID
// at 42, SQSIZE (0's based) at 44, CATTR at 46, KATO (ms) at 48; data
// struct nvmf_connect_data: HOSTID at 0, CNTLID at 16, SUBNQN at 256,
// HOSTNQN at 512). A host NQN not in Options.Hosts is refused (Connect
// Invalid Host); the result is the CNTLID, with ATR when the host must
// authenticate.
func (c *conn) connect(cmd *command) (uint16, uint64) {
	le := binary.LittleEndian
	if c.ctrl != nil {
		return scCmdSeqError | scDNR, 0 // this queue is connected already
	}
	if len(cmd.data) != nvmetcp.ConnectBytes {
		return scSGLLengthInvalid | scDNR, 0
	}
	recfmt, qid, sqsize := le.Uint16(cmd.sqe[40:]), le.Uint16(cmd.sqe[42:]), le.Uint16(cmd.sqe[44:])
	cattr, kato := cmd.sqe[46], le.Uint32(cmd.sqe[48:])
	d := cmd.data
	var hostID [16]byte
	copy(hostID[:], d[0:16])
	cntlid := le.Uint16(d[16:])
	subNQN, hostNQN := nvmetcp.CString(d[256:512]), nvmetcp.CString(d[512:768])
	switch {
	case recfmt != 0:
		return scConnectFormat | scDNR, 0
	case subNQN != c.t.opts.NQN:
		return scConnectInvalidPar | scDNR, connectAttr(true, 256)
	case hostNQN == "":
		return scConnectInvalidHost | scDNR, connectAttr(true, 512)
	}
	h, allowed := c.t.host(hostNQN)
	switch {
	case !allowed:
		c.t.st.hostsRefused.Add(1)
		c.t.log.Warn("tcptarget: Connect from a host not allowed", zap.String("host", hostNQN), zap.String("remote", c.nc.RemoteAddr().String()))
		return scConnectInvalidHost | scDNR, connectAttr(true, 512)
	case sqsize == 0 || int(sqsize) >= c.t.opts.QueueEntries:
		return scConnectInvalidPar | scDNR, connectAttr(false, 44)
	}
	if qid == 0 {
		if cntlid != nvmetcp.CntlidAny {
			return scConnectInvalidPar | scDNR, connectAttr(true, 16)
		}
		ctrl := c.t.addController(c, hostNQN, hostID, kato)
		if ctrl == nil {
			return scConnectCtrlBusy | scDNR, 0
		}
		c.attach(ctrl, 0, sqsize, cattr)
		return scSuccess, c.connected(h, ctrl.id)
	}
	ctrl := c.t.controller(cntlid)
	switch {
	case ctrl == nil:
		return scConnectInvalidPar | scDNR, connectAttr(true, 16)
	case ctrl.hostNQN != hostNQN || ctrl.hostID != hostID:
		return scConnectInvalidHost | scDNR, connectAttr(true, 512)
	case !ctrl.ready():
		return scCmdSeqError | scDNR, 0
	case int(qid) > ctrl.grantedQueues():
		return scConnectInvalidPar | scDNR, connectAttr(false, 42)
	case !ctrl.addIOQueue(qid, c):
		return scCmdSeqError | scDNR, 0 // that queue is connected on another connection
	}
	c.attach(ctrl, qid, sqsize, cattr)
	return scSuccess, c.connected(h, ctrl.id)
}

// connected is the Connect response DW0 of a queue that connected: the
// CNTLID, and Authentication Transaction Required (bit 17,
// NVME_CONNECT_AUTHREQ_ATR) when the host has a secret, whose transaction
// it then starts.
func (c *conn) connected(h *HostAuth, cntlid uint16) uint64 {
	if h == nil || h.Secret == nil {
		return uint64(cntlid)
	}
	c.startAuth(h)
	return uint64(cntlid) | nvmetcp.ConnectAuthATR
}

// attach binds the connection to its queue: at most sqsize+1 commands in
// flight from now on.
func (c *conn) attach(ctrl *controller, qid, sqsize uint16, cattr uint8) {
	c.wmu.Lock()
	c.noFlow = cattr&0x04 != 0 // CATTR bit 2: disable SQ flow control
	c.wmu.Unlock()
	c.mu.Lock()
	c.depth = int(sqsize) + 1
	c.mu.Unlock()
	c.ctrl, c.qid = ctrl, qid
}

// propGet handles Property Get (ATTRIB at 40: bit 0 = 8-byte property;
// OFST at 44). Like nvmet_execute_prop_get: CAP as 8 bytes; VS, CC and
// CSTS as 4 bytes; anything else Invalid Field.
func (c *conn) propGet(cmd *command) (uint16, uint64) {
	if c.ctrl == nil || c.qid != 0 {
		return scInvalidField | scDNR, 0
	}
	wide := cmd.sqe[40]&1 != 0
	off := binary.LittleEndian.Uint32(cmd.sqe[44:])
	ct := c.ctrl
	ct.mu.Lock()
	defer ct.mu.Unlock()
	switch {
	case off == nvmetcp.RegCAP && wide:
		return scSuccess, ct.capValue()
	case off == nvmetcp.RegVS && !wide:
		return scSuccess, versionValue
	case off == nvmetcp.RegCC && !wide:
		return scSuccess, uint64(ct.cc)
	case off == nvmetcp.RegCSTS && !wide:
		return scSuccess, uint64(ct.csts)
	}
	return scInvalidField | scDNR, 0
}

// propSet handles Property Set (VALUE at 48): CC only, 4 bytes.
func (c *conn) propSet(cmd *command) uint16 {
	if c.ctrl == nil || c.qid != 0 {
		return scInvalidField | scDNR
	}
	wide := cmd.sqe[40]&1 != 0
	off := binary.LittleEndian.Uint32(cmd.sqe[44:])
	if off != nvmetcp.RegCC || wide {
		return scInvalidField | scDNR
	}
	c.ctrl.setCC(binary.LittleEndian.Uint32(cmd.sqe[48:]))
	return scSuccess
}

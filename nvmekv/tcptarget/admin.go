package tcptarget

// Admin opcodes (NVMe Base Specification, Admin Command Set;
// include/linux/nvme.h enum nvme_admin_opcode).
const (
	adminGetLogPage  = 0x02
	adminIdentify    = 0x06
	adminAbort       = 0x08
	adminSetFeatures = 0x09
	adminGetFeatures = 0x0a
	adminAER         = 0x0c
	adminKeepAlive   = 0x18

	aerLimit = 4 // AERL+1 held Asynchronous Event Requests
)

// Feature identifiers (NVMe Base Specification, Feature Identifiers;
// include/linux/nvme.h NVME_FEAT_*).
const (
	featNumQueues = 0x07
	featAsyncEvt  = 0x0b
	featKATO      = 0x0f
	featIOCSProf  = 0x19 // I/O Command Set Profile
	// featKVConfig is the KV Command Set's Key Value Configuration
	// feature. CDW11 bit 0 is EDNEK, Error on Delete of Non-Existent Key:
	// set, a Delete of a missing key completes with KV Key Does Not Exist
	// (87h); clear, it completes successfully. Bits 31:1 are reserved.
	// (NVMe Key Value Command Set Specification 1.0, Set Features, Key
	// Value Configuration; libnvme names FID 20h NVME_FEAT_FID_KEY_VALUE.)
	featKVConfig  = 0x20
	kvConfigEDNEK = 1 << 0
	// kvConfigDefault: EDNEK set, what the namespace does on its own (the
	// kvconform suite's Delete of a missing key expects 87h).
	kvConfigDefault = kvConfigEDNEK
)

// admin executes an admin command on the admin queue.
func (c *conn) admin(cmd *command) {
	ct := c.ctrl
	ct.armKeepAlive()
	op := cmd.opcode()
	if !ct.ready() && op != adminKeepAlive {
		c.respond(cmd, scCmdSeqError|scDNR, 0, nil) // the host enables the controller (CC.EN) first
		return
	}
	switch op {
	case adminIdentify:
		st, data := c.identify(cmd)
		c.respond(cmd, st, 0, fit(data, cmd.sgl.Len, st))
	case adminGetLogPage:
		st, data := c.getLogPage(cmd)
		c.respond(cmd, st, 0, fit(data, cmd.sgl.Len, st))
	case adminSetFeatures:
		st, dw0 := c.setFeatures(cmd)
		c.respond(cmd, st, dw0, nil)
	case adminGetFeatures:
		st, dw0 := c.getFeatures(cmd)
		c.respond(cmd, st, dw0, nil)
	case adminKeepAlive:
		c.respond(cmd, scSuccess, 0, nil)
	case adminAbort:
		c.respond(cmd, scSuccess, 1, nil) // DW0 bit 0: the command was not aborted
	case adminAER:
		c.asyncEventRequest(cmd)
	case adminNSManagement, adminNSAttachment:
		// On a goroutine of their own: creating a namespace's store and
		// writing the state file take time, and Keep Alive must not wait
		// behind them (the host resets a controller whose Keep Alive times
		// out).
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			if op == adminNSManagement {
				st, dw0 := c.nsManagement(cmd)
				c.respond(cmd, st, dw0, nil)
			} else {
				c.respond(cmd, c.nsAttachment(cmd), 0, nil)
			}
		}()
	default:
		c.respond(cmd, scInvalidOpcode|scDNR, 0, nil)
	}
}

// fit trims data to the host's buffer (the SGL length); nothing on error.
func fit(data []byte, n uint32, st uint16) []byte {
	if st != scSuccess {
		return nil
	}
	if int(n) < len(data) {
		return data[:n]
	}
	return data
}

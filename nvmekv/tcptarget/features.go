package tcptarget

// setFeatures handles Set Features (FID at CDW10[7:0], SV at CDW10 bit 31,
// the value in CDW11).
func (c *conn) setFeatures(cmd *command) (uint16, uint64) {
	fid, v := uint8(cmd.cdw(10)), cmd.cdw(11)
	if cmd.cdw(10)>>31 != 0 {
		return 0x10d | scDNR, 0 // Feature Identifier Not Saveable
	}
	ct := c.ctrl
	ct.mu.Lock()
	defer ct.mu.Unlock()
	switch fid {
	case featNumQueues:
		// NSQR CDW11[15:0], NCQR [31:16], both 0's based; 0xFFFF is
		// invalid. The answer (DW0) is what was allocated, 0's based.
		nsq, ncq := v&0xffff, v>>16
		if nsq == 0xffff || ncq == 0xffff {
			return scInvalidField | scDNR, 0
		}
		ct.nQueues = min(int(min(nsq, ncq))+1, c.t.opts.MaxIOQueues)
		n := uint64(ct.nQueues - 1)
		return scSuccess, n | n<<16
	case featAsyncEvt:
		ct.aec = v // no event is ever sent (OAES 0), whatever is enabled
		return scSuccess, 0
	case featKATO:
		ct.katoMs = v
		ct.mu.Unlock()
		ct.armKeepAlive()
		ct.mu.Lock()
		return scSuccess, 0
	case featIOCSProf:
		// CDW11[8:0] indexes the I/O Command Set data structure (Identify
		// CNS 1Ch): only vector 0 (NVM + KV) exists.
		if v&0x1ff != 0 {
			return scIOCSCombination | scDNR, 0
		}
		ct.profile = 0
		return scSuccess, 0
	case featKVConfig:
		if v&^kvConfigEDNEK != 0 {
			return scInvalidField | scDNR, 0 // a reserved bit
		}
		ct.kvConfig.Store(uint32(v))
		return scSuccess, 0
	}
	return scInvalidField | scDNR, 0
}

// getFeatures handles Get Features (FID at CDW10[7:0], SEL at [10:8]):
// current, default and saved values are the same, except Key Value
// Configuration's default and saved value (SEL 1, 2), which is its
// default: nothing is saveable; SEL 3 (supported capabilities) reports 0x4
// (changeable) for the features Set takes.
func (c *conn) getFeatures(cmd *command) (uint16, uint64) {
	fid, sel := uint8(cmd.cdw(10)), cmd.cdw(10)>>8&0x7
	ct := c.ctrl
	ct.mu.Lock()
	defer ct.mu.Unlock()
	var v uint64
	switch fid {
	case featNumQueues:
		n := uint64(c.t.opts.MaxIOQueues - 1)
		if ct.nQueues > 0 {
			n = uint64(ct.nQueues - 1)
		}
		v = n | n<<16
	case featAsyncEvt:
		v = uint64(ct.aec)
	case featKATO:
		v = uint64(ct.katoMs)
	case featIOCSProf:
		v = uint64(ct.profile)
	case featKVConfig:
		v = uint64(ct.kvConfig.Load())
		if sel == 1 || sel == 2 {
			v = kvConfigDefault
		}
	default:
		return scInvalidField | scDNR, 0
	}
	if sel == 3 {
		v = 0x4
	} else if sel > 3 {
		return scInvalidField | scDNR, 0
	}
	return scSuccess, v
}

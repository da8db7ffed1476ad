package tcptarget

import (
	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/nvmetcp"
)

// kvCommand is the part of an I/O capsule the KV command set defines (KV
// Command Set 1.0 §3.1–§3.2: key in CDW2/3 and CDW14/15, CDW10 = value
// size or host buffer size, CDW11 = key length and options), parsed with
// nvmekv's own decoder.
func kvCommand(cmd *command) nvmekv.Command { return nvmekv.ParseCommand(&cmd.sqe) }

// precheck refuses an I/O command that would fail anyway before its write
// data is asked for: wrong namespace, unknown opcode, bad key length, a
// Store value over MaxValueBytes or a value size that is not the data
// length (so an over-long Store never makes the target buffer its data).
func (c *conn) precheck(cmd *command) uint16 {
	if c.qid == 0 || c.ctrl == nil {
		return scSuccess // admin and Fabrics writes are checked by their handlers
	}
	k := kvCommand(cmd)
	if !c.t.nss.active(k.NSID, c.ctrl.hostNQN) {
		return scInvalidNS | scDNR // not a namespace attached to this host
	}
	op := nvmekv.Opcode(k.Opcode)
	if op != nvmekv.OpFlush && !op.IsKV() {
		return scInvalidOpcode | scDNR
	}
	if k.Flags&^nvmetcp.SQEFlagsSGL != 0 {
		return scInvalidField | scDNR // fused operations are not supported
	}
	if op == nvmekv.OpFlush {
		return scSuccess
	}
	if kl := k.KeyLen(); kl > nvmekv.MaxKeyLen || (kl == 0 && op != nvmekv.OpList) {
		return kvStatus(nvmekv.SCInvalidKeySize)
	}
	switch op {
	case nvmekv.OpStore:
		if int(k.CDW10) > c.t.opts.MaxValueBytes {
			return kvStatus(nvmekv.SCInvalidValueSize)
		}
		if k.CDW10 != cmd.sgl.Len {
			return scSGLLengthInvalid | scDNR
		}
		if o := k.Options(); o&^(nvmekv.StoreMustExist|nvmekv.StoreMustNotExist|nvmekv.StoreNoCompress) != 0 ||
			o&(nvmekv.StoreMustExist|nvmekv.StoreMustNotExist) == nvmekv.StoreMustExist|nvmekv.StoreMustNotExist {
			return scInvalidField | scDNR
		}
	case nvmekv.OpRetrieve, nvmekv.OpList:
		if k.CDW10 != cmd.sgl.Len {
			return scSGLLengthInvalid | scDNR
		}
	}
	return scSuccess
}

// io executes a KV command on the namespace (on its own goroutine) and
// completes it: Store, Retrieve, List, Delete, Exist and Flush, with the
// namespace's own status codes (Retrieve DW0 = the stored value size, List
// DW0 = the keys found).
func (c *conn) io(cmd *command) {
	if st := c.precheck(cmd); st != scSuccess {
		c.respond(cmd, st, 0, nil)
		return
	}
	k := kvCommand(cmd)
	op := nvmekv.Opcode(k.Opcode)
	e, release := c.t.nss.acquire(k.NSID, c.ctrl.hostNQN, false)
	if e == nil {
		c.respond(cmd, scInvalidNS|scDNR, 0, nil) // detached or deleted since the precheck
		return
	}
	defer release()
	ns := e.ns
	if op == nvmekv.OpFlush {
		c.respond(cmd, statusOf(ns.Flush(c.t.ctx)), 0, nil)
		return
	}
	key, kl, _ := nvmekv.UnpackKey(&k)
	o := &nvmekv.Op{Code: op, Key: key[:kl], Options: k.Options()}
	switch op {
	case nvmekv.OpStore:
		o.Buf = cmd.data
		if o.Buf == nil {
			o.Buf = []byte{}
		}
		c.t.st.writes.Add(1)
	case nvmekv.OpDelete:
		c.t.st.writes.Add(1)
	case nvmekv.OpRetrieve, nvmekv.OpList:
		o.Buf = make([]byte, k.CDW10)
		c.t.st.reads.Add(1)
	}
	err := ns.Do(c.t.ctx, o)
	if err == nil {
		err = o.Err
	}
	st := statusOf(err)
	if op == nvmekv.OpDelete && st&0x7ff == uint16(nvmekv.SCKeyNotExists) && c.ctrl.kvConfig.Load()&kvConfigEDNEK == 0 {
		st = scSuccess // EDNEK clear: a Delete of a missing key succeeds (featKVConfig)
	}
	var data []byte
	if st == scSuccess {
		switch op {
		case nvmekv.OpRetrieve:
			data = o.Buf[:min(int(o.DW0), len(o.Buf))] // a larger value is truncated to the host buffer
		case nvmekv.OpList:
			data = o.Buf
		}
	}
	c.respond(cmd, st, uint64(o.DW0), data)
}

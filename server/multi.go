package server

// txState is a connection's MULTI block: the commands queued so far (their
// arguments copied, since the read buffer is reused) and whether one of
// them was refused, which makes EXEC abort.
type txState struct {
	active bool
	failed bool
	cmds   []*command
	args   [][][]byte
	bytes  int
}

// maxTxBytes bounds the argument bytes one MULTI block may queue.
const maxTxBytes = 512 << 20

func (t *txState) queue(cmd *command, args [][]byte) {
	n := 0
	for _, a := range args {
		n += len(a)
	}
	if t.bytes+n > maxTxBytes {
		t.failed = true
		return
	}
	t.bytes += n
	cp := make([][]byte, len(args))
	for i, a := range args {
		cp[i] = append([]byte(nil), a...)
	}
	t.cmds = append(t.cmds, cmd)
	t.args = append(t.args, cp)
}

// fail marks an open MULTI block as refused (a bad command inside it).
func (t *txState) fail() {
	if t.active {
		t.failed = true
	}
}

func (t *txState) reset() { *t = txState{} }

func (c *conn) cmdMulti(args [][]byte) {
	if c.tx.active {
		c.w.Error("ERR MULTI calls can not be nested")
		return
	}
	c.tx.active = true
	c.w.OK()
}

// cmdExec runs the queued commands back to back and replies with an array
// of their replies. They are not isolated from other connections (see the
// package caveats).
func (c *conn) cmdExec(args [][]byte) {
	if !c.tx.active {
		c.w.Error("ERR EXEC without MULTI")
		return
	}
	tx := c.tx
	c.tx.reset()
	if tx.failed {
		c.w.Error("EXECABORT Transaction discarded because of previous errors.")
		return
	}
	c.w.Array(len(tx.cmds))
	for i, cmd := range tx.cmds {
		c.run(cmd, tx.args[i])
	}
}

func (c *conn) cmdDiscard(args [][]byte) {
	if !c.tx.active {
		c.w.Error("ERR DISCARD without MULTI")
		return
	}
	c.tx.reset()
	c.w.OK()
}

// cmdWatch: optimistic locking cannot be honoured (the cache has no
// per-key modification counter visible here), so WATCH is refused rather
// than silently ignored.
func (c *conn) cmdWatch(args [][]byte) {
	if c.tx.active {
		c.w.Error("ERR WATCH inside MULTI is not allowed")
		return
	}
	c.w.Error("ERR WATCH is not supported by tiercache (MULTI/EXEC only queue commands)")
}

func (c *conn) cmdUnwatch(args [][]byte) { c.w.OK() }

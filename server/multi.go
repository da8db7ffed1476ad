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
		c.w.Error(errMultiNested)
		return
	}
	c.tx.active = true
	c.showMulti()
	c.w.OK()
}

// cmdExec runs the queued commands back to back holding the transaction
// lock exclusively, so no other connection's command runs in between
// (S15), and replies with an array of their replies; a null array when a
// WATCHed key changed since WATCH, as in Redis (nothing runs then).
func (c *conn) cmdExec(args [][]byte) {
	if !c.tx.active {
		c.w.Error(errExecNoMulti)
		return
	}
	tx := c.tx
	c.tx.reset()
	c.showMulti()
	if tx.failed {
		c.unwatch()
		c.w.Error(errExecAbort)
		return
	}
	if c.s.opts.Cluster && c.execCrossSlot(&tx) {
		return
	}
	c.s.tx.excl.Lock()
	for c.s.pause.on.Load() && c.txPausedSince(&tx) {
		// A pause began while it waited for the lock (S97): held as the
		// EXEC it is, then it looks again.
		c.s.tx.excl.Unlock()
		c.tx = tx
		ok := c.holdWhilePaused(c.cmd, args)
		c.tx.reset()
		if !ok {
			return
		}
		c.s.tx.excl.Lock()
	}
	defer c.s.tx.excl.Unlock()
	if c.isKilled() { // while it waited: nothing runs after CLIENT KILL answered (S54)
		return
	}
	broken := c.watchBroken()
	c.unwatch() // as Redis: the keys are unwatched before the commands run
	if broken {
		c.w.NullArray()
		return
	}
	c.w.Array(len(tx.cmds))
	c.inExec = true // a blocking command answers at once (block); pushes wake after
	defer func() {
		c.inExec = false
		c.execWakes()
		c.servedEvents() // the clients its pushes served, after its commands' events
		c.flushEvents()
	}()
	for i, cmd := range tx.cmds {
		c.runWrite(cmd, tx.args[i])
	}
	c.refused = false // its last command's refusal is not EXEC's (countCall, MONITOR)
}

func (c *conn) cmdDiscard(args [][]byte) {
	if !c.tx.active {
		c.w.Error(errDiscardNoMulti)
		return
	}
	c.tx.reset()
	c.showMulti()
	c.unwatch()
	c.w.OK()
}

// cmdWatch: WATCH key... (not inside MULTI).
func (c *conn) cmdWatch(args [][]byte) {
	if c.tx.active {
		c.w.Error(errWatchInMulti)
		return
	}
	for _, k := range args[1:] {
		c.watch(k)
	}
	c.w.OK()
}

func (c *conn) cmdUnwatch(args [][]byte) {
	c.unwatch()
	c.w.OK()
}

package server

// WAIT numreplicas timeout answers how many replicas acknowledged the
// client's writes: tiercache has none, so it answers as a redis-server
// 7.0 master without replicas (replication.c waitCommand): 0 at once
// when numreplicas ≤ 0 or inside MULTI (where nothing blocks); otherwise
// 0 once timeout milliseconds pass, never when the timeout is 0. The
// wait is a waiter on no key in the blocking registry (block.go), so it
// ends as a blocked BLPOP does on CLIENT KILL, CLIENT UNBLOCK (TIMEOUT
// answers 0), a hangup and a shutdown.
// WAIT is noscript, as in Redis.

// cmdWait: WAIT numreplicas timeout → 0.
func (c *conn) cmdWait(args [][]byte) {
	n, ok := c.intArg(args[1])
	if !ok {
		return
	}
	d, msg := parseTimeoutMs(args[2])
	if msg != "" {
		c.w.Error(msg)
		return
	}
	if n <= 0 || c.inExec { // 0 replicas acknowledged ≥ numreplicas, or it may not block
		c.w.Int(0)
		return
	}
	w := &waiter{wait: true, ch: make(chan blockResult, 1)}
	if !c.s.blk.addAlone(c, w) {
		c.w.Int(0)
		return
	}
	c.blocked, c.blockFor = w, d
}

// addAlone registers w, a waiter on no key, for c; false when the server
// is closing or c was killed (nothing would end the wait).
func (r *blockRegistry) addAlone(c *conn, w *waiter) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || c.isKilled() {
		return false
	}
	r.waiting.Add(1)
	r.add(w)
	c.waiter = w
	return true
}

// timedOut answers a waiter whose timeout passed: WAIT the replicas that
// acknowledged (none), a blocking pop a nil array.
func (c *conn) timedOut(w *waiter) {
	if w.wait {
		c.w.Int(0)
		return
	}
	c.w.NullArray()
}

package server

// cmdReset: RESET, as Redis 7.0's resetCommand and
// clearClientConnectionState (networking.c): MULTI is discarded and every
// key unwatched, every channel, pattern and shard channel left without a
// notification, tracking turned off, MONITOR ended, RESP2 again, the name CLIENT SETNAME
// gave cleared, CLIENT REPLY OFF and a SKIP asked for undone (a SKIP in
// effect still drops RESET's own +RESET), and a connection of a listener
// that requires AUTH (TCP, S7) must AUTH again; SELECT 0 is the only
// database anyway.
// It runs at once inside MULTI and on a subscribed RESP2 connection,
// before AUTH, while loading and beside a busy script, as in Redis. Redis
// 7.0 keeps CLIENT NO-EVICT (7.2 clears it) and the library's name and
// version.
func (c *conn) cmdReset(args [][]byte) {
	c.tx.reset()
	c.showMulti()
	c.unwatch()
	if c.subs.Load() > 0 {
		c.s.ps.Leave(c.push)
		c.subs.Store(0)
	}
	if c.trk != nil {
		c.s.trk.forget(c)
	}
	c.leaveMonitor() // as Redis 7.0's clearClientConnectionState
	c.monitoring.Store(false)
	c.w.SetProto(2)
	c.push.resp3.Store(false)
	c.setMeta(func(m *clientMeta) {
		m.name = ""
		m.proto = 2
	})
	if c.needAuth {
		c.authed = false
		c.rd.SetPreAuth(true)
		c.out.SetPreAuth(true)
	}
	c.reply &^= replyOff | replySkipNext // not replySkip: a skipped RESET is not answered, as in Redis 7.0
	c.w.Mute(c.reply != 0)
	c.w.Simple("RESET")
}

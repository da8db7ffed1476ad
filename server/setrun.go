package server

// setRun runs the SETs of a key to a value, with no option, wholly
// buffered behind a SET, without ReadCommand's general parse, the command
// table's lookup and dispatch's checks: Reader.NextSet parses exactly that
// form, and what dispatch checks (authentication, loading, MULTI, a
// subscribed RESP2 client, a busy script, the cluster's slots of one key)
// cannot have changed since the SET before it, which passed them under the
// same shared transaction lock. Each SET then runs as one from dispatch
// does (runWrite: its WATCHed keys, keyspace hooks, tracking, its latency
// run), so replies, errors, limits and state are those of the SETs one by
// one (S52). The BCAST invalidations of the SET before go out before the
// next SET runs, as dispatch sends them after each command (the SET
// dispatch ran is the first; dispatch sends the last's). A push waiting
// for this client then ends the run, so that it goes out before the next
// SET's reply as dispatch sends it.
func (c *conn) setRun() {
	args := c.setArgv[:]
	for {
		c.s.trk.flushBcast()
		if c.quit || c.blocked != nil || c.push.pending.Load() || c.s.pause.on.Load() {
			break // a pause: the next SET goes through dispatch, which holds it (S97)
		}
		name, key, val, ok := c.rd.NextSet()
		if !ok {
			break
		}
		args[0], args[1], args[2] = name, key, val // counted by runWrite's run (countCall)
		c.runWrite(c.s.set, args)
	}
	clear(args) // they point into the read buffer
}

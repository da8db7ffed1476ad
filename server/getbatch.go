package server

// getRun answers the one-key GETs buffered right behind a GET without
// ReadCommand and dispatch: Reader.NextGet parses exactly that form, so a
// pipelined run of GETs, what a cache is sent most, costs a few compares
// per GET to parse and no command lookup. Once one of them has read the
// cold device, the rest of the run goes to getBatch. Each GET counts as a
// command; the run's GETs share its time (one clock read per run), and
// the cache's time too: the run's start, read again every
// getRunClockEvery GETs.
func (c *conn) getRun() {
	if c.rd.Buffered() == 0 || c.s.mon.list.Load() != nil {
		// Nothing pipelined behind it; or each GET goes through dispatch,
		// shown to the monitors (run, execMonitored).
		c.coldGet = false
		return
	}
	n := 0
	var now int64
	var last []byte
	errs := c.w.Errors()
	for !c.coldGet && !c.s.pause.on.Load() { // a pause: each GET through dispatch (S97)
		key, ok := c.rd.NextGet()
		if !ok {
			break
		}
		c.st.commands.Add(1)
		switch {
		case n%getRunClockEvery != 0:
		case n == 0 && c.s.timing.Load() && c.timedReads == c.rd.Reads():
			now = c.s.cache.NowOf(c.s.start.Add(c.mark)) // read before the GET before the run, or after the command before it
		default:
			now = c.s.cache.Now()
		}
		c.getKey(key, now)
		last = key
		n++
	}
	if n > 0 {
		c.countGets(n, errs)
		c.observeBatch(n, last)
	}
	if c.coldGet {
		c.coldGet = false
		c.getBatch()
	}
}

// getRunClockEvery is how many GETs of a run take the cache's time from
// one clock read: a GET's expiry check is at most that many GETs late
// (a few microseconds), as Redis's is by its command time snapshot.
const getRunClockEvery = 16

// getBatch answers the GETs a client pipelined behind a GET that had to
// read the cold device. Answered one by one, each would wait for its own
// device read (a few hundred µs on an SSD) while the next sat in the
// buffer; taken together they go to the cache as one MGet, whose cold
// lookups reach the device in one submission and overlap. Only GETs
// already received and wholly buffered are taken (Reader.NextGet), in
// order, stopping at the first other command, so replies keep the order of
// the requests and nothing waits for more input. Values are held at most
// Options.ColdGetBatchBytes at a time (MGetPrefixAny); each GET is counted
// and observed as one command, its time the batch's share.
func (c *conn) getBatch() {
	limit := c.s.opts.ColdGetBatch
	if limit < 1 {
		return
	}
	keys := c.batch[:0]
	for len(keys) < limit {
		k, ok := c.rd.NextGet()
		if !ok {
			break
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return
	}
	c.s.stats.getBatches.Add(1)
	c.s.stats.getBatched.Add(uint64(len(keys)))
	defer c.countGets(len(keys), c.w.Errors())
	for rest := keys; len(rest) > 0; {
		vals, kinds, n, err := c.s.cache.MGetPrefixAnyIn(&c.getChunks, rest, int64(c.s.opts.ColdGetBatchBytes))
		if err != nil || n < 1 {
			for range rest {
				c.st.commands.Add(1)
				if err != nil {
					c.cacheError(err)
				} else {
					c.w.Error(errEmptyGetBatch)
				}
			}
			break
		}
		for i, v := range vals[:n] {
			c.st.commands.Add(1)
			if kinds[i] != kindString {
				c.w.Error(errWrongType)
			} else if v == nil {
				c.st.misses.Add(1)
				c.w.Null()
			} else {
				c.st.hits.Add(1)
				c.w.Bulk(v)
			}
		}
		c.getChunks.Release() // Bulk copied them
		c.observeBatch(n, rest[n-1])
		rest = rest[n:]
	}
	clear(keys) // they point into the read buffer
	c.batch = keys[:0]
}

// observeBatch records n GETs answered together, and the GETs run left to
// observe with them (observeLater), each with an equal share of the time
// since mark; for the slow log the run is the GET of key, the last one,
// spelled as the GET before the run was (the kept arguments).
func (c *conn) observeBatch(n int, key []byte) {
	if !c.s.timing.Load() || c.timedReads != c.rd.Reads() { // mark is this read's
		return
	}
	if c.pending > 0 && c.pendingCmd != c.s.get {
		c.observePending(nil)
	}
	c.pendingCmd = c.s.get
	c.pending += n
	c.getArgv = [2][]byte{getName, key}
	if len(c.kept) > 0 {
		c.getArgv[0] = c.kept[0]
	}
	c.observePending(c.getArgv[:])
	c.getArgv = [2][]byte{}
}

// getName names a run's GETs in the slow log when the first one's
// spelling is not at hand.
var getName = []byte("GET")

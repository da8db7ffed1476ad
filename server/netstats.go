package server

import "sync/atomic"

// ioCounters are one client socket's traffic, INFO's total_net_input_bytes,
// total_net_output_bytes, total_reads_processed and total_writes_processed
// (redis-server 7.0 counts them in readQueryFromClient and writeToClient,
// networking.c): the bytes read and written, the reads that returned bytes
// and the writes that sent some. They are counted per system call, not per
// command, by the goroutine using the socket (its connection's, or the
// pusher's while the connection is idle), each counter on the connection's
// own cache lines; Server.ioTotals sums them with the closed connections'.
type ioCounters struct {
	inBytes, outBytes, reads, writes atomic.Uint64
}

// read counts a read of n bytes (none: EAGAIN, EOF or an error).
func (c *ioCounters) read(n int) {
	if n > 0 {
		c.reads.Add(1)
		c.inBytes.Add(uint64(n))
	}
}

// wrote counts a write that sent n bytes (none: EAGAIN or an error).
func (c *ioCounters) wrote(n int) {
	if n > 0 {
		c.writes.Add(1)
		c.outBytes.Add(uint64(n))
	}
}

// ioTotals are the server's traffic and commands so far, cumulative: the
// closed connections' totals and the open ones' counters.
type ioTotals struct {
	commands, hits, misses           uint64
	inBytes, outBytes, reads, writes uint64
}

// addConn adds the counters of c.
func (t *ioTotals) addConn(c *conn) {
	t.commands += c.st.commands.Load()
	t.hits += c.st.hits.Load()
	t.misses += c.st.misses.Load()
	if o := c.out; o != nil {
		t.inBytes += o.io.inBytes.Load()
		t.outBytes += o.io.outBytes.Load()
		t.reads += o.io.reads.Load()
		t.writes += o.io.writes.Load()
	}
}

// closedTotals are the counters of the connections that closed (untrack
// moves each one's there, under Server.mu).
type closedTotals struct {
	commands, hits, misses           atomic.Uint64
	inBytes, outBytes, reads, writes atomic.Uint64
}

// add moves c's counters into the totals.
func (k *closedTotals) add(c *conn) {
	var t ioTotals
	t.addConn(c)
	k.commands.Add(t.commands)
	k.hits.Add(t.hits)
	k.misses.Add(t.misses)
	k.inBytes.Add(t.inBytes)
	k.outBytes.Add(t.outBytes)
	k.reads.Add(t.reads)
	k.writes.Add(t.writes)
}

// ioTotals sums the closed connections' counters and the open ones'. It
// holds mu, as untrack does when it moves a closing connection's counters
// to the totals, so each is counted once and the sums never go back.
func (s *Server) ioTotals() ioTotals {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := &s.stats.closed
	t := ioTotals{commands: k.commands.Load(), hits: k.hits.Load(), misses: k.misses.Load(),
		inBytes: k.inBytes.Load(), outBytes: k.outBytes.Load(), reads: k.reads.Load(), writes: k.writes.Load()}
	for c := range s.conns {
		t.addConn(c)
	}
	return t
}
